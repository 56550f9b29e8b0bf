"""Lazy regime (catalog ``zhu2022/lem-4``, ``zhu2022/thm-1``): the Lemma-4 deviation shape and
the relative weight movement that decides whether a run is lazy.

Lemma 4 (reconstructed): E‖(J_T − J_0)(x − x̂)‖ ≤ ε · O(√(π L³ (m+1)/(4u)) · e^{−m²/((m+1)L³)}),
u absorbing β_1 β_L γ^{L−2}; from the rescaling argument the deviation carries the init term's
factor β_1 β_L γ^{L−2} √m (catalog). :func:`lemma4_shape` is that shape without its constant.
"""
from __future__ import annotations

import math

import torch

LAZY_MAX_REL_CHANGE = 0.1  # notes: call a run lazy only if max_l ‖ΔW_l‖_F/‖W_l(0)‖_F ≤ 0.1


def lemma4_shape(m: int, L: int, beta1: float, betaL: float, gam: float) -> float:
    """g(m, L) = √(L³(m+1)) e^{−m²/((m+1)L³)} · β_1 β_L γ^{L−2} √m (constant left out)."""
    return (math.sqrt(L ** 3 * (m + 1)) * math.exp(-m * m / ((m + 1) * L ** 3))
            * beta1 * betaL * gam ** (L - 2) * math.sqrt(m))


def lemma4_log_shape(m: int, L: int, beta1: float, betaL: float, gam: float) -> float:
    """log g(m, L), finite where g itself underflows (e^{−m/L³} < 1e-308 for m ≳ 700 L³)."""
    return (0.5 * math.log(L ** 3 * (m + 1)) - m * m / ((m + 1) * L ** 3)
            + math.log(beta1 * betaL) + (L - 2) * math.log(gam) + 0.5 * math.log(m))


def rel_change(w0: list[torch.Tensor], w1: list[torch.Tensor]) -> torch.Tensor:
    """max_l ‖W_l(T) − W_l(0)‖_F / ‖W_l(0)‖_F per ensemble member, (E,)."""
    r = [((b - a).flatten(1).norm(dim=1) / a.flatten(1).norm(dim=1)) for a, b in zip(w0, w1)]
    return torch.stack(r).amax(0)


def within_borrowed_lemmas(m: int, L: int) -> bool:
    """Whether width m at depth L lies in the range of the Allen-Zhu–Li–Song perturbation lemmas that Lemma 4's proof
    borrows: an integer s ≥ 1 with s ≲ m/(L³ log m), i.e. m ≥ L³ ln m with the unspecified constants set to 1.

    Cells below it are outside Lemma 4's (hence Theorem 1's lazy term's) hypotheses: reported, never held against
    the paper. Note that the width range where Theorem 1's width trade-off has the lazy term rise (m ≲ L³/2) lies
    entirely below it."""
    return m >= L ** 3 * math.log(m)
