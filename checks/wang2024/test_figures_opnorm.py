"""The Jacobian-norm path of Wang et al.'s MNIST-size figure runs (theory.papers.wang2024.figures.hidden_opnorm):
for min(m, d) > GRAM_MAX it takes ‖D(x)W‖₂ from the core's Lanczos (theory.sim.jacobian.lanczos_top_eig) with
closed-form matrix–vector products (figures._lanczos_opnorm) instead of the autograd products of
theory.sim.jacobian.opnorm. This check runs that path on both Gram sides (d ≤ m and m < d) and compares it with
opnorm's exact method (dense jacrev + SVD) and with opnorm's default method, member by member; and both again at
Jacobian norms scaled by 2^±30 (fixtures.controls.OPNORM_SCALES), where a stop on an absolute change would fail.

Tolerance: the Lanczos stops when the Ritz residual puts λ_max = σ² within LANCZOS_TOL = 1e-10 (relative),
so σ is within 5e-11; 1e-9 leaves a 20× margin (fixtures.wang2024.OPNORM_LANCZOS_TOL)."""
from __future__ import annotations

import pytest
import torch

from fixtures import wang2024 as fw
from fixtures.controls import OPNORM_SCALES, clustered_top, opnorm_scale_control
from theory.papers.wang2024 import figures as F
from theory.sim import activations
from theory.sim import jacobian as jac


@pytest.mark.claim("wang2024/fig-6")
def test_figure_lanczos_path_matches_exact_opnorm(record):
    gen = record.generator({"opnorm path": "figures"})
    rows, worst = [], 0.0
    for m, d in ((48, 40), (36, 60)):  # d ≤ m (Gram side in R^d) and m < d (side in R^m), both > GRAM_MAX
        assert min(m, d) > F.GRAM_MAX
        W = torch.randn(3, m, d, generator=gen, dtype=torch.float64, device=gen.device) / d ** 0.5
        X = torch.randn(10, d, generator=gen, dtype=torch.float64, device=gen.device)
        X = X / X.norm(dim=1, keepdim=True)
        lz, it = F._lanczos_opnorm(W, X, fw.RELU)
        # the same path on c·W, c = 2^±30 (exact in floating point; the ReLU mask is unchanged for c > 0, so
        # ‖D(x)cW‖₂ = c‖D(x)W‖₂): a stop relative to λ_max is scale-invariant, one on an absolute number is not
        lz_c = {c: F._lanczos_opnorm(c * W, X, fw.RELU)[0] / c for c in OPNORM_SCALES}
        hid, _ = F.hidden_opnorm(W, X, fw.RELU, budget_bytes=1.0)  # one member per chunk
        for e in range(W.shape[0]):
            f = lambda x, We=W[e]: fw.RELU(We @ x)
            ex = jac.opnorm(f, X, method="exact")
            de = jac.opnorm(f, X)
            gaps = {"figures Lanczos vs exact": float(((lz[e] - ex) / ex).abs().max()),
                    "hidden_opnorm (chunked) vs exact": float(((hid[e] - ex) / ex).abs().max()),
                    "opnorm default vs exact": float(((de - ex) / ex).abs().max()),
                    "figures Lanczos on c*W, /c, vs exact (c = 2^±30)":
                        max(float(((v[e] - ex) / ex).abs().max()) for v in lz_c.values())}
            if e == 0:  # opnorm's default on c·f against the exact SVD of c·f (fixtures.controls)
                sctl = opnorm_scale_control(f, X)
                gaps["opnorm default on c*f vs exact (c = 2^±30)"] = sctl["default (lanczos) vs exact, scaled"]
                gaps["exact on c*f, /c, vs exact"] = sctl["exact scaled / c vs exact"]
            worst = max(worst, *gaps.values())
            rows.append({"m": m, "d": d, "member": e, "Lanczos iterations (max)": it, **gaps})
    # a top cluster (σ₁ − σ₂ = 1e-6, n = 100, linear σ so D(x)W = W): the figures' Lanczos must still reach σ₁ = 1, which
    # takes more than 64 iterations (the Krylov basis grows past its first block) at every point
    Wc = clustered_top(100, 1e-6, gen)
    Xc = torch.randn(12, 100, generator=gen, dtype=torch.float64, device=gen.device)
    lzc, itc = F._lanczos_opnorm(Wc[None], Xc / Xc.norm(dim=1, keepdim=True), activations.get("linear"))
    gap_c = float((lzc - 1).abs().max())
    worst = max(worst, gap_c)
    rows.append({"m": 100, "d": 100, "member": "top cluster σ₁ − σ₂ = 1e-6 (linear)", "Lanczos iterations (max)": itc,
                 "figures Lanczos vs exact": gap_c})
    assert itc > 64, itc
    ok = worst <= fw.OPNORM_LANCZOS_TOL
    # a control of the code path behind ϱ in the MNIST-size runs, not a record of the claim: asserted, never recorded
    assert ok, rows


@pytest.mark.claim("wang2024/fig-6")
def test_figure_lanczos_path_rejects_wrong_norm(record):
    """Companion: at the same 1e-9 tolerance the comparison rejects the Frobenius norm ‖D(x)W‖_F (a wrong
    Def. 3.2 norm), computed here directly from W and the ReLU mask, and the norm without the mask (‖W‖₂)."""
    gen = record.generator({"opnorm path": "figures", "wrong": 1})
    m, d = 48, 40
    W = torch.randn(1, m, d, generator=gen, dtype=torch.float64, device=gen.device) / d ** 0.5
    X = torch.randn(10, d, generator=gen, dtype=torch.float64, device=gen.device)
    X = X / X.norm(dim=1, keepdim=True)
    lz, _ = F._lanczos_opnorm(W, X, fw.RELU)
    mask = (X @ W[0].T >= 0).to(W.dtype)  # σ'(z) = 1{z ≥ 0}
    wrong = {"Frobenius": (mask.unsqueeze(-1) * W[0]).flatten(1).norm(dim=-1),
             "no mask": torch.linalg.matrix_norm(W[0], ord=2).expand(10)}
    gaps = {k: float(((lz[0] - v) / v).abs().max()) for k, v in wrong.items()}
    rejected = all(g > 1e3 * fw.OPNORM_LANCZOS_TOL for g in gaps.values())
    record("holds" if rejected else "violated", role="companion", observed=min(gaps.values()),
           bound=fw.OPNORM_LANCZOS_TOL, tightness="smallest gap of a wrong norm to the Lanczos path (rejected when ≫ 1e-9)",
           table=[{"variant": k, "max rel. gap": g} for k, g in gaps.items()])
    assert rejected, gaps
