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

from ._rates_runs import relu_c0r_config

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = "kou2023/relu_offclass"

CLAIMS = ("kou2023/lem-E.2", "kou2023/cor-E.3")
# p > 0: "settled within the run" = the ratio's growth per decade, fitted by least squares on log t over the
# geometric grid of the last decade, is at most 10 % of its value at T. Above it the ratio is still rising
# at T: the printed statement allows T₂ (up to exp(Θ((β+1)/ε)) in the proof) beyond any finite run, so such a
# run is inconclusive for it, never a violation.
TREND_MAX = 0.10


@functools.lru_cache(maxsize=4)
def _run(key, ctx, p):
    """C0-R at level p with the (E.24) hook at every step (2·10⁴ steps quick; 2·10⁵ full, catalog R1:
    the per-step hook makes the Python loop the cost)."""
    cfg = relu_c0r_config(ctx, p).replace(steps=ctx.pick(quick=20_000, full=200_000))
    data = ks.make_data(cfg, ctx.generator("kou2023/lem-E.2", cfg.key()), device=ctx.device)
    # initialization on the events of Lemmas A.1 and A.2, on which Appendix E is stated
    net = ks.make_net(cfg, data, ctx.generator("kou2023/lem-E.2", cfg.key("init")), on_events=True)
    Z0 = ks.preact0(net, data)
    eta = torch.full((cfg.E,), ks.default_eta(cfg, data), dtype=data.X.dtype, device=data.X.device)
    hook = kd.OffclassE24(Z0, data.G, data.norms2, data.y, eta, cfg.n, cfg.m)
    return ks.simulate(cfg, data, net, eta=eta, track=True, every_step=hook, observe=("rho", "loss"))


def offclass_run(ctx, p: float) -> ks.KouRun:
    return _run((ctx.profile, ctx.seed, str(ctx.device)), ctx, p)


def decade_growth(r: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per member: the OLS slope of r on ln t over the grid points of the last decade (t ≥ T/10), times ln 10,
    over r(T): the fitted relative growth per decade at the end of the run, (E,)."""
    k10 = int(np.searchsorted(t, t[-1] / 10))
    u = np.log(np.asarray(t[k10:], dtype=float))
    slope = np.polyfit(u, r[k10:], 1)[0]
    return slope * np.log(10.0) / r[-1]


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
    For p > 0 also the printed ratio max|ρ̲|/min ρ̄ over ε, the implied constant ĉ of the lemma: "holds" when
    it has settled within the run (fitted growth over the last decade ≤ 10 % in every member), else
    inconclusive (still rising at T; the statement's T₂ may lie beyond the run)."""
    run = offclass_run(ctx, p)
    h = run.hook_out
    viol, viol_wrong = int(h.viol.sum()), int(h.viol_wrong.sum())
    eps = run.data.stats.epsilon
    t = run.t[1:]
    r = _ratio(run)
    k10 = int(np.searchsorted(t, t[-1] / 10))
    trend = float(decade_growth(r, t).max())
    settled = p == 0 or trend <= TREND_MAX
    ok = viol == 0
    conf = run.cfg.as_dict() | {"steps_checked": h.steps}
    chat = float(r[-1].max() / eps) if p > 0 else float("nan")
    if p > 0:
        tight = (f"sharpened (E.24): {viol} violations over {h.steps} steps × {run.cfg.E} seeds (max lhs/rhs "
                 f"{float(h.max_ratio.max()):.4f}); printed ratio/ε at T: {(r[-1] / eps).round(3).tolist()} (implied ĉ ≈ "
                 f"{chat:.2f}), at T/10: {(r[k10] / eps).round(3).tolist()}, fitted growth over the last decade {trend:+.3f} per decade "
                 f"(settled: ≤ {TREND_MAX})")
    else:
        tight = (f"sharpened (E.24): {viol} violations over {h.steps} steps × {run.cfg.E} seeds (max lhs/rhs "
                 f"{float(h.max_ratio.max()):.4f}); p = 0: the printed ratio is judged in the expected-failure test")
    assert run.hyp["inside"], run.hyp["outside_reasons"]  # precondition: inside Thm 4.3, on the A.1/A.2 events
    ins, why = ks.inside(run.hyp)
    # the proof's own constant for p > 0 (a proof step, beside the verdict): (E.24) |ρ̲| ≤ β + 1 + ε ρ̄/c₁ and, after the
    # T₂ at which min ρ̄ ≥ c₁(β+1)/ε, |ρ̲| ≤ 2ε ρ̄/c₁, i.e. the printed ratio over ε is at most 2/c₁ (ĉ₁: the measured
    # ReLU balance constant, lem-5.5; β of the run's initialization)
    if p > 0:
        c1 = float(kd.relu_balance_ratio(run.rho[1:], run.data.y, run.S0).min())
        beta = run.Z0.abs().flatten(1).max(1).values.cpu().numpy()  # (E,)
        own = kd.own_coeffs(run.rho[1:], run.data.y)
        own_min = torch.where(run.S0, own, torch.full_like(own, np.inf)).amin(-2).amin(-1).cpu().numpy()  # (T−1, E)
        after = own_min >= c1 * (beta[None] + 1) / eps  # t ≥ T₂ per member (ρ̄ non-decreasing: once, for ever)
        T2 = [int(t[np.argmax(after[:, e])]) if after[:, e].any() else None for e in range(run.cfg.E)]
        # before T₂ the proof's constant does not apply: then the ratio at T is shown and the record is inconclusive
        proof_ratio = float((r[after] / eps).max()) if after.any() else float(r[-1].max() / eps)
    ser = {"ratio / ε (seed 0)" if p > 0 else "ratio (seed 0)": {
        "x": t.tolist(), "y": (r[:, 0] / (eps if p > 0 else 1.0)).tolist(), "xlabel": "step t",
        "ylabel": "max|ρ̲| / (ε min ρ̄)" if p > 0 else "max|ρ̲| / min ρ̄", "logx": True, "logy": p == 0}}
    for cid in CLAIMS:
        # the derived constant-free (E.24) is a step of the proof, recorded beside the verdict
        record("holds" if viol == 0 else "violated", claim=cid, reading="proof-step", observed=float(h.max_ratio.max()),
               bound=1.0, config=conf, hypotheses=run.hyp, tightness=tight, series=ser,
               evidence="consistency", inside=ins, inside_reason=why,
               note="sharpened (E.24), evaluated at every step (every_step hook), not only on the grid; derived from the "
                    "GD dynamics alone (the last step at which the neuron was active), it holds for any GD trajectory")
        if p > 0:  # the printed statement for p > 0: the ratio over ε settles (an implied constant ĉ exists)
            record("holds" if settled else "inconclusive", claim=cid, observed=chat, bound=None, covers=["p > 0"],
                   config=conf, hypotheses=run.hyp, series=ser, finding_type=None if settled else "inconclusive",
                   tightness=(f"implied ĉ = max|ρ̲|/(ε min ρ̄) at T = {chat:.3f}; fitted growth over the last "
                              f"decade {trend:+.3f} per decade (largest member; settled within the run: ≤ {TREND_MAX})"),
                   evidence="consistency", inside=ins, inside_reason=why,
                   note=("no bound the run could cross: the statement's c and T₂ are free, so this record cannot read "
                         "'violated' (consistency); the proof's constant is tested in the proof-step record beside it. "
                         + ("" if settled else
                            f"The ratio is still rising at T = {int(t[-1])} ({trend:+.3f} per decade): the statement's "
                            "T₂ may lie beyond the run, so this run neither confirms nor refutes it")))
            judged2 = after.any()
            record(("holds" if proof_ratio <= 2 / c1 else "violated") if judged2 else "inconclusive", claim=cid,
                   reading="proof-step", observed=proof_ratio, bound=2 / c1, evidence="test", inside=ins,
                   inside_reason=why, covers=["p > 0"], config=conf, hypotheses=run.hyp,
                   finding_type="" if judged2 else "inconclusive",
                   tightness=(f"max over grid t ≥ T₂ of max|ρ̲|/(ε min ρ̄) = {proof_ratio:.3f} vs the proof's 2/ĉ₁ = "
                              f"{2 / c1:.3f} (ĉ₁ = {c1:.4f}, the measured balance constant); T₂ (first grid t with "
                              f"min ρ̄ ≥ ĉ₁(β+1)/ε) per member: {T2}"),
                   note="the proof's constant c = 2/c₁ after its T₂, from (E.24): a proof step, beside the verdict")
        record("holds" if viol_wrong > 0 else "violated", claim=cid, role="companion", observed=viol_wrong, bound=0,
               config=conf, note=(f"(E.24) without the η‖x_i'‖²/(nm) term: {viol_wrong} violations over the same steps "
                                  f"(rejected: {viol_wrong > 0})"))
    assert viol_wrong > 0  # the check can fail: the bound without its step term is violated
    assert ok, viol


@functools.lru_cache(maxsize=2)
def _orth_run(key, ctx):
    """Orthonormal data (p = 0), ReLU, m = 300 ≥ 50 log(2n/δ) (Lemma A.2's width), initialization conditioned
    on the events of Lemmas A.1 and A.2: a run inside Theorem 4.3's hypotheses on which Appendix E is stated."""
    cfg = ks.C0_O.replace(m=300, d=100, E=4, steps=ctx.pick(quick=2_000, full=20_000), grid_points=25)
    data = ks.make_data(cfg, ctx.generator("kou2023/lem-E.2", cfg.key("p0")), device=ctx.device)
    net = ks.make_net(cfg, data, ctx.generator("kou2023/lem-E.2", cfg.key("p0", "init")), on_events=True)
    return ks.simulate(cfg, data, net, observe=("rho", "loss"))


@pytest.mark.claim("kou2023/lem-E.2")
@pytest.mark.claim("kou2023/cor-E.3")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="Lemma E.2 / Cor. E.3 are false for p = 0 (inside Thm 4.3's hypotheses): the right side is 0 "
                          "while off-class neurons active at init keep |ρ̲| > 0 for ever")
def test_offclass_printed_statement_fails_for_p0(ctx, record):
    """p = 0 (orthonormal rows), m = 300, initialization on the events of Lemmas A.1 and A.2: the printed
    inequality needs |ρ̲_{y_i,r,i'}| ≤ c·R_min⁻²pn·ρ̄ = 0 for t ≥ T₂. The size is pinned by the initialization:
    the violating entries are exactly the off-class neurons active at init, each with |ρ̲(T)| in
    (⟨w(0), x_i'⟩, ⟨w(0), x_i'⟩ + η‖x_i'‖²/(nm)] (it moves until the neuron switches off, then freezes); the
    others stay exactly 0. ρ̲ is non-increasing (Lemma 5.2), so the violation holds at every t ≥ 1."""
    run = _orth_run((ctx.profile, ctx.seed, str(ctx.device)), ctx)
    data, cfg = run.data, run.cfg
    assert data.stats.p == 0.0 and run.hyp["inside"], run.hyp["outside_reasons"]  # precondition
    ins, why = ks.inside(run.hyp)
    Z0, rhoT = run.Z0, run.rho[-1]  # (E, 2, m, n)
    off = (data.jy < 0).view(1, 2, 1, -1).expand_as(Z0)  # class j = −y_i' on sample i'
    act0 = off & (Z0 > 0)
    step = (run.eta.view(-1, 1, 1, 1) * data.norms2 / (cfg.n * cfg.m)).expand_as(Z0)
    lhs = rhoT.abs()
    in_bracket = bool(((lhs > Z0) & (lhs <= Z0 + step * (1 + 1e-12)))[act0].all())
    zero_else = bool((lhs[off & ~act0] == 0).all())
    assert in_bracket and zero_else and int(act0.sum()) > 0  # control: the size is the one the init predicts
    r = _ratio(run)
    t = run.t[1:]
    grid_pos = bool((r > 0).all())  # every grid time t ≥ 1, every member
    rhs = 0.0  # c·R_min⁻²·p·n·ρ̄ with p = 0, for any c and T₂
    lmax = float(lhs[off].max())
    for cid in CLAIMS:
        record("expected-failure", claim=cid, finding_type="false-as-stated", observed=lmax, bound=rhs,
               evidence="test", inside=ins, inside_reason=why,
               covers=["p = 0 (orthogonal data)"], config=cfg.as_dict(), hypotheses=run.hyp,
               tightness=(f"{int(act0.sum())} of {int(off.sum())} off-class (j, r, i') entries active at init; each has "
                          f"|ρ̲(T)| ∈ (Z0, Z0 + η‖x‖²/(nm)] ({in_bracket}); the rest are 0 ({zero_else}); "
                          f"max|ρ̲|/min ρ̄ at T = {r[-1].round(5).tolist()}, > 0 at every grid time t ≥ 1: {grid_pos}"),
               table=[{"member": e, "off-class entries active at init": int(act0[e].sum()),
                       "max |rho_under|(T)": float(lhs[e][off[e]].max()), "max Z0 among them": float(Z0[e][act0[e]].max()),
                       "ratio at T": float(r[-1, e])} for e in range(cfg.E)],
               finding=(f"For p = 0 (orthogonal data, inside Theorem 4.3's hypotheses and on the events of Lemmas A.1/A.2) "
                        f"the printed right side is 0 for every c and T₂, but the off-class neurons active at "
                        f"initialization keep |ρ̲| ∈ (⟨w(0),x_i'⟩, ⟨w(0),x_i'⟩ + η‖x‖²/(nm)] > 0 for ever (max {lmax:.4f} "
                        f"at t = {int(run.t[-1])}; ρ̲ is non-increasing, so from t = 1 on). The proof's T₂ needs "
                        "ρ̄ ≥ c₁(β+1)/(R_min⁻²pn), infinite at p = 0"))
    assert_claim(lmax <= rhs, f"printed Lemma E.2 at p=0 needs max|ρ̲| = 0; measured {lmax:.4g}")
