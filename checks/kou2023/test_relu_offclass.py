"""Kou et al. (2023) Lemma E.2 / Corollary E.3: ReLU off-class coefficients vs own-class ones.

Printed: for t ≥ T₂, |ρ̲_{y_i,r,i'}| ≤ c·R_min⁻²pn·ρ̄_{y_i,r',i} (y_{i'} = −y_i, r' ∈ S_i^(0)). For p = 0 the
right side is 0 while neurons active on x_{i'} at init keep |ρ̲| > 0: false (expected failure).
The derived constant-free form of (E.24), valid at every t, is checked at *every* step (every_step hook
:class:`theory.papers.kou2023.dynamics.OffclassE24`):
|ρ_{j,r,i'}| ≤ [⟨w_{j,r}(0),x_{i'}⟩]_+ + η‖x_{i'}‖²/(nm) + Σ_{k≠i'}|ρ_{j,r,k}||⟨x_k,x_{i'}⟩|/‖x_k‖²  (j = −y_{i'}),
with the wrong version without the η‖x_{i'}‖²/(nm) term as companion, for p = 0.005 (C0-R) and p = 0.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from theory import ClaimViolation, assert_claim
from theory.papers.kou2023 import dynamics as kd
from theory.papers.kou2023 import setup as ks

from ._rates_runs import relu_c0r, relu_c0r_config

CLAIMS = ("kou2023/lem-E.2", "kou2023/cor-E.3")
TREND_MAX = 1.1  # p > 0: the ratio / ε must not grow over the last decade (bounded, implied ĉ settles)


@functools.lru_cache(maxsize=4)
def _run(key, ctx, p):
    """C0-R at level p with the (E.24) hook at every step (2·10⁴ steps quick; 2·10⁵ full, catalog R1:
    the per-step hook makes the Python loop the cost)."""
    cfg = relu_c0r_config(ctx, p).replace(steps=ctx.pick(quick=20_000, full=200_000))
    data = ks.make_data(cfg, ctx.generator("kou2023/lem-E.2", cfg.key()), device=ctx.device)
    net = ks.make_net(cfg, data, ctx.generator("kou2023/lem-E.2", cfg.key("init")))
    Z0 = ks.preact0(net, data)
    eta = torch.full((cfg.E,), ks.default_eta(cfg, data), dtype=data.X.dtype, device=data.X.device)
    hook = kd.OffclassE24(Z0, data.G, data.norms2, data.y, eta, cfg.n, cfg.m)
    return ks.simulate(cfg, data, net, eta=eta, track=True, every_step=hook, observe=("rho", "loss"))


def offclass_run(ctx, p: float) -> ks.KouRun:
    return _run((ctx.profile, ctx.seed, str(ctx.device)), ctx, p)


def _ratio(run) -> np.ndarray:
    """max_{i', r; y_i' = −j}|ρ̲_{j,r,i'}| / min_{i, r' ∈ S_i^(0)} ρ̄_{y_i,r',i} per grid point t ≥ 1, (T−1, E)."""
    data, rho = run.data, run.rho[1:]
    off = (data.jy < 0).view(1, 1, 2, 1, -1)
    own = torch.where(data.y > 0, rho[:, :, 0], rho[:, :, 1])  # (T, E, m, n)
    own_min = torch.where(run.S0, own, torch.full_like(own, np.inf)).amin(-2).amin(-1)
    off_max = torch.where(off.expand_as(rho), rho.abs(), torch.zeros_like(rho)).flatten(2).amax(-1)
    return (off_max / own_min).cpu().numpy()


@pytest.mark.claim("kou2023/lem-E.2")
@pytest.mark.claim("kou2023/cor-E.3")
@pytest.mark.parametrize("p", [0.005, 0.0], ids=["p0.005", "p0"])
def test_offclass_sharpened_e24(ctx, record, p):
    """Sharpened (E.24) at every step: 0 violations (companion: without the η‖x‖²/(nm) term it must fail).
    For p > 0 also the printed ratio max|ρ̲|/min ρ̄ over ε: it must settle (tail trend over the last
    decade ≤ 1.1), giving the implied constant ĉ of the lemma."""
    run = offclass_run(ctx, p)
    h = run.hook_out
    viol, viol_wrong = int(h.viol.sum()), int(h.viol_wrong.sum())
    eps = run.data.stats.epsilon
    t = run.t[1:]
    r = _ratio(run)
    k10 = int(np.searchsorted(t, t[-1] / 10))
    trend = float((r[-1] / r[k10]).max())
    ok_ratio = True if p == 0 else trend <= TREND_MAX
    ok = viol == 0 and ok_ratio
    conf = run.cfg.as_dict() | {"steps_checked": h.steps}
    if p > 0:
        chat = float(r[-1].max() / eps)
        tight = (f"sharpened (E.24): {viol} violations over {h.steps} steps × {run.cfg.E} seeds (max lhs/rhs "
                 f"{float(h.max_ratio.max()):.4f}); printed ratio/ε at T: {(r[-1] / eps).round(3).tolist()} (implied ĉ ≈ "
                 f"{chat:.2f}), at T/10: {(r[k10] / eps).round(3).tolist()}, tail trend {trend:.3f} (≤ {TREND_MAX} required)")
    else:
        tight = (f"sharpened (E.24): {viol} violations over {h.steps} steps × {run.cfg.E} seeds (max lhs/rhs "
                 f"{float(h.max_ratio.max()):.4f}); p = 0: the printed ratio is judged in the expected-failure test")
    for cid in CLAIMS:
        record("holds" if ok else "violated", claim=cid, observed=float(h.max_ratio.max()), bound=1.0,
               config=conf, hypotheses=run.hyp, tightness=tight,
               note="(E.24) evaluated at every step (every_step hook), not only on the grid",
               series={"ratio / ε (seed 0)" if p > 0 else "ratio (seed 0)": {
                   "x": t.tolist(), "y": (r[:, 0] / (eps if p > 0 else 1.0)).tolist(), "xlabel": "step t",
                   "ylabel": "max|ρ̲| / (ε min ρ̄)" if p > 0 else "max|ρ̲| / min ρ̄", "logx": True, "logy": p == 0}})
        record("holds" if viol_wrong > 0 else "violated", claim=cid, role="companion", observed=viol_wrong, bound=0,
               config=conf, note=(f"(E.24) without the η‖x_i'‖²/(nm) term: {viol_wrong} violations over the same steps "
                                  f"(rejected: {viol_wrong > 0})"))
    assert viol_wrong > 0  # the check can fail: the bound without its step term is violated
    assert ok, (viol, trend)


@pytest.mark.claim("kou2023/lem-E.2")
@pytest.mark.claim("kou2023/cor-E.3")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="Lemma E.2 / Cor. E.3 are false for p = 0: the right side is 0 while off-class neurons "
                          "active at init keep |ρ̲| > 0")
def test_offclass_printed_statement_fails_for_p0(ctx, record):
    """p = 0 (D-G with p = 0, orthonormal rows): the printed inequality needs |ρ̲| ≤ 0 for t ≥ T₂; measured
    max|ρ̲|/min ρ̄ stays > 0 (decaying like 1/log t) up to the horizon. (The grid run of the shared rate runs,
    not the every-step run of the (E.24) check: under xdist that one may live in another worker.)"""
    run = relu_c0r(ctx, 0.0)
    assert run.data.stats.p <= 1e-12  # precondition: orthogonal data (D-G(0): p is rounding, ~1e-16)
    r = _ratio(run)
    t = run.t[1:]
    tail = r[-1]
    k10 = int(np.searchsorted(t, t[-1] / 10))
    slope = float(np.polyfit(1 / np.log(t[k10:]), r[k10:, 0], 1)[0])
    for cid in CLAIMS:
        record("expected-failure", claim=cid, observed=float(tail.min()), bound=0.0, config=run.cfg.as_dict(),
               hypotheses=run.hyp,
               tightness=f"ratio at T/10 {r[k10].round(4).tolist()}, at T {tail.round(4).tolist()}",
               finding=(f"For p=0 the printed bound is 0, but max|ρ̲|/min ρ̄ = {tail.min():.4f}–{tail.max():.4f} > 0 "
                        f"at t={int(t[-1])} (it decays like 1/log t — fitted slope against 1/log t {slope:.3f} on the "
                        f"last decade — and is never 0)"))
    assert_claim(float(tail.max()) <= 0.0, f"printed Lemma E.2 at p=0 needs max|ρ̲| = 0; measured ratio {tail.max():.4g}")
