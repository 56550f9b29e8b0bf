"""Exact s*(2)² for integer data in d = 2, in rational arithmetic (reference for ``prop-3.2``'s exact s*(2)).

s*(2) = max_{‖w‖=1} |Σ_j G_j σ(x_jᵀw)| (the depth-2 optimum, one hidden neuron on the sphere). Written
apart from the production enumeration (``example1.exact_s2_enumerated``, which works with float angles
and evaluates candidate points): here everything is integer vectors and fractions, no angle and no sqrt.

The kink directions ±x_j^⊥ cut the circle into arcs (each shorter than a half circle unless the data are
collinear). On the arc between consecutive kinks p, q the pattern S = {j : x_jᵀ(p + q) > 0} is constant
(p + q points strictly inside the arc) and f(w) = |m_Sᵀw| with m_S = Σ_{j∈S} G_j x_j, so its maximum over
the closed arc is ‖m_S‖ when ±m_S lies in the cone spanned by p and q, and otherwise the larger endpoint
value (m_Sᵀp)²/‖p‖² (squared). The maximum over the arcs is s*(2)², an exact Fraction.
"""
from __future__ import annotations

from fractions import Fraction
from functools import cmp_to_key


def _cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1]


def _upper(p):
    """0 for the half plane of angles [0, π), 1 for [π, 2π)."""
    return 0 if (p[1] > 0 or (p[1] == 0 and p[0] > 0)) else 1


def _by_angle(a, b):
    return (_upper(a) - _upper(b)) or (-1 if _cross(a, b) > 0 else 1)


def kink_directions(X):
    """The distinct directions ±x_j^⊥ (integer vectors), in counter-clockwise order."""
    out = []
    for x in X:
        if x == (0, 0):
            continue
        for p in ((-x[1], x[0]), (x[1], -x[0])):
            if not any(_cross(p, q) == 0 and _dot(p, q) > 0 for q in out):
                out.append(p)
    return sorted(out, key=cmp_to_key(_by_angle))


def s2_squared(X, G, endpoints_only: bool = False) -> Fraction:
    """s*(2)² exactly for integer X (rows (a, b)) and integer G; ``endpoints_only`` drops the interior maxima
    (a deliberately wrong version, for the companion row)."""
    X = [(int(a), int(b)) for a, b in X]
    G = [int(g) for g in G]
    ks = kink_directions(X)
    if len(ks) < 4:
        raise ValueError("collinear data: the arcs would be half circles")
    best = Fraction(0)
    for i, p in enumerate(ks):
        q = ks[(i + 1) % len(ks)]
        assert _cross(p, q) > 0          # consecutive kinks less than π apart
        inside = (p[0] + q[0], p[1] + q[1])
        m = (sum(g * x[0] for x, g in zip(X, G) if _dot(x, inside) > 0),
             sum(g * x[1] for x, g in zip(X, G) if _dot(x, inside) > 0))
        vals = [Fraction(_dot(m, e) ** 2, _dot(e, e)) for e in (p, q)]
        if not endpoints_only:
            for v in (m, (-m[0], -m[1])):
                if _cross(p, v) >= 0 and _cross(v, q) >= 0:
                    vals.append(Fraction(_dot(m, m)))
        best = max(best, *vals)
    return best
