"""Theorem 1 at t = 0 (catalog ``zhu2022/thm-1``, through Lemma 5): one cell's P(f_0, ε)/ε, and its size.

A cell is E independent Eq.-(2) networks [d, m, …, m, 1] of depth L under one initialisation scheme; its
P(f_0, ε) = c_d ε E‖∇_x f_0(x)‖ (:func:`~theory.papers.zhu2022.perturbation.stability_scalar`) is averaged over the
members. :func:`cell_size` gives a cell's peak memory and FLOPs from shapes alone, so that ``python -m theory plan``
can size the check (it calls no trainer) and a CUDA run can place it (issue 33: the full profile's m = 1024, L = 10
cell of E = 400 holds 25 GiB of weights and costs 1.3·10¹³ FLOPs; the whole sweep, 2·10¹⁴, is about 66 minutes on
2 CPU cores at the 51 GFLOP/s measured there).
"""
from __future__ import annotations

from theory.papers.zhu2022 import perturbation as pt
from theory.papers.zhu2022 import schemes


def p0_over_eps(E: int, d: int, m: int, L: int, scheme: str, X, eps: float, *, generator=None, device=None,
                max_bytes: int = pt.GRAD_CHUNK_BYTES):
    """P(f_0, ε)/ε of one cell, averaged over its E members, with the cell's nets and input gradients (E, N, d).

    The nets are drawn from ``generator`` (:func:`schemes.build`, o = 1) and the gradients taken by
    :func:`~theory.papers.zhu2022.perturbation.input_grads` in row chunks within ``max_bytes``. A caller looping
    over cells should drop the previous cell's nets and gradients before the next call (two nets of the largest
    cell at once were the H200's 53 GiB peak)."""
    net = schemes.build(E, d, m, L, 1, scheme, generator=generator, dtype=X.dtype, device=device)
    grads = pt.input_grads(net, X, max_bytes=max_bytes)
    return float(pt.stability_scalar(grads, eps).mean()) / eps, net, grads


def cell_size(E: int, N: int, d: int, m: int, L: int, itemsize: int = 8,
              max_bytes: int = pt.GRAD_CHUNK_BYTES) -> dict:
    """Peak bytes and FLOPs of :func:`p0_over_eps` from shapes (E members, N inputs of dimension d, width m, depth
    L ≥ 2): the keyword arguments of :func:`theory.cli.plan.declare` for one cell (one "step").

    Peak = itemsize × (E·P + max(E·m_l, rows·3·E·max(m, d)·L + 2·E·N·d)): the nets (P = d·m + (L − 2)·m² + m
    weights per member), and beside them the larger of the unscaled copy of the last layer drawn while the nets
    are built (E·m_l, m_l = m² for L > 2, else d·m) and one row chunk of :func:`pt.input_grads` (its kept
    activations, ``rows`` rows of 3·E·max(m, d)·L: :func:`pt.grad_chunk_rows`) with the gradients (E, N, d) and
    their chunks before they are concatenated. FLOPs: the forward pass and the input-only backward pass, 2·E·N·P
    each.

    >>> s = cell_size(400, 1000, 10, 1024, 10)
    >>> round(s["bytes"] / 2**30, 1), round(s["gflop_per_step"] / 1e3, 1)
    (28.2, 13.4)
    """
    from theory.cli.plan import shapes_text  # the plan's column format (theory.cli imports pytest: not at start-up)

    if min(E, N, d, m) < 1 or L < 2:
        raise ValueError(f"cell_size needs E, N, d, m >= 1 and L >= 2, got E={E}, N={N}, d={d}, m={m}, L={L}")
    P = d * m + (L - 2) * m * m + m
    rows, per_row = pt.grad_chunk_rows(E, max(m, d), L, N, itemsize, max_bytes)
    build = E * (m * m if L > 2 else d * m)
    grads = rows * per_row + 2 * E * N * d
    side, what = max((build, "the last layer's unscaled draw"),
                     (grads, f"input_grads ({rows} of {N} rows: 3·E·{max(m, d)}·L each) and ∇_x f (E, N, d)"))
    widths = [m] * (L - 1) + [1]
    return {"bytes": itemsize * (E * P + side), "gflop_per_step": 4.0 * E * N * P / 1e9, "steps": 1,
            "dominant": f"nets (E={E}, P={P}) + {what}",
            "shapes": shapes_text(E, N, [d] + widths)}


def sweep_size(E: int, N: int, d: int, widths, depths, repeats: int = 1, itemsize: int = 8,
               max_bytes: int = pt.GRAD_CHUNK_BYTES) -> dict:
    """The size of a sweep over the (m, L) cells, each run ``repeats`` times (once per initialisation scheme), one
    cell at a time: the largest cell's peak and FLOPs per step; ``steps`` is the whole sweep's FLOPs in units of
    that cell, rounded up.

    >>> sweep_size(400, 1000, 10, (64, 256, 1024), (2, 3, 4, 6, 8, 10), repeats=5)["steps"]
    15
    """
    cells = [cell_size(E, N, d, m, L, itemsize, max_bytes) for m in widths for L in depths]
    big = max(cells, key=lambda c: (c["bytes"], c["gflop_per_step"]))
    total = repeats * sum(c["gflop_per_step"] for c in cells)
    return {**big, "steps": max(1, -int(-total // big["gflop_per_step"]))}
