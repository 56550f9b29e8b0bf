"""zhu2022/fig-E: Appendix E experiments, reproduced where offline data and CPU scale allow.

- E.6 (Fig. 10): NTK and He initialisation give similar stability curves (except L = 2) — paired NTK/He draws on the lazy-sweep task.
- E.1 (Table 4) analogue: lazy and non-lazy training reach similar clean accuracy — a fully connected stand-in on
  scikit-learn's 8×8 digits with a genuinely lazy arm (full profile only; ResNet-110/CIFAR cannot be run here).
- E.6's L = 2 exception is recorded separately (a paired difference test; unchecked when not significant).
- E.2 (Fig. 6), E.3 (Fig. 7, CNNs), E.4 (Fig. 8, ResNet-18/34): not checkable here (recorded with the reason);
  E.5 (Fig. 9): a two-layer stand-in of the non-lazy width trend is reported (information) under zhu2022/thm-3.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats as st

from theory.data import real
from fixtures import zhu2022 as fz
from fixtures.controls import OPNORM_EXACT_TOL, OPNORM_LANCZOS_TOL
from theory.errors import DivergenceError
from theory.papers.zhu2022 import lazy
from theory.papers.zhu2022 import schemes
from theory.sim.models import DeepMLP
from theory.sim.train import gd
from theory.device import draw


E6_ALPHA = 0.01  # level of each one-sided test of the TOST equivalence test (per depth)
# Step sizes (every GD run of this file): per member from its own loss Hessian at initialisation, batched,
# η_e = c / λ_e with λ_e the larger of the top eigenvalues of the Gauss–Newton Hessian of the mean squared loss
# (= λ_max(Θ_e(0))/n, Θ_e the NTK Gram, for a scalar output) and of the full loss Hessian (residual term included:
# it dominates for absolute targets on a small-output init, e.g. deep LeCun at m = 16), fixtures.zhu2022._lr_hessian
# and sharpness; c = 1, half the stability limit 2/λ of the linearised dynamics. Where an arm starts from a small-output
# rescaling of another arm's draw (E.1's non-lazy arm, E.6's LeCun arm), its sharpness grows with its weights, and its
# rate is capped at that of the same draw at He scale. Runs guarded: a member whose loss exceeds fixtures.zhu2022.DIVERGE_FACTOR × its initial loss
# at any step stops the run, and the record reports the precondition failure.
LR_RULE = {"step size rule": "eta_e = c / max(lambda_max(GN Hessian_e(0)), lambda_max(loss Hessian_e(0))), c = 1 "
                              "(per member, batched); E.6's LeCun members capped at their He member's rate (same draw "
                              "at He scale: their sharpness grows from a tiny-output init)",
           "divergence guard": f"loss > {fz.DIVERGE_FACTOR:g} x initial loss at any step"}


def _lr_summary(lrs: dict) -> dict:
    """min / median / max of the per-member step sizes of each arm, for a record."""
    return {f"eta {k} (min, median, max)": [float(np.min(v)), float(np.median(v)), float(np.max(v))]
            for k, v in lrs.items() if len(v)}


def _diverged(record, err, config):
    """A GD run tripped the divergence guard: recorded as a precondition failure (inconclusive), then the test fails."""
    record("inconclusive", finding_type="inconclusive", config={**config, **LR_RULE}, evidence="consistency",
           inside="unknown", inside_reason="precondition failed (GD diverged): no run to judge",
           note=f"precondition failed: GD diverged under the per-member step-size rule ({err}); no verdict")
    pytest.fail(f"precondition failed: GD diverged under the per-member step-size rule: {err}")


def _tost(r: np.ndarray, delta: float, alpha: float = E6_ALPHA):
    """Equivalence (two one-sided t-tests) of the mean of paired log-ratios r with 0 within ±delta:
    'similar' iff the (1 − 2α) t-interval of the mean lies inside (−delta, delta)."""
    se = float(r.std(ddof=1) / math.sqrt(r.size))
    h = float(st.t.ppf(1 - alpha, r.size - 1)) * se
    lo, hi = float(r.mean()) - h, float(r.mean()) + h
    return lo, hi, bool(-delta < lo and hi < delta)


@pytest.mark.claim("zhu2022/fig-E")
def test_e6_ntk_vs_he_similar(ctx, record):
    """Fig. 10 (E.6): NTK and He initialisation 'yield similar curves' of P(f, ε) vs width, except for L = 2.
    Paired design: per seed one Gaussian draw gives the He net and the NTK-parameterised net (the same function at
    init, so init noise cancels) trained on the lazy-sweep task; r = log(P_NTK(T)/P_He(T)) per pair.
    'Similar' (a curve difference invisible against the draw-to-draw scatter of the figure's points) is encoded as an
    equivalence test per depth L ≥ 3: the (1 − 2·0.01) t-interval of mean r lies within ±δ_L, δ_L = the pooled
    within-cell SD of log P_He(T) over independent draws. Companion: the same test must reject 'LeCun ≈ He'
    (same draws rescaled to γ = 1/√2). The L = 2 exception is reported (mean |r| at L = 2 vs deeper)."""
    depths = ctx.pick(quick=(2, 3, 5), full=(2, 6, 10))
    widths = ctx.pick(quick=(16, 64), full=(16, 64, 256, 1024))
    # 10 pair seeds per cell (20 full): with 5, δ_L (a pooled SD on 8 degrees of freedom) and the interval of mean r
    # were both noisy, and --seed 53 gave δ_3 = 0.044 against a CI end of −0.052 (not similar). At 10, over seeds 0–59
    # the largest |CI end|/δ_L is 0.855 and the companion 'LeCun ≈ He' keeps ≥ 2.5 (rejected).
    cfg = {**fz.LAZY, **ctx.pick(quick={"pair_seeds": 10}, full={"pair_seeds": 20, "n": 100, "n_test": 1000, "steps": 3000})}
    items = tuple(sorted(cfg.items()))
    fz.declare_ntk_he_pairs(depths, widths, cfg, ctx.dtype)  # its peak (the step-size Lanczos) for `theory plan`
    table, res, lrs, ctl = [], {}, {"He": [], "LeCun": [], "NTK": []}, torch.zeros(2, dtype=torch.float64, device="cpu")
    for L in depths:
        r, rl, dev = [], [], []
        for m in widths:
            try:
                o = fz.ntk_he_pairs(m, L, ctx.device, ctx.dtype, ctx.seed, items)
            except DivergenceError as err:  # a precondition failure, reported in the record (never re-drawn)
                _diverged(record, err, {"depth": L, "width": m, **cfg})
            S_ = len(o["he_PT"])
            lrs["He"] += o["std_lr"][:S_].tolist()
            lrs["LeCun"] += o["std_lr"][S_:].tolist()
            lrs["NTK"] += o["ntk_lr"].tolist()
            ctl = torch.maximum(ctl, torch.maximum(o["std_opnorm_ctl"], o["ntk_opnorm_ctl"]))
            same0 = float(((o["ntk_P0"] - o["he_P0"]).abs() / o["he_P0"]).max())
            assert same0 < 1e-10, f"NTK and He nets of one draw must agree at init (rel. diff {same0:.3g})"
            r += (o["ntk_PT"] / o["he_PT"]).log().tolist()
            rl += (o["lecun_PT"] / o["he_PT"]).log().tolist()
            lh = o["he_PT"].log()
            dev += (lh - lh.mean()).tolist()
            table += [{"L": L, "m": m, "seed": k, "P_He(0)/eps": float(o["he_P0"][k]), "P_He(T)/eps": float(o["he_PT"][k]),
                       "P_NTK(T)/eps": float(o["ntk_PT"][k]), "P_LeCun(T)/eps": float(o["lecun_PT"][k])}
                      for k in range(len(o["he_PT"]))]
        r, rl = np.array(r), np.array(rl)
        delta = math.sqrt(float(np.sum(np.square(dev))) / (len(dev) - len(widths)))
        lo, hi, eq = _tost(r, delta)
        llo, lhi, leq = _tost(rl, delta)
        res[L] = {"mean r": float(r.mean()), "mean |r|": float(np.abs(r).mean()), "CI": (lo, hi), "delta (seed SD)": delta,
                  "similar": eq, "LeCun mean r": float(rl.mean()), "LeCun CI": (llo, lhi), "LeCun similar (mutation)": leq}
    deep = [L for L in depths if L >= 3]
    worst = max(max(abs(res[L]["CI"][0]), abs(res[L]["CI"][1])) / res[L]["delta (seed SD)"] for L in deep)
    ok = all(res[L]["similar"] for L in deep)
    record("holds" if ok else "violated", observed=worst, bound=1.0, ratio=worst, covers=["E.6"], evidence="test",
           inside=False, inside_reason=("a stand-in for Fig. 10 (random-target regression on the sphere, fully connected "
                                        "nets, full-batch GD), not the paper's MNIST setup: outside the hypotheses"),
           tightness="max over L ≥ 3 of (largest |end| of the 98 % CI of mean log(P_NTK/P_He)) / δ_L (< 1: similar)",
           table=table, hypotheses={**{f"L={L}": v for L, v in res.items()}, **_lr_summary(lrs),
                                    "production path (member 0 of each arm and cell, 16 rows)":
                                        f"opnorm default vs exact SVD ≤ {float(ctl[0]):.1e} (tol {OPNORM_LANCZOS_TOL:.0e}); "
                                        f"the check's ‖∇f‖ vs exact ≤ {float(ctl[1]):.1e} (tol {OPNORM_EXACT_TOL:.0e})"},
           config={"depths": depths, "widths": widths, **cfg, "alpha per one-sided test": E6_ALPHA, **LR_RULE},
           note="stand-in: random-target regression on the sphere, not MNIST; paired NTK/He draws")
    rejected = not any(res[L]["LeCun similar (mutation)"] for L in deep)
    record("holds" if rejected else "violated", role="companion",
           observed=min(max(abs(res[L]["LeCun CI"][0]), abs(res[L]["LeCun CI"][1])) / res[L]["delta (seed SD)"] for L in deep),
           bound=1.0, note="wrong version 'LeCun ≈ He' (same draws at γ = 1/√2): the equivalence test must not call it similar "
                           "at any L ≥ 3; " + ", ".join(f"L={L}: similar={res[L]['LeCun similar (mutation)']}" for L in deep))
    # The L = 2 exception ('differ in the curve of L = 2'): a two-sided paired t-test of mean r = 0 at level 0.01.
    # A significant difference reproduces the exception; otherwise it is not established at this scale (the test has
    # no power requirement here, so a non-significant result is recorded as unchecked, not as a contradiction).
    L2 = [L for L in depths if L == 2]
    if L2:
        r2 = np.array([np.log(row["P_NTK(T)/eps"] / row["P_He(T)/eps"]) for row in table if row["L"] == 2])
        p2 = float(st.ttest_1samp(r2, 0.0).pvalue)
        sig = p2 < 0.01
        record("holds" if sig else "not-applicable", observed=p2, bound=0.01, ratio=None, evidence="consistency",
               inside=False, inside_reason="stand-in for Fig. 10's L = 2 curve (not the paper's setup); the record "
                                           "never reads 'violated' (a non-significant difference is unchecked)",
               hypotheses={"mean log(P_NTK/P_He) at L=2": float(r2.mean()), "pairs": int(r2.size),
                           "98% CI": res[2]["CI"], "similar at L=2 (TOST)": res[2]["similar"]},
               tightness="two-sided paired t-test p-value of mean log(P_NTK/P_He) = 0 at L = 2 (< 0.01: differ)",
               note=("the L = 2 exception is reproduced (significant difference)" if sig else
                     f"the L = 2 exception is not established at this scale: mean log-ratio {float(r2.mean()):+.3f}, "
                     f"p = {p2:.2g} over {r2.size} pairs (unchecked, not contradicted)"))
    assert ok, res
    assert rejected, res


E1_MARGIN = 0.02  # 'similar accuracy': |difference| < 2 points (the paper's gaps: 0.75 and 0.53 points)


@pytest.mark.claim("zhu2022/fig-E")
def test_e1_lazy_vs_non_lazy_accuracy_digits(ctx, record):
    """Table 4 analogue (full profile, GPU): an FCN (L = 3, m = 256) on scikit-learn's 8×8 digits (10-class one-hot
    squared loss, full-batch GD), trained (a) genuinely lazy — He init, output scale α = 20 on the centred model
    α(f − f₀) (Chizat et al.'s lazy limit; targets Y + αf₀, rate η/α², so the function-space dynamics are those of
    the α = 1 net), asserted max relative weight change ≤ 0.1 — and (b) non-lazy — 0.1 × He init, asserted relative
    change ≥ 1. 'Similar accuracy' is an equivalence test (Welch TOST, each side at 0.01) of the mean test-accuracy
    difference within ±2 points over E seeds per arm. Companion: the same test must reject similarity when the lazy
    arm's accuracies are shifted down by 5 points.
    Quick profile: not checkable (recorded with the reason) — a converged, genuinely lazy arm needs a width and a
    number of steps beyond the CPU budget, and at CPU-feasible widths the comparison is dominated by the narrow lazy
    net's poor conditioning; ResNet-110/CIFAR cannot be run here in any profile."""
    if not ctx.full:
        record("not-applicable", config={"profile": ctx.profile}, evidence="consistency",
               inside=False, inside_reason="not run in this profile (Table 4's ResNet-110/CIFAR setup unavailable offline)",
               note=("Table 4 (ResNet-110 on CIFAR10/100): architecture and data unavailable offline; the FCN-on-digits "
                     "stand-in with a genuinely lazy arm (rel. weight change ≤ 0.1) needs the full profile (GPU)"))
        return
    X, t = real.digits(device=ctx.device)
    X = X / X.norm(dim=1, keepdim=True)
    gen = record.generator({"t": "E1"})
    perm = draw(torch.randperm, len(t), generator=gen, device=ctx.device)
    n_tr, m, L, E, steps, A = (ctx.size(1200, floor=100), ctx.size(256, floor=16), 3, ctx.size(8, floor=3),
                               ctx.size(4000, floor=100), 20.0)  # ctx.size: shrunk in a smoke run only; η per member
    tr_idx, te_idx = perm[:n_tr], perm[n_tr:]
    Y = torch.nn.functional.one_hot(t, 10).to(ctx.dtype)
    st_ = schemes.stds("he", 64, m, L)
    lazy_net = DeepMLP.init(E, [64, m, m, 10], stds=st_, alpha=A, generator=gen, device=ctx.device)
    w0 = [w.clone() for w in lazy_net.weights]
    init = DeepMLP([w.clone() for w in w0], lazy_net.act, A)
    Xtr = X[tr_idx]
    cfg_e1 = {"m": m, "L": L, "E per arm": E, "steps": steps, "n_train": n_tr, "alpha (lazy)": A}
    Yl = Y[tr_idx] + init(Xtr)
    # lazy arm: the rule on the α-scaled net that is trained (its sharpness is α² × that of the centred α = 1 net)
    lr_l = 1.0 / fz.sharpness(lazy_net, Xtr, Yl)
    # non-lazy arm (0.1 × He): its NTK at init is ~1e-4 × He's and its sharpness grows as the weights grow, so the
    # init-only rule is no bound there: capped at the rate of the same draws at He scale (× 10 per layer), and the
    # sharpness at the end is measured and reported (η_e·λ_max(H_e(T)) < 2: inside the linear stability limit)
    net = DeepMLP.init(E, [64, m, m, 10], stds=[0.1 * s for s in st_], generator=gen, device=ctx.device)
    w0n = [w.clone() for w in net.weights]
    lam_n0 = fz.sharpness(net, Xtr, Y[tr_idx])
    lam_he = fz.sharpness(DeepMLP([10.0 * w for w in w0n], net.act), Xtr, Y[tr_idx])
    lr_n = 1.0 / torch.maximum(lam_n0, lam_he)
    try:
        gd(lazy_net, Xtr, Yl, loss="squared", lr=lr_l, steps=steps, record=[0, steps], blowup=fz.DIVERGE_FACTOR)
        gd(net, Xtr, Y[tr_idx], loss="squared", lr=lr_n, steps=steps, record=[0, steps], blowup=fz.DIVERGE_FACTOR)
    except DivergenceError as err:  # a precondition failure, reported in the record (never re-drawn)
        _diverged(record, err, cfg_e1)
    edge_l = (lr_l * fz.sharpness(lazy_net, Xtr, Yl)).cpu()
    edge_n = (lr_n * fz.sharpness(net, Xtr, Y[tr_idx])).cpu()
    acc_l = ((lazy_net(X[te_idx]) - init(X[te_idx])).argmax(-1) == t[te_idx]).to(ctx.dtype).mean(-1).cpu().numpy()
    rel_l = lazy.rel_change(w0, lazy_net.weights)
    acc_n = (net(X[te_idx]).argmax(-1) == t[te_idx]).to(ctx.dtype).mean(-1).cpu().numpy()
    rel_n = lazy.rel_change(w0n, net.weights)
    steps_info = {**_lr_summary({"lazy": lr_l.cpu().numpy(), "non-lazy (capped at He scale)": lr_n.cpu().numpy()}),
                  "non-lazy members at the He-scale cap": int((lam_he > lam_n0).sum()),
                  "max eta_e lambda_max(H_e(T)) lazy": float(edge_l.max()),
                  "max eta_e lambda_max(H_e(T)) non-lazy": float(edge_n.max()),
                  "beyond the linear stability limit 2 at the end": int((edge_l >= 2).sum() + (edge_n >= 2).sum())}
    assert float(rel_l.max()) <= lazy.LAZY_MAX_REL_CHANGE, f"lazy arm not lazy: {rel_l.tolist()}"
    assert float(rel_n.min()) >= 1.0, f"non-lazy arm not non-lazy: {rel_n.tolist()}"

    def tost(a, b):
        d_ = float(a.mean() - b.mean())
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
        h = float(st.t.ppf(1 - E6_ALPHA, dof)) * math.sqrt(va + vb)
        return d_, (d_ - h, d_ + h), bool(-E1_MARGIN < d_ - h and d_ + h < E1_MARGIN)

    diff, ci, similar = tost(acc_l, acc_n)
    record("holds" if similar else "violated", observed=abs(diff), bound=E1_MARGIN, covers=["E.1"], evidence="test",
           inside=False, inside_reason="stand-in for Table 4 (FCN on scikit-learn digits, not ResNet-110 on CIFAR)",
           reading="outside-hypotheses",
           table=[{"arm": "lazy (alpha-centred He)", "test acc": acc_l.tolist(), "rel change": rel_l.tolist()},
                  {"arm": "non-lazy (0.1 x He)", "test acc": acc_n.tolist(), "rel change": rel_n.tolist()}],
           hypotheses={"mean difference (lazy - non-lazy)": diff, "98% CI": ci, **steps_info},
           config={**cfg_e1, **LR_RULE, "margin": E1_MARGIN, "alpha per side": E6_ALPHA},
           tightness="|mean accuracy difference| vs the equivalence margin (TOST: the 98% CI inside ±margin)",
           note="stand-in for ResNet-110/CIFAR (Table 4): FCN on sklearn digits")
    _, ci_m, similar_m = tost(acc_l - 0.05, acc_n)
    record("holds" if not similar_m else "violated", role="companion", observed=ci_m[0], bound=-E1_MARGIN,
           note=f"lazy accuracies shifted by −5 points: 98% CI {ci_m[0]:+.3f}..{ci_m[1]:+.3f} (not inside ±margin: rejected)")
    assert similar, (diff, ci)
    assert not similar_m


@pytest.mark.claim("zhu2022/fig-E")
@pytest.mark.parametrize("item", ["E.2 Fig 6", "E.3 Fig 7", "E.4 Fig 8", "E.5 Fig 9"])
def test_items_not_checkable_here(ctx, record, item):
    reasons = {
        "E.2 Fig 6": "50- vs 200-epoch SGD on MNIST-scale data with width 32/64, depth 4/8: needs the paper's SGD "
                     "schedule and data; full-batch GD on digits would not test the early-stopping claim",
        "E.3 Fig 7": "CNNs (depth 4-10) on image data: the harness has no convolutional models and no CIFAR/MNIST offline",
        "E.4 Fig 8": "ResNet-18/34 on CIFAR: architecture and data unavailable offline; GPU-scale",
        "E.5 Fig 9": "deep FCNs on MNIST with initialisation variances the OCR does not give: not reproducible here; the "
                     "non-lazy width trend of a two-layer stand-in is reported as information under zhu2022/thm-3 "
                     "(test_width_trend_non_lazy)",
    }
    assert item in reasons
    record("not-applicable", note=reasons[item], config={"item": item}, evidence="consistency",
           inside=False, inside_reason="not run: the paper's setup is unavailable offline (see note)")
