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
    """max_l ‖W_l(T) − W_l(0)‖_F / ‖W_l(0)‖_F per ensemble member, (E,), on the device of ``w1``; ``w0`` may be kept
    elsewhere (on the host, beside a GPU run): it is moved one layer at a time."""
    r = []
    for a, b in zip(w0, w1):
        a = a.to(b.device)
        r.append((b - a).flatten(1).norm(dim=1) / a.flatten(1).norm(dim=1))
    return torch.stack(r).amax(0)


def within_borrowed_lemmas(m: int, L: int) -> bool:
    """Whether width m at depth L lies in the range of the Allen-Zhu–Li–Song perturbation lemmas that Lemma 4's proof
    borrows: an integer s ≥ 1 with s ≲ m/(L³ log m), i.e. m ≥ L³ ln m with the unspecified constants set to 1.

    Cells below it are outside Lemma 4's (hence Theorem 1's lazy term's) hypotheses: reported, never held against
    the paper. Note that the width range where Theorem 1's width trade-off has the lazy term rise (m ≲ L³/2) lies
    entirely below it."""
    return m >= L ** 3 * math.log(m)


# The events Lemma 4's proof invokes that no run of the checks can decide: reported as "unknown" with these reasons.
LEMMA4_UNKNOWN_EVENTS = {
    "‖W'_l − W_l‖₂ ≤ ω for every l, ω in the borrowed lemmas' range": (
        "the admissible ω of the borrowed lemmas is an O(·) range in L and log m with unspecified constants (the OCR's "
        "condition is illegible), and the proof ties ω to the tail level δ; the sweep does not record ‖ΔW_l‖₂"),
    "events of Allen-Zhu, Li & Song (2019) Lemmas 7.4, 8.6, 8.7": (
        "probability 1 − exp(−Ω(s log m)) with unspecified constants; their conclusions bound ‖J' − J‖₂ up to O(·)"),
}


def hypothesis_status(m: int, L: int, rel_change: float) -> dict:
    """Hypothesis report of one lazy-sweep cell against Lemma 4's proof (hence Theorem 1's training term): the events a
    run can decide (lazy by the catalog criterion, m ≥ L³ ln m with the constants set to 1) and those it cannot
    (:data:`LEMMA4_UNKNOWN_EVENTS`). ``status`` is "outside" if a decidable event fails, else "unknown" (never "inside":
    the undecidable events are part of the hypotheses)."""
    ev = {"lazy (max_l ‖ΔW_l‖_F/‖W_l(0)‖_F ≤ 0.1, catalog criterion)": rel_change <= LAZY_MAX_REL_CHANGE,
          "m ≥ L³ ln m (s ≲ m/(L³ log m), constants 1)": within_borrowed_lemmas(m, L)}
    failed = [k for k, v in ev.items() if not v]
    return {"events": ev, "unknown events": dict(LEMMA4_UNKNOWN_EVENTS), "status": "outside" if failed else "unknown",
            "outside_reasons": failed}
