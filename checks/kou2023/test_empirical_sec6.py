"""Kou et al. (2023) §6 and Appendix I: empirical observations (claim kou2023/rem-6).

(i) larger leaky slopes γ make srank(W_{+1}) decrease faster and settle lower (Fig. 1, synthetic data);
(ii) smaller initialization σ₀ gives a smaller stable rank after training (Figs. 2–3, MNIST in the paper);
(iii) width has a weak effect on the final stable rank; very small widths give low stable rank (Figs. 4–5,
MNIST in the paper).

Synthetic (P1): the paper's §6 data (``fixtures.data.kou_section6``: n = 10, d = 784, μ ~ N(0, 10⁻⁴ I),
x_i = y_i μ + ξ_i), m = 100, η = 0.1, 50 full-batch GD steps (batch 64 > n), each seed its own data and
initialization draw; seeds × slopes run as one ensemble (per-member data and slopes, ``emp.slope_sweep``).
P1 violates the theorems' hypotheses and 50 steps is pre-asymptotic; both are recorded. (ii) and (iii) are
MNIST observations and are recorded as not applicable to P1.

Real data: the same protocol on a two-digit task from scikit-learn's shipped 8×8 digits (3 vs 8, n = 50 ≤ d
= 64 images, raw pixels in [0, 1], batch 64 ≥ n so SGD is full-batch GD); the data set is fixed, as in the
paper's real-data runs, so the initialization seeds (and σ₀ values) share the ensemble axis. σ₀ is the
standard deviation of the initial entries (Def. 3.2: N(0, σ₀²)); the paper's MNIST text calls the listed
values "weight variance", and that reading (std √σ₀) is reported alongside for (ii). In the full profile
a local MNIST file ($THEORY_MNIST, labels in $THEORY_MNIST_LABELS or one .npz) runs (ii)–(iii) at m = 1000.

Orderings are judged by Page's L test within seeds (exact null, level ORDER_ALPHA or ALPHA per test; where a
verdict needs several tests to reject, the chance of a false "holds" is at most α: an intersection-union test); each
has a companion that feeds reversed labels to the same rule and must be rejected.

Inside or outside (issue 32): rem-6 is an empirical observation, so its "hypotheses" are the paper's protocols. P1 is the
§6 synthetic protocol as stated (its unstated σ₀ and slopes chosen and recorded): inside. The digits task and the local
MNIST run (50 full-batch steps on a subset, not the paper's 10 SGD epochs) are stand-ins for experiments not
reproduced: outside, shown beside the verdict.
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np
import scipy.stats as st
import pytest
import torch

from theory import ClaimViolation, assert_claim
from theory.papers.kou2023 import empirical as emp
from theory.papers.kou2023 import setup as ks

# tests that compute one cached run: xdist keeps each group on one worker (theory.harness.shared_runs)
SHARED_RUNS = {"kou2023/sec6_width_runs": ["test_width_weak_effect_digits", "test_width_small_is_low_digits"]}

CLAIM = "kou2023/rem-6"
ALPHA = 0.01  # level of the width ordering and the MNIST protocol (tests that must reject: power, not declared)
# Level of the slope and σ₀ ordering tests (_ordering_record): their Page p-values were ≤ 3.9e-6 at seeds 0-4, 11, 17
# (smallest attainable 4e-11), so 1e-4 keeps a margin > 25x. A Page test that must reject fails under the claim only
# by lack of power (not declared); the declared false alarm of such a check is its reversed-label companion, asserted
# in the same test. The companion applies the check's rule (every ordering test rejects: an intersection-union test)
# to reversed labels, and the wrong version is rejected unless that reversed check holds; the reversed check holds with
# probability ≤ ORDER_ALPHA (≤ the level of any one of its tests, exactly the level under no association, less under
# the claimed ordering), so false_alarm = ORDER_ALPHA per companion.
ORDER_ALPHA = 1e-4
# rem-6-limit: each adjacent pair's sign-flip test 'the larger γ ends lower' at EXT_ALPHA; "holds" needs all three (an
# intersection-union test), so a false "holds" (an XPASS of the strict expected failure while some pair is truly not
# lower) has probability ≤ EXT_ALPHA, the declared false alarm. A failure must be a reversal: the reverse test rejects at
# REVERSAL_ALPHA for some pair, or the seeds lean that way (the finding's own level; no suite false alarm).
EXT_ALPHA = 1e-4
REVERSAL_ALPHA = 1e-3
SEEDS = 5
GAMMAS = (0.0, 0.1, 0.25, 0.5, 0.75)  # 0 = ReLU; γ = 1 (linear) is outside the leaky model's (0, 1)
STEPS = 50  # the paper's 50 epochs (full batch)
WEAK = 1.25  # declared: "weak width effect" = seed-mean final srank varies by ≤ 25% over m ≥ 50
SIGMAS = (1e-5, 5e-5, 1e-4, 5e-4, 1e-3)  # the paper's MNIST list (§6)
WIDTH_SIGMA = 1e-5  # App. I
SEEDS_EXT = 20  # extended horizon: paired sign-flip tests need 2^-S ≪ EXT_ALPHA (exact enumeration: ≤ 20 seeds)
SEEDS_W = 20  # width runs: the width effect at σ₀ = 1e-5 is ~1e-4 in srank; 20 initialization seeds (at 10, Page p was 0.035 at --seed 54; 20 is the exact sign-flip enumeration limit)
MNIST_N, MNIST_WIDTHS = 512, (10, 50, 100, 500, 1000)  # full profile with a local MNIST file (n ≤ d = 784)


def _gens(ctx, seed, tag):
    return (ctx.generator(CLAIM, {"data": "P1", "seed": seed}),
            ctx.generator(CLAIM, {"init": tag, "seed": seed}))


P1_INSIDE = ("the paper's §6 synthetic protocol as stated (n = 10, d = 784, μ ~ N(0, 10⁻⁴I), x = yμ + ξ, m = 100, lr 0.1, "
             "batch 64 > n: full-batch GD); its unstated σ₀ (1e-3) and slopes are chosen and recorded. The theorems' "
             "hypotheses do not bind an empirical observation (their report, outside, is attached)")
DIGITS_OUTSIDE = ("a stand-in for the paper's MNIST runs (scikit-learn's 8×8 digits, 3 vs 8, n = 50, 50 full-batch "
                  "steps): a setting the paper never ran is outside, shown beside the verdict")


def _hyp_summary(h, steps: int) -> dict:
    """Hypothesis figures over a list of per-run reports (``ks.hypotheses``) of runs of ``steps`` GD steps."""
    return {"inside": all(x["inside"] for x in h), "C_data_R": [round(x["C_data_R"], 3) for x in h],
            "C_data (act-specific, worst)": min(x["C_data"] for x in h),
            "C_eta": min(x["C_eta"] for x in h), "C_sigma": min(x["C_sigma"] for x in h),
            "beta": max(x["beta"] for x in h), "R_min": min(x["R_min"] for x in h), "R_max": max(x["R_max"] for x in h),
            "p": max(x["p"] for x in h), "outside_reasons (run 0)": h[0]["outside_reasons"],
            "n_pos per run": [x["n_pos"] for x in h],
            "horizon (steps)": steps,
            "tau at the horizon (η R_max² t/(nm))": float(h[0]["eta"] if not isinstance(h[0]["eta"], list) else
                                                          h[0]["eta"][0]) * h[0]["R_max"] ** 2 * steps / (h[0]["n"] * h[0]["m"])}


def _ordering_record(record, *, name, levels_name, lev, values, direction, extra_table, config, hyp, series, note,
                     covers, inside, inside_reason):
    """Run the ordering tests (final value and area), record the check and its reversed-label companion;
    return (ok, rejected). The check holds when every test rejects (an intersection-union test); the companion applies
    that rule to reversed labels and is rejected unless the reversed check holds."""
    tests = {k: emp.ordering(lev, v, direction=direction, alpha=ORDER_ALPHA) for k, v in values.items()}
    rev = {k: emp.ordering(lev[:, ::-1], v, direction=direction, alpha=ORDER_ALPHA) for k, v in values.items()}
    ok = all(t["holds"] for t in tests.values())
    rejected = not all(t["holds"] for t in rev.values())
    k = lev.shape[1]
    # the reported ρ̄ (the record's observed value) is the mean within-seed Spearman of value on level, sign included:
    # negative for a falling trend
    for k_, v in values.items():
        ref = float(np.mean([st.spearmanr(lev[s], np.asarray(v)[s]).statistic for s in range(lev.shape[0])]))
        assert abs(tests[k_]["rho"] - ref) <= 1e-12, (k_, tests[k_]["rho"], ref)
    record("holds" if ok else "violated", observed=min(t["rho"] for t in tests.values()), bound=0.0, config=config,
           evidence="test", inside=inside, inside_reason=inside_reason,
           hypotheses=hyp, table=extra_table, series=series, covers=covers,
           tightness=("; ".join(f"{k_}: within-seed Spearman ρ̄={t['rho']:.3f}, Page p={t['p']:.1e} (pooled Spearman "
                                f"p={t['pooled_p']:.1e})" for k_, t in tests.items())
                      + f"; α={ORDER_ALPHA}, smallest attainable p (1/{k}!)^{lev.shape[0]} = {emp.min_p(k, lev.shape[0]):.1e}"),
           note=f"{name}: {levels_name} ordering '{direction}' judged by Page's L test within seeds. {note}")
    record("holds" if rejected else "violated", role="companion", observed=max(t["p"] for t in rev.values()),
           bound=ORDER_ALPHA, config=config,
           false_alarm=ORDER_ALPHA,  # the reversed check (every reversed test rejects) holds with probability ≤ its level
           note=(f"{name}: the same rule with the {levels_name} labels reversed (holds only if every reversed test "
                 "rejects at the check's level): Page p = "
                 + ", ".join(f"{k_} {t['p']:.2f}" for k_, t in rev.items()) + f" (rejected: {rejected})"))
    return ok, rejected, tests


# --- (i) slopes on P1 -------------------------------------------------------------------------------
def _p1_sweep(ctx, tag, seeds, gammas, steps, record) -> dict:
    """Seeds × slopes on P1 as one ensemble (``emp.slope_sweep``): seed s draws its own data and W(0) (shared
    by its slopes); only the draws loop in Python, the training is one tensor program."""
    cfg = emp.p1_config(gammas[0])
    datas, W0s = [], []
    for s in range(seeds):
        dg, ig = _gens(ctx, s, tag)
        data = ks.make_data(cfg, dg, device=ctx.device)
        datas.append(data)
        W0s.append(ks.make_net(cfg, data, ig).W[0])
    return emp.slope_sweep(cfg, datas, W0s, gammas, steps=steps, record=record)


@functools.lru_cache(maxsize=None)
def _p1_slope_runs(ctx):
    """srank(W_{+1}), loss (T, seeds, γ) at every step up to 50; within a seed all γ share data and W(0)."""
    sw = _p1_sweep(ctx, "slopes", SEEDS, GAMMAS, STEPS, list(range(STEPS + 1)))
    return sw["t"], sw["srank"], sw["loss"], sw["hyp"][GAMMAS[1]]


def _slope_check(record, t, S, L, name, config, hyp, inside, inside_reason):
    lev = np.repeat(np.asarray(GAMMAS)[None], S.shape[1], 0)
    area = np.array([[emp.area(t, S[:, s, g]) for g in range(len(GAMMAS))] for s in range(S.shape[1])])
    final = S[-1]
    mf, ma = final.mean(0), area.mean(0)
    adj_bad = [f"{GAMMAS[i]}→{GAMMAS[i + 1]}" for i in range(len(GAMMAS) - 1) if mf[i + 1] > mf[i]]
    table = [{"gamma": g, "act": "relu" if g == 0 else "leaky_relu", "area mean": float(ma[i]),
              "area sd": float(area[:, i].std(ddof=1)), "srank(50) mean": float(mf[i]),
              "srank(50) sd": float(final[:, i].std(ddof=1)), "srank(0) mean": float(S[0, :, i].mean()),
              "loss(50) mean": float(L[-1, :, i].mean())} for i, g in enumerate(GAMMAS)]
    ser = {}
    for i, g in enumerate(GAMMAS):
        lab = f"γ={g}" if g else "ReLU"
        ser.update(emp.bands(t, S[:, :, i], lab, plot=f"fig1-{name}"))
        # the plotted band, written out here: seed mean ± 3 sample sd (n − 1) at every step, to 1e-12
        Y = np.asarray(S[:, :, i], float)
        mu = Y.sum(1) / Y.shape[1]
        sd = np.sqrt(((Y - mu[:, None]) ** 2).sum(1) / (Y.shape[1] - 1))
        for key, ref in ((f"{lab} −3sd", mu - 3 * sd), (f"{lab} +3sd", mu + 3 * sd), (f"{lab} mean", mu)):
            assert np.allclose(ser[key]["y"], ref, rtol=1e-12, atol=1e-14), key
    return _ordering_record(
        record, name=name, levels_name="γ", lev=lev, values={"srank(50)": final, "area": area}, direction="down",
        extra_table=table, config=config, hyp=hyp, series=ser, covers=["(i) larger slope, lower stable rank"],
        inside=inside, inside_reason=inside_reason,
        note=(f"seed means srank(50) {np.round(mf, 4).tolist()}, area {np.round(ma, 3).tolist()} for γ={list(GAMMAS)}; "
              f"adjacent pairs out of order at t=50: {adj_bad or 'none'}"))


@pytest.mark.claim("kou2023/rem-6")
def test_slope_ordering_p1(ctx, record):
    """rem-6 (i), Fig. 1 on P1: over t ∈ [0, 50], larger γ ⇒ smaller area (1/50)∫srank dt ('decreases faster')
    and smaller srank(W_{+1}) at t = 50 ('settles lower'): Page's L test within seeds (5 seeds, own data
    each) at α = ORDER_ALPHA for each. Companion: reversed γ labels must be rejected."""
    t, S, L, hyps = _p1_slope_runs(ctx)
    config = {"data": "D-P (P1)", "n": 10, "d": 784, "m": 100, "eta": 0.1, "sigma0": 1e-3, "steps": STEPS,
              "gammas": GAMMAS, "seeds": SEEDS, "alpha": ORDER_ALPHA, "ensemble": f"{SEEDS} seeds × {len(GAMMAS)} slopes"}
    ok, rejected, tests = _slope_check(record, t, S, L, "P1", config, _hyp_summary(hyps, STEPS), True, P1_INSIDE)
    assert rejected  # reversed γ labels are rejected
    assert ok, tests


@functools.lru_cache(maxsize=None)
def _p1_extended(ctx):
    """srank(W_{+1}) − 1 at T_ext for the leaky slopes, (SEEDS_EXT, leaky γ); each seed its own data/init."""
    T_ext = ctx.pick(quick=2000, full=20_000)
    gl = [g for g in GAMMAS if g > 0]
    sw = _p1_sweep(ctx, "extended", SEEDS_EXT, gl, T_ext, [0, STEPS, T_ext])
    return sw["srank"][-1] - 1, gl, T_ext, sw["hyp"][gl[0]]


@pytest.mark.claim("kou2023/rem-6-limit")
@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason=(
    "rem-6-limit (strict reading of §6 'have a smaller value when epoch t → ∞', beyond the plotted 50 epochs): "
    "at the extended horizon some adjacent pair of leaky slopes does not end lower in srank−1 (paired sign-flip tests "
    "over 20 seeds; the reversed pair is in the record); all leaky limits are 1 (Thm 4.1(b))"))
def test_slope_ordering_extended_horizon_p1(ctx, record):
    """rem-6-limit, the strict reading of rem-6 (i)'s 'smaller value when epoch t → ∞': at the extended horizon
    (2·10³ steps quick, 2·10⁴ full) every larger leaky slope must end with a smaller srank(W_{+1}) − 1: for each
    adjacent pair of leaky slopes an exact one-sided sign-flip test (SEEDS_EXT seeds, own data each) of 'the larger γ
    is lower' must reject at EXT_ALPHA (all three: an intersection-union test, false "holds" ≤ EXT_ALPHA). A failure is
    pinned to its size: some pair must be reversed — 'the larger γ is higher' rejects at REVERSAL_ALPHA, or 'the
    larger γ is lower' has p ≥ ½ — not merely undecided (no power)."""
    gap, gl, T_ext, hyps = _p1_extended(ctx)
    a3 = EXT_ALPHA
    down = [emp.paired_shift(gap[:, k + 1], gap[:, k], alpha=a3) for k in range(len(gl) - 1)]
    up = [emp.paired_shift(gap[:, k], gap[:, k + 1], alpha=REVERSAL_ALPHA) for k in range(len(gl) - 1)]
    names = [f"{gl[k]}→{gl[k + 1]}" for k in range(len(gl) - 1)]
    not_lower = [nm for nm, r in zip(names, down) if not r["holds"]]
    reversed_ = [nm for nm, r in zip(names, up) if r["holds"]]
    leaning = [nm for nm, r in zip(names, down) if r["p"] >= 0.5]
    ok = not not_lower
    pd_, pu_ = [float(f"{r['p']:.2g}") for r in down], [float(f"{r['p']:.2g}") for r in up]
    # chance failure while the finding holds: a strict XPASS needs the truly not-lower pair's test to reject at a3
    record("holds" if ok else "expected-failure", observed=max(r["p"] for r in down), bound=a3, false_alarm=a3,
           reading="strict", finding_type="" if ok else "missing-hypothesis", evidence="test", inside=True,
           inside_reason=P1_INSIDE + f"; extended to {T_ext} steps, the reading's own horizon",
           config={"data": "D-P (P1)", "m": 100, "eta": 0.1, "sigma0": 1e-3, "steps": T_ext, "seeds": SEEDS_EXT,
                   "gammas": gl, "alpha (each pair, all must reject)": a3, "reversal alpha": REVERSAL_ALPHA,
                   "test": "paired sign-flip per adjacent pair, intersection-union"},
           hypotheses=_hyp_summary(hyps, T_ext),
           table=[{"pair": nm, "seed-mean srank-1 (smaller γ)": float(gap[:, k].mean()),
                   "seed-mean srank-1 (larger γ)": float(gap[:, k + 1].mean()),
                   "p (larger γ lower)": down[k]["p"], "p (larger γ higher)": up[k]["p"],
                   "seeds with larger γ higher": up[k]["up_seeds"]} for k, nm in enumerate(names)],
           tightness=(f"T={T_ext}: seed-mean srank−1 {np.round(gap.mean(0), 5).tolist()} for γ={gl}; p(larger γ lower) "
                      f"{pd_} (each must be < {a3:g}), p(larger γ higher) {pu_} (a reversal at < {REVERSAL_ALPHA:g}); "
                      f"seeds with the larger γ higher: {[r['up_seeds'] for r in up]} of {SEEDS_EXT}"),
           finding=(f"At the extended horizon T={T_ext} larger leaky slopes do not settle lower: no significant decrease "
                    f"for {', '.join(not_lower) or 'no pair'}"
                    + (f", a significant increase (sign-flip p < {REVERSAL_ALPHA:g}) for {', '.join(reversed_)} ("
                       + ", ".join(f"{nm}: {r['up_seeds']}/{SEEDS_EXT} seeds higher, p = {r['p']:.2g}"
                                   for nm, r in zip(names, up) if r["holds"]) + ")" if reversed_ else "")
                    + (f", the seeds leaning to an increase (p of a decrease ≥ ½) for {', '.join(leaning)}" if leaning else "")
                    + f" (seed-mean srank−1 {np.round(gap.mean(0), 5).tolist()} for γ={gl}). Fig. 1's ordering is "
                    "seen at the plotted horizon (t ≤ 50) only, which the sentence's 't → ∞' goes beyond. The §6 data "
                    "are outside Theorem 4.1 (C_data in the record), so its limit 1 is no explanation here; σ₀ is not "
                    "given by the paper and is this run's choice (recorded)"))
    # size of the finding: a failure must be a reversal, not a test without power: some pair's larger γ is
    # significantly higher (at REVERSAL_ALPHA), or the seeds lean that way (p of 'larger γ lower' ≥ ½: a true ordering short of
    # power gives p < ½). Seed 13: p(lower) = 0.98 and p(higher) = 0.022 for 0.5→0.75: reversed, not significantly at
    # that draw; p ≥ ½ for 'lower' still pins it.
    assert ok or reversed_ or leaning, (pd_, pu_)
    assert_claim(ok, f"no significant decrease with γ at T={T_ext} for {not_lower}; reversed: {reversed_}")


@pytest.mark.claim("kou2023/rem-6")
def test_init_scale_and_width_on_p1_not_applicable(ctx, record):
    """rem-6 (ii) and (iii) are the paper's MNIST observations (Figs. 2–5): not applicable to the n = 10
    synthetic P1 data (there W_{+1} − W_{+1}(0) has rank ≤ 10 for every width); judged on the real-data task."""
    record("not-applicable", observed=None, bound=None, config={"data": "D-P (P1)", "n": 10}, evidence="consistency",
           inside=False, inside_reason="(ii) and (iii) are MNIST observations; P1 is not their setting",
           note=("(ii) σ₀ and (iii) width are MNIST observations (App. I: 10 epochs, m ∈ {10,…,1000}); on P1 the "
                 "learned part of W_{+1} has rank ≤ n = 10 whatever m, so the width trend has no counterpart there. "
                 "Both are judged on the shipped digits task (test_*_digits) and, with a local MNIST file, in the "
                 "full profile"))


# --- real data: shipped digits (and MNIST from a local file in the full profile) --------------------
def _digits_data(ctx):
    cfg = emp.DIGITS
    return ks.make_data(cfg, ctx.generator(CLAIM, cfg.key("digits-task")), device=ctx.device)


def _task_grid():
    return list(range(STEPS + 1))


def _task_hyp(h) -> dict:
    """Table figures of one hypothesis report (``ks.hypotheses``, e.g. ``run.hyp``)."""
    return {**ks.hyp_row(h), "n_pos": h["n_pos"], "n_neg": h["n_neg"], "d": h["d"]}


@functools.lru_cache(maxsize=None)
def _digits_slope_runs(ctx):
    """srank(W_{+1}), loss (T, seeds, γ) on the fixed digits task: initialization seeds × slopes in one ensemble
    (within a seed all γ share W(0)); the hypothesis report of the γ = 0.1 members."""
    data = _digits_data(ctx)
    cfg = emp.p1_config(GAMMAS[1], emp.DIGITS, E=SEEDS)
    W0 = ks.make_net(cfg, data, ctx.generator(CLAIM, cfg.key("digits-slopes-init"))).W
    sw = emp.slope_sweep(cfg, [data] * SEEDS, list(W0), GAMMAS, record=_task_grid())
    return sw["t"], sw["srank"], sw["loss"], ks.hypotheses(cfg, data, W0, cfg.eta)


@pytest.mark.claim("kou2023/rem-6")
def test_slope_ordering_digits(ctx, record):
    """rem-6 (i) on the shipped digits task (3 vs 8, n = 50, d = 64, m = 100, σ₀ = 1e-3, η = 0.1, 50 steps):
    larger γ ⇒ smaller area and smaller srank(W_{+1}) at t = 50 (Page's L over 5 initialization seeds)."""
    t, S, L, hyp = _digits_slope_runs(ctx)
    config = emp.DIGITS.as_dict() | {"gammas": GAMMAS, "seeds": SEEDS, "alpha": ORDER_ALPHA, "source": "sklearn digits",
                                     "ensemble": f"{SEEDS} seeds × {len(GAMMAS)} slopes"}
    ok, rejected, tests = _slope_check(record, t, S, L, "digits 3 vs 8", config, _task_hyp(hyp), False, DIGITS_OUTSIDE)
    assert rejected
    assert ok, tests


def _mnist(ctx):
    """(X, labels) from $THEORY_MNIST (full profile only), else None."""
    path = os.environ.get("THEORY_MNIST")
    if not (ctx.full and path):
        return None
    from theory.data import real

    return real.load_mnist(path, os.environ.get("THEORY_MNIST_LABELS"), device=ctx.device)


def _task(ctx, source):
    """(data, base config, width list) of a real-data task."""
    if source == "digits":
        return (_digits_data(ctx), emp.DIGITS.replace(m=ctx.pick(quick=100, full=1000)),
                ctx.pick(quick=(10, 50, 100, 500), full=(10, 50, 100, 500, 1000)))
    X, lab = _mnist(ctx)
    n = ctx.size(MNIST_N, floor=32)  # ctx.size: shrunk in a smoke run only; floor 50 keeps a width in m ≥ 50
    ms = tuple(ctx.sizes(MNIST_WIDTHS, floor=50))
    data = emp.task_data(X, lab, 3, 8, n, generator=ctx.generator(CLAIM, ["mnist", 3, 8, n]))
    return data, emp.DIGITS.replace(n=n, d=X.shape[1], data="N", m=ms[-1]), ms


@functools.lru_cache(maxsize=None)
def _sigma_runs(ctx, gamma, source):
    """srank(W_{+1}) (T, seeds, σ₀) for both σ₀ readings (std σ₀; variance σ₀, i.e. std √σ₀)."""
    data, base, _ = _task(ctx, source)
    stds = list(SIGMAS) + [float(np.sqrt(s)) for s in SIGMAS]
    cfg = emp.p1_config(gamma, base, E=SEEDS * len(stds), sigma0=1.0)
    run = emp.task_run(cfg, data, ctx.generator(CLAIM, cfg.key("sigma-init", gamma, source)),
                       sigma0s=stds * SEEDS, record=_task_grid())
    S = run.srank[:, :, 0].cpu().numpy().reshape(len(_task_grid()), SEEDS, len(stds))
    return np.asarray(_task_grid()), S, run


@pytest.mark.claim("kou2023/rem-6")
@pytest.mark.parametrize("gamma", [0.0, 0.1], ids=["relu", "leaky0.1"])
def test_init_scale_ordering_digits(ctx, record, gamma):
    """rem-6 (ii), Figs. 2–3 (ReLU and leaky γ = 0.1) on the digits task: smaller σ₀ ∈ {1e-5, 5e-5, 1e-4, 5e-4,
    1e-3} (standard deviations, Def. 3.2) ⇒ smaller srank(W_{+1}) after 50 steps and smaller area; Page's L
    over 5 initialization seeds, α = ORDER_ALPHA each. The 'weight variance' reading (std √σ₀) is reported."""
    t, S, run = _sigma_runs(ctx, gamma, "digits")
    k = len(SIGMAS)
    lev = np.repeat(np.log10(SIGMAS)[None], SEEDS, 0)
    Sd, Sv = S[:, :, :k], S[:, :, k:]
    final, area = Sd[-1], np.array([[emp.area(t, Sd[:, s, i]) for i in range(k)] for s in range(SEEDS)])
    var_test = emp.ordering(lev, Sv[-1], direction="up", alpha=ORDER_ALPHA)
    # the reported effect size: the seed mean of Spearman's ρ between the levels and the values (scipy, per seed)
    rho_ref = float(np.mean([st.spearmanr(lev[s_], Sv[-1][s_]).statistic for s_ in range(SEEDS)]))
    assert math.isclose(var_test["rho"], rho_ref, rel_tol=1e-12, abs_tol=1e-12), (var_test["rho"], rho_ref)
    ser = {}
    for i, s0 in enumerate(SIGMAS):
        ser.update(emp.bands(t, Sd[:, :, i], f"σ₀={s0:g}", plot=f"sigma-{gamma}"))
    table = [{"sigma0 (std)": s0, "srank(0) mean": float(Sd[0, :, i].mean()), "srank(50) mean": float(final[:, i].mean()),
              "srank(50) sd": float(final[:, i].std(ddof=1)), "area mean": float(area[:, i].mean()),
              "variance reading: std": float(np.sqrt(s0)), "variance reading: srank(50) mean": float(Sv[-1, :, i].mean())}
             for i, s0 in enumerate(SIGMAS)]
    config = {**emp.p1_config(gamma, emp.DIGITS).as_dict(), "sigma0s (std)": SIGMAS, "seeds": SEEDS, "alpha": ORDER_ALPHA,
              "sigma0 convention": "standard deviation (Def. 3.2); variance reading reported"}
    ok, rejected, tests = _ordering_record(
        record, name=f"digits 3 vs 8, {'ReLU' if gamma == 0 else f'leaky γ={gamma}'}", levels_name="σ₀",
        lev=lev, values={"srank(50)": final, "area": area}, direction="up", extra_table=table, config=config,
        hyp=_task_hyp(run.hyp), series=ser, covers=["(ii) smaller initialization, lower stable rank"],
        inside=False, inside_reason=DIGITS_OUTSIDE,
        note=(f"seed means srank(50) {np.round(final.mean(0), 4).tolist()} for σ₀={list(SIGMAS)} (std); with the "
              f"'weight variance' reading (std √σ₀) {np.round(Sv[-1].mean(0), 3).tolist()}, Page p={var_test['p']:.1e} "
              "(reported, not judged)"))
    assert rejected
    assert ok, tests


@functools.lru_cache(maxsize=None)
def _width_runs(ctx, gamma, source):
    """srank(W_{+1}) at t = 50 (seeds, σ, m) for σ₀ = 1e-5 (App. I) and the companion σ₀ = 1e-3."""
    data, base, ms = _task(ctx, source)
    finals, runs = [], []
    for m in ms:
        cfg = emp.p1_config(gamma, base, m=m, E=2 * SEEDS_W, sigma0=1.0)
        run = emp.task_run(cfg, data, ctx.generator(CLAIM, cfg.key("width-init", gamma, m, source)),
                           sigma0s=[WIDTH_SIGMA, 1e-3] * SEEDS_W, record=[0, STEPS])
        finals.append(run.srank[-1, :, 0].cpu().numpy().reshape(SEEDS_W, 2))
        runs.append(run)
    return tuple(ms), np.stack(finals, -1), runs  # (seeds, σ, m)


def _width_table(ms, F):
    return [{"m": m, "srank(50) mean σ₀=1e-5": float(F[:, 0, c].mean()), "sd": float(F[:, 0, c].std(ddof=1)),
             "srank(50) mean σ₀=1e-3": float(F[:, 1, c].mean())} for c, m in enumerate(ms)]


@pytest.mark.claim("kou2023/rem-6")
@pytest.mark.parametrize("gamma", [0.0, 0.1], ids=["relu", "leaky0.1"])
def test_width_weak_effect_digits(ctx, record, gamma):
    """rem-6 (iii), App. I (σ₀ = 1e-5): width has a weak effect on the final stable rank: the seed-mean
    srank(W_{+1}) after 50 steps varies by at most a factor 1.25 (declared) over m ≥ 50. Companion: the same
    statistic at σ₀ = 1e-3 (the initialization part, which grows with m, not washed out) must exceed 1.25."""
    ms, F, runs = _width_runs(ctx, gamma, "digits")
    mean = F.mean(0)  # (σ, m)
    big = np.asarray(ms) >= 50
    spread = mean[:, big].max(1) / mean[:, big].min(1)
    ok = spread[0] <= WEAK
    config = {**emp.p1_config(gamma, emp.DIGITS).as_dict(), "widths": ms, "sigma0": WIDTH_SIGMA, "seeds": SEEDS_W}
    record("holds" if ok else "violated", observed=float(spread[0]), bound=WEAK, config=config, covers=["(iii) weak width effect"],
           evidence="test", inside=False, inside_reason=DIGITS_OUTSIDE,
           hypotheses={f"m={m}": ks.hyp_row(r.hyp) for m, r in zip(ms, runs)}, table=_width_table(ms, F),
           tightness=(f"max/min seed-mean srank(50) over m ≥ 50: {spread[0]:.4f} at σ₀=1e-5 (means "
                      f"{np.round(mean[0], 5).tolist()} for m={list(ms)})"),
           note="digits 3 vs 8 (shipped real data), the paper's App. I scale σ₀ = 1e-5 (std)")
    record("holds" if spread[1] > WEAK else "violated", role="companion", observed=float(spread[1]), bound=WEAK,
           config=config | {"sigma0": 1e-3},
           note=(f"σ₀ = 1e-3: max/min over m ≥ 50 = {spread[1]:.3f} (means {np.round(mean[1], 3).tolist()}): a strong "
                 f"width effect, rejected by the same ≤ {WEAK} rule"))
    assert spread[1] > WEAK
    assert ok, spread


@pytest.mark.claim("kou2023/rem-6")
@pytest.mark.parametrize("gamma", [0.0, 0.1], ids=["relu", "leaky0.1"])
def test_width_small_is_low_digits(ctx, record, gamma):
    """rem-6 (iii), App. I Figs. 4–5 (σ₀ = 1e-5): very small widths give low stable rank and the final stable
    rank grows with width: Page's L of srank(W_{+1}) at t = 50 on m (up) over 10 initialization seeds at
    α = 0.01 (the small end of an increasing trend). The position of m = 10 and a paired sign-flip test of
    'm = 10 below m = 50' are reported, not judged (the differences there are ~1e-4 in srank).
    Companion: reversed width labels must be rejected."""
    ms, F, runs = _width_runs(ctx, gamma, "digits")
    lev = np.repeat(np.asarray(ms, float)[None], SEEDS_W, 0)
    mean = F[:, 0].mean(0)
    test = emp.ordering(lev, F[:, 0], direction="up", alpha=ALPHA)
    # the reversed labels are judged at ORDER_ALPHA, the false-alarm level of every reversed-label companion here
    # (their Page p was ≥ 0.97 at seeds 39–67: the level makes no difference to what is rejected)
    rev = emp.ordering(lev[:, ::-1], F[:, 0], direction="up", alpha=ORDER_ALPHA)
    small = emp.paired_shift(F[:, 0, 0], F[:, 0, 1], alpha=ALPHA)  # m = 10 below m = 50?
    ok = test["holds"]
    config = {**emp.p1_config(gamma, emp.DIGITS).as_dict(), "widths": ms, "sigma0": WIDTH_SIGMA, "seeds": SEEDS_W,
              "alpha": ALPHA}
    record("holds" if ok else "violated", observed=test["rho"], bound=0.0, config=config, covers=["(iii) weak width effect"],
           evidence="test", inside=False, inside_reason=DIGITS_OUTSIDE,
           hypotheses={f"m={m}": ks.hyp_row(r.hyp) for m, r in zip(ms, runs)}, table=_width_table(ms, F),
           tightness=(f"srank(50) seed means {np.round(mean, 5).tolist()} for m={list(ms)}; within-seed Spearman "
                      f"ρ̄={test['rho']:.3f}, Page p={test['p']:.1e} (α={ALPHA}); the lowest mean is at m="
                      f"{ms[int(np.argmin(mean))]}; m=10 below m=50 in {small['up_seeds']}/{SEEDS_W} seeds "
                      f"(sign-flip p={small['p']:.2g}, reported)"),
           note=("digits 3 vs 8 (shipped real data), σ₀ = 1e-5 (std); the whole width effect is "
                 f"×{mean.max() / mean.min():.5f} in srank"))
    record("holds" if not rev["holds"] else "violated", role="companion", observed=rev["p"], bound=ORDER_ALPHA, config=config,
           false_alarm=ORDER_ALPHA,  # the reversed-label Page test rejects with probability ≤ its level (see ORDER_ALPHA)
           note=f"reversed width labels: Page p = {rev['p']:.2f} (rejected: {not rev['holds']})")
    assert not rev["holds"]
    assert ok, (test, mean)


@pytest.mark.claim("kou2023/rem-6")
def test_mnist_protocol(ctx, record):
    """rem-6 (ii)–(iii) on MNIST (P3: m = 1000, lr 0.1): runs only in the full profile with a local file
    ($THEORY_MNIST; nothing is downloaded) — 3 vs 8, n = 512 ≤ d = 784 images, full-batch GD for 50 steps, the
    σ₀ ordering (Page's L) and the weak width effect as on the digits task. Otherwise not applicable. In every
    profile, the subset rule (emp.task_data) runs on a labelled toy set: n = 6 gives 3 images of each class, labelled
    +1 and −1, and an odd n is refused."""
    Xt = torch.arange(40.0, dtype=torch.float64, device=ctx.device).reshape(10, 4)
    lab = torch.tensor([3, 8, 3, 8, 3, 8, 3, 8, 1, 1], device=ctx.device)
    sub = emp.task_data(Xt, lab, 3, 8, 6, generator=ctx.generator("kou2023/rem-6", {"toy": "task_data"}))
    rows_a = {int(r[0]) // 4 for r in sub.X[sub.y > 0]}
    rows_b = {int(r[0]) // 4 for r in sub.X[sub.y < 0]}
    assert sub.X.shape == (6, 4) and int((sub.y > 0).sum()) == 3 and int((sub.y < 0).sum()) == 3, sub.y
    assert rows_a <= {0, 2, 4, 6} and rows_b <= {1, 3, 5, 7}, (rows_a, rows_b)  # class 3 → +1, class 8 → −1
    with pytest.raises(ValueError, match="positive even number"):
        emp.task_data(Xt, lab, 3, 8, 5)
    if _mnist(ctx) is None:
        record("not-applicable", observed=None, bound=None, evidence="consistency", inside=False,
               inside_reason="no MNIST run (no local file, or not the full profile)",
               config={"protocol": "P3 MNIST", "m": 1000, "lr": 0.1, "env": "THEORY_MNIST", "profile": ctx.profile},
               note=("MNIST needs a local file ($THEORY_MNIST, full profile): nothing is downloaded. The paper's 10→2 "
                     "class reduction is unspecified (3 vs 8 is used); observations (ii)–(iii) are judged on the "
                     "shipped digits task in every profile"))
        return
    t, S, run = _sigma_runs(ctx, 0.0, "mnist")
    k = len(SIGMAS)
    lev = np.repeat(np.log10(SIGMAS)[None], SEEDS, 0)
    test = emp.ordering(lev, S[-1][:, :k], direction="up", alpha=ALPHA)
    ms, F, runs = _width_runs(ctx, 0.0, "mnist")
    mean = F.mean(0)
    big = np.asarray(ms) >= 50
    spread = float(mean[0, big].max() / mean[0, big].min())
    ok = test["holds"] and spread <= WEAK
    record("holds" if ok else "violated", observed=test["rho"], bound=0.0, covers=["(ii) smaller initialization, lower stable rank", "(iii) weak width effect"],
           evidence="test", inside=False,
           inside_reason="a stand-in for the paper's MNIST protocol (3 vs 8 on a subset, 50 full-batch steps, not 10 SGD epochs)",
           config={"protocol": "P3 MNIST (local file)", "digits": [3, 8], "n": ctx.size(MNIST_N, floor=32), "m": ms[-1], "lr": 0.1,
                   "steps": STEPS, "sigma0s": SIGMAS, "widths": ms, "seeds": SEEDS, "alpha": ALPHA},
           hypotheses=ks.hyp_row(run.hyp), table=_width_table(ms, F),
           tightness=(f"(ii) srank(50) seed means {np.round(S[-1][:, :k].mean(0), 4).tolist()} for σ₀={list(SIGMAS)}, "
                      f"Page p={test['p']:.1e}; (iii) width spread over m ≥ 50 at σ₀=1e-5: {spread:.3f} (≤ {WEAK})"))
    assert ok, (test, spread)
