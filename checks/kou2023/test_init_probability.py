"""Kou et al. (2023) high-probability initialization lemmas, by Monte Carlo against δ.

Claims: kou2023/lem-A.1 (norms and inner products of w(0)), kou2023/lem-A.2 (0.4m ≤ |S_i^(0)| ≤ 0.6m),
kou2023/lem-H.3 (spectral norm of a sub-Gaussian matrix, used in Lemma F.3).

Every rate is judged by :func:`theory.stats.failure_rate_test` (one-sided exact binomial test of
"failure probability ≤ δ"), with fixed seeds; the tests a check asserts form one family, judged by Holm's step-down
procedure (:func:`theory.papers.kou2023.init_probability.holm`) at the family's declared false-alarm rate.
"""
from __future__ import annotations

import math

import pytest
import scipy.stats as st
import torch

from theory import data as fdata
from theory.papers.kou2023 import init_probability as ip
from theory.papers.kou2023.setup import relu_width_min
from theory.stats import failure_rate_test

# False-alarm budget (issue 32): kou2023's statistical checks together declare ≤ 0.0025 per run (the suite's Σα ≤ 0.01).
# Each check's family of tests is judged by Holm at the family level below, which is the check's false-alarm rate
# (a check that fails when anything in the family is rejected: Holm's first step is Bonferroni's). Companions (wrong
# versions) are judged by the same rule at the same level and must be rejected.
A1_ALPHA = 3e-4  # lem-A.1: inner-product part at 3 d, norm part where d ≥ d_suff, two exact-law pins (6 tests)
A2_ALPHA = 3e-4  # lem-A.2: Hoeffding bound at 4 widths, δ at the 2 widths inside the condition (6 tests)
H3_ALPHA = 3e-4  # lem-H.3: failure rate with C = 1 at 3 sizes × 2 u (6 tests)
H3_SMALL_ALPHA = 2e-4  # lem-H.3 at (4, 2): failure rate at 2 u and the Hoeffding band of the mean norm (3 tests)
DELTA = 0.1
N, M = 10, 20


def _X(d, gen, ctx):
    X, _ = fdata.gram_controlled(N, d, 1.0 / (20 * N), generator=gen, device=ctx.device)
    return X


@pytest.mark.claim("kou2023/lem-A.1")
def test_a1_failure_rates_vs_delta(ctx, record):
    """Lemma A.1: each part fails with probability ≤ δ/2 (inner products: every d; norms: d large)."""
    draws = ctx.pick(quick=1000, full=20000)
    d_suff = ip.a1_norm_d_sufficient(M, DELTA)
    # d_suff is where the Laurent–Massart upper tail just fits: 2√(d·x) + 2x = d/2 with x = log(8m/δ) (the lower
    # tail 2√(dx) ≤ d/2 then holds too); solved apart here, so a wrong constant in d_suff fails (float64 roots: 1e-12)
    x_lm = math.log(8 * M / DELTA)
    lm_gap = abs(2 * math.sqrt(d_suff * x_lm) + 2 * x_lm - d_suff / 2) / (d_suff / 2)
    assert lm_gap < 1e-12, (d_suff, lm_gap)
    rows, family = [], {}
    for d in (20, 100, 400):
        gen = record.generator({"d": d})
        r = ip.a1_failures(_X(d, gen, ctx), M, draws, DELTA, sigma0=0.01, generator=gen)
        tn = failure_rate_test(int(r["norm_fail"].sum()), draws, DELTA / 2, A1_ALPHA)
        ti = failure_rate_test(int(r["ip_fail"].sum()), draws, DELTA / 2, A1_ALPHA)
        # the reported upper limits are the one-sided 1 − α Clopper–Pearson limits, i.e. the upper end of scipy's
        # two-sided exact interval at confidence 1 − 2α
        for t_ in (tn, ti):
            cp = st.binomtest(t_.failures, t_.trials).proportion_ci(confidence_level=1 - 2 * A1_ALPHA, method="exact").high
            assert math.isclose(t_.upper, cp, rel_tol=1e-9, abs_tol=1e-15), (t_, cp)
        inside = d >= d_suff
        rows.append({"d": d, "norm_fail_rate": tn.rate, "norm_upper": tn.upper, "ip_fail_rate": ti.rate,
                     "ip_upper": ti.upper, "d_guaranteed(LM)": round(d_suff, 1), "inside": inside,
                     "norm_q_range": (r["q_min"], r["q_max"]), "ip_ratio_max": r["ip_ratio_max"],
                     "ip p": ti.p_value, "norm p": tn.p_value})
        family[f"inner-product part, d={d}"] = ti.p_value
        if inside:
            family[f"norm part, d={d}"] = tn.p_value
    passing_d = [r["d"] for r in rows if r["norm_upper"] <= DELTA / 2 or r["norm_fail_rate"] <= DELTA / 2]
    # both indicators against their exact laws (pins the draw, the threshold and the ratio, which the rate tests alone
    # do not: at σ₀ = 0.01 nothing fails, and a ratio without its threshold would fail nowhere either). On orthonormal
    # rows x_i = e_i (d = 100, R_max = 1) the ⟨w_r, x_i⟩ are i.i.d. N(0, σ₀²) over the 2m·n pairs, so with the threshold
    # scaled by IP_PIN (written here: IP_PIN·√(2 log(8mn/δ))·σ₀) a draw fails with P = 1 − (1 − 2Φ̄(z))^{2mn} = 0.33;
    # the norm part fails iff one of the 2m i.i.d. χ²_d/d leaves [1/2, 3/2]: P = 1 − (F(3d/2) − F(d/2))^{2m} = 0.036
    # (with 4m neurons: 0.55 and 0.070, |z| ≥ 10 at 4000 draws). Two two-sided exact binomial tests, in the family.
    d_pin, n_pin, IP_PIN = 100, 4000, 0.75
    gen = record.generator({"d": d_pin, "pin": "exact laws"})
    X_orth = torch.eye(N, d_pin, dtype=ctx.dtype, device=ctx.device)
    r = ip.a1_failures(X_orth, M, n_pin, DELTA, sigma0=0.01, generator=gen, ip_scale=IP_PIN)
    z_pin = IP_PIN * math.sqrt(2 * math.log(8 * M * N / DELTA))
    laws = {"norm": 1 - (st.chi2.cdf(1.5 * d_pin, d_pin) - st.chi2.cdf(0.5 * d_pin, d_pin)) ** (2 * M),
            "inner product": 1 - (1 - 2 * st.norm.sf(z_pin)) ** (2 * M * N)}
    pin_row = {"d": d_pin, "data": "orthonormal rows", "ip threshold scale": IP_PIN}
    for part, key in (("norm", "norm_fail"), ("inner product", "ip_fail")):
        k_pin = int(r[key].sum())
        p_pin = st.binomtest(k_pin, n_pin, laws[part]).pvalue
        family[f"{part}: failures vs its exact law"] = p_pin
        pin_row |= {f"{part} failures vs exact law": f"{k_pin}/{n_pin} vs {laws[part]:.4f}", f"{part}: two-sided p": p_pin}
    rej = dict(zip(family, ip.holm(list(family.values()), A1_ALPHA)))
    ok = not any(rej.values())
    # the norm part is judged only where d ≥ d_suff: it is covered only if some d of the run reaches it
    record("holds" if ok else "violated", observed=max(r["ip_fail_rate"] for r in rows), bound=DELTA / 2,
           false_alarm=A1_ALPHA, evidence="test", inside=True,
           inside_reason=(f"i.i.d. N(0, σ₀²) initialization by construction; the norm part judged only at d ≥ the "
                          f"Laurent–Massart d = {d_suff:.1f} (d = {[r['d'] for r in rows if r['inside']]}), the other d "
                          "reported, not judged"),
           covers=["inner-product part"] + (["norm part"] if any(r["inside"] for r in rows) else []),
           config={"n": N, "m": M, "delta": DELTA, "draws": draws, "family alpha (Holm)": A1_ALPHA,
                   "d": [20, 100, 400]},
           table=rows + [pin_row, {"family (Holm at A1_ALPHA)": {k: {"p": v, "rejected": rej[k]} for k, v in family.items()}}],
           tightness=(f"inner-product part: failure rate ≤ {max(r['ip_fail_rate'] for r in rows):.4f} vs δ/2=0.05, "
                      f"worst |<w,x>|/threshold {max(r['ip_ratio_max'] for r in rows):.3f}; norm part passes "
                      f"at d ∈ {passing_d} (Laurent–Massart guarantees d ≥ {d_suff:.1f}); smallest p of the family "
                      f"{min(family.values()):.2g} (Holm at {A1_ALPHA:g} over {len(family)} tests)"),
           note="norm part at d below the guaranteed d is outside the lemma's d ≥ C log(mn/δ) condition; "
                "reported, not judged")
    assert not any(v for k, v in rej.items() if "exact law" in k), (family, rej)  # the pins: draws, threshold, ratio
    assert ok, (family, rej)


@pytest.mark.claim("kou2023/lem-A.1")
def test_a1_rejects_tightened_versions(ctx, record):
    """Mutations: norm interval [0.8, 1.2]·σ₀²d at d = 400, or the inner-product threshold halved:
    the failure-rate test must reject both (so the check can fail)."""
    draws = 300
    gen = record.generator({"mut": 1})
    X = _X(400, gen, ctx)
    r1 = ip.a1_failures(X, M, draws, DELTA, generator=gen, norm_interval=(0.8, 1.2))
    r2 = ip.a1_failures(X, M, draws, DELTA, generator=gen, ip_scale=0.5)
    t1 = failure_rate_test(int(r1["norm_fail"].sum()), draws, DELTA / 2, A1_ALPHA)
    t2 = failure_rate_test(int(r2["ip_fail"].sum()), draws, DELTA / 2, A1_ALPHA)
    rejected = all(ip.holm([t1.p_value, t2.p_value], A1_ALPHA))  # the check's rule: Holm at the family level
    record("holds" if rejected else "violated", role="companion", observed=min(t1.rate, t2.rate), bound=DELTA / 2,
           config={"draws": draws, "family alpha (Holm)": A1_ALPHA, "d": 400},
           note=(f"mutations: tightened norm interval fails at rate {t1.rate:.3f} (p={t1.p_value:.1e}), halved "
                 f"inner-product threshold {t2.rate:.3f} (p={t2.p_value:.1e}) vs δ/2 = {DELTA / 2}; both rejected by "
                 f"Holm at {A1_ALPHA:g}: {rejected}"))
    assert rejected


@pytest.mark.claim("kou2023/lem-A.2")
def test_a2_active_set_sizes(ctx, record):
    """Lemma A.2: m ≥ 50 log(2n/δ) ⇒ P(some |S_i^(0)| ∉ [0.4m, 0.6m]) ≤ δ; compared with Hoeffding 2n e^{−m/50}."""
    draws = ctx.pick(quick=2000, full=40000)
    w_thr = relu_width_min(N, DELTA)  # the lemma's width 50 log(2n/δ)
    m_thr = math.ceil(w_thr)
    gen = record.generator({"A2": 1})
    X = _X(100, gen, ctx)
    G, y = X @ X.T, fdata.balanced_labels(N, device=ctx.device)
    rows, family, pin_err = [], {}, 0.0
    for m in (20, 100, m_thr, 400):
        f = ip.a2_failures(G, y, m, draws, generator=gen)
        t = failure_rate_test(int(f.sum()), draws, DELTA, A2_ALPHA)
        inside = m >= m_thr
        # the Hoeffding value from its derivation, written here: |S_i^(0)| ~ Bin(m, ½) for each i, deviation t = 0.1 of
        # the mean gives 2e^{−2mt²} per i, a union over the N inputs; and the exact binomial union bound beside it
        hoeff_here = min(1.0, N * 2 * math.exp(-2 * m * 0.1 ** 2))
        exact_union = min(1.0, N * float(st.binom.cdf(math.ceil(0.4 * m) - 1, m, 0.5) + st.binom.sf(math.floor(0.6 * m), m, 0.5)))
        pin_err = max(pin_err, abs(ip.a2_hoeffding(m, N) / hoeff_here - 1))
        # Hoeffding is a valid bound at every m: it must not be rejected either
        th = failure_rate_test(int(f.sum()), draws, min(ip.a2_hoeffding(m, N), 1 - 1e-12), A2_ALPHA)
        rows.append({"m": m, "fail_rate": t.rate, "upper": t.upper, "hoeffding": ip.a2_hoeffding(m, N),
                     "exact binomial union bound": exact_union, "inside": inside, "p (≤ δ)": t.p_value,
                     "p (≤ Hoeffding)": th.p_value})
        family[f"Hoeffding, m={m}"] = th.p_value
        if inside:
            family[f"δ, m={m}"] = t.p_value
    rej = dict(zip(family, ip.holm(list(family.values()), A2_ALPHA)))
    ok = not any(rej.values())
    at = next(r for r in rows if r["m"] == m_thr)
    record("holds" if ok else "violated", observed=at["fail_rate"], bound=DELTA, false_alarm=A2_ALPHA,
           evidence="test", inside=True,
           inside_reason=(f"Gaussian initialization by construction; judged against δ only at the widths m ≥ 50 log(2n/δ) "
                          f"= {w_thr:.1f} (m = {[r['m'] for r in rows if r['inside']]}), the "
                          "others reported, not judged (the Hoeffding bound, valid at every m, is judged at all)"),
           covers=["every width m ≥ 50 log(2n/δ)", "every i: 0.4m ≤ |S_i^(0)| ≤ 0.6m"],
           config={"n": N, "delta": DELTA, "draws": draws, "family alpha (Holm)": A2_ALPHA, "m_threshold": m_thr},
           table=rows + [{"family (Holm at A2_ALPHA)": {k: {"p": v, "rejected": rej[k]} for k, v in family.items()}}],
           tightness=(f"at m={m_thr}: empirical {at['fail_rate']:.4f} vs δ={DELTA} vs Hoeffding {at['hoeffding']:.3f}; "
                      f"smallest p of the family {min(family.values()):.2g} (Holm at {A2_ALPHA:g}, {len(family)} tests)"),
           hypotheses={"Hoeffding value vs its derivation written here (relative)": pin_err},
           note="m=20, 100 are outside the lemma's width condition (reported, not judged); the cheap "
                "training configs (m=20-40) therefore use c'=m/min|S_i| instead of 2.5")
    assert pin_err <= 1e-14, pin_err  # one exp and two products
    assert ok, (family, rej)


@pytest.mark.claim("kou2023/lem-A.2")
def test_a2_rejects_tightened_interval(ctx, record):
    """Mutation: [0.45m, 0.55m] at m = 400 fails far more often than δ; the test must reject it."""
    gen = record.generator({"A2mut": 1})
    X = _X(100, gen, ctx)
    f = ip.a2_failures(X @ X.T, fdata.balanced_labels(N, device=ctx.device), 400, 2000, generator=gen, lo=0.45, hi=0.55)
    t = failure_rate_test(int(f.sum()), 2000, DELTA, A2_ALPHA)  # the check's level
    record("holds" if t.rejects else "violated", role="companion", observed=t.rate, bound=DELTA,
           config={"m": 400, "draws": 2000, "alpha": A2_ALPHA},
           note=f"mutation [0.45m,0.55m]: failure rate {t.rate:.3f} (p={t.p_value:.1e}) vs δ={DELTA}; rejected: {t.rejects}")
    assert t.rejects


@pytest.mark.claim("kou2023/lem-H.3")
def test_h3_spectral_norm(ctx, record):
    """Lemma H.3 with ±½ entries: P(‖A‖ > C·K(√m+√n+u)) ≤ 2e^{−u²}. The constant C is unspecified;
    we test C = 1, report the implied Ĉ = max ‖A‖/(K(√m+√n+u)), and ‖A‖/(½(√m+√n)) → 1."""
    sizes = ctx.pick(quick=[(20, 5, 2000), (100, 50, 400), (400, 200, 60)],
                     full=[(20, 5, 4000), (100, 50, 2000), (1000, 500, 300)])
    K = ip.PSI2_HALF
    rows, family = [], {}
    for m, n, draws in sizes:
        gen = record.generator({"m": m, "n": n})
        s = ip.h3_norms(m, n, draws, generator=gen, device=ctx.device)
        base = math.sqrt(m) + math.sqrt(n)
        row = {"m": m, "n": n, "draws": draws, "mean ||A||/(0.5(sqrt m+sqrt n))": float((s / (0.5 * base)).mean())}
        for u in (1.0, 2.0):
            fails = int((s > K * (base + u)).sum())
            t = failure_rate_test(fails, draws, 2 * math.exp(-u * u), H3_ALPHA)
            row[f"C_hat(u={u:g})"] = float(s.max() / (K * (base + u)))
            row[f"fail(u={u:g})"] = t.rate
            family[f"({m}, {n}), u={u:g}"] = t.p_value
        rows.append(row)
    rej = dict(zip(family, ip.holm(list(family.values()), H3_ALPHA)))
    ok = not any(rej.values())
    chat = max(r["C_hat(u=1)"] for r in rows)
    trend = [r["mean ||A||/(0.5(sqrt m+sqrt n))"] for r in rows]
    # tightness band: Ĉ against its independent Bai–Yin value, per (m, n, u)
    pins = [r[f"C_hat(u={u:g})"] / h3_chat_bai_yin(r["m"], r["n"], u) for r in rows for u in (1.0, 2.0)]
    in_band = all(H3_BAND[0] <= v <= H3_BAND[1] for v in pins)
    for r in rows:  # issue 19: share of each term of √m + √n + u (u = 2, where u's share is largest)
        tot = math.sqrt(r["m"]) + math.sqrt(r["n"]) + 2.0
        r.update({"share sqrt(m) (u=2)": math.sqrt(r["m"]) / tot, "share sqrt(n) (u=2)": math.sqrt(r["n"]) / tot,
                  "share u (u=2)": 2.0 / tot})
    # √m and √n are ≥ 25 % of the sum at every size here; u only at small sizes (test_h3_small_matrix_all_terms)
    mat_mn = all(r["share sqrt(m) (u=2)"] >= 0.25 for r in rows) and any(r["share sqrt(n) (u=2)"] >= 0.25 for r in rows)
    record("holds" if ok else "violated", observed=chat, bound=1.0,
           false_alarm=H3_ALPHA,  # the family of rate tests, Holm (the Bai–Yin band is a declared band, no rate)
           evidence="test", inside=True, inside_reason="independent mean-zero ±½ entries (sub-Gaussian) by construction",
           covers=["term: sqrt(m)", "term: sqrt(n)"] if mat_mn else [],
           config={"entries": "±1/2", "K": K, "family alpha (Holm)": H3_ALPHA},
           table=rows + [{"family (Holm at H3_ALPHA)": {k: {"p": v, "rejected": rej[k]} for k, v in family.items()}}],
           tightness=(f"implied constant Ĉ={chat:.3f} (C=1 suffices; slack 1/Ĉ = {1 / chat:.2f}); Ĉ over its Bai–Yin "
                      f"value √ln2·(√m+√n)/(√m+√n+u): {min(pins):.3f}–{max(pins):.3f}, pinned in {list(H3_BAND)} "
                      f"({in_band}); normalized norm {['%.3f' % v for v in trend]} → 1"))
    assert ok, (family, rej)
    assert trend[-1] > trend[0]  # approach to the Bai–Yin limit ½(√m+√n)
    assert in_band, pins  # the implied constant is the Bai–Yin one: a factor 2 in C or K would leave the band
    assert K == h3_psi2_half()  # the ψ₂ norm used is the one of the definition (independent evaluation)
    assert mat_mn, rows


# Lemma H.3 where every term of √m + √n + u is material (issue 19): (m, n) = (4, 2), u = 2 gives shares
# 2/5.41 = 0.37, 1.41/5.41 = 0.26, 2/5.41 = 0.37. A 4 × 2 matrix of ±½ entries has AᵀA = ¼[[4, c], [c, 4]] with c the
# inner product of its two ±1 columns, so ‖A‖² = (4 + |c|)/4: ‖A‖ ∈ {1, √(3/2), √2} with probabilities 6/16, 8/16,
# 2/16 (c = 0, ±2, ±4 over the 16 sign patterns of the product column). Written here, apart from the production code.
H3_SMALL = (4, 2, 2000)
H3_SMALL_LAW = {1.0: 6 / 16, math.sqrt(1.5): 8 / 16, math.sqrt(2.0): 2 / 16}


@pytest.mark.claim("kou2023/lem-H.3")
def test_h3_small_matrix_all_terms(ctx, record):
    """Lemma H.3 with C = 1 at (m, n) = (4, 2), u ∈ {1, 2}, where √m, √n and u (at u = 2) are each ≥ 25 % of
    √m + √n + u. Failure rate against 2e^{−u²} (exact binomial test), and the production norms against the exact
    law of ‖A‖ for 4 × 2 sign matrices: every draw one of its three values (float64, 1e-12), the implied constant
    Ĉ = max‖A‖/(K(√m + √n + u)) equal to √2/(K(√m + √n + u)) (the largest value is drawn with probability
    1 − (7/8)^2000), and the sample mean against the exact mean by Hoeffding's bound (range √2 − 1); the two rate tests and
    the Hoeffding p-value are one family, judged by Holm at H3_SMALL_ALPHA.
    The bound is loose here (slack 1/Ĉ ≈ 1.9–2.3: C is unspecified and the small-size norm sits well below
    K(√m + √n)); what the record shows is that the claim holds where its u term carries a material share."""
    m, n, draws = H3_SMALL
    K = h3_psi2_half()
    s = ip.h3_norms(m, n, draws, generator=record.generator({"small": 1}), device=ctx.device).double().cpu()
    vals = torch.tensor(list(H3_SMALL_LAW), dtype=torch.float64, device="cpu")
    off_law = float((s[:, None] - vals[None, :]).abs().amin(1).max())
    mean_exact = sum(v * p for v, p in H3_SMALL_LAW.items())
    hoeff = (math.sqrt(2.0) - 1.0) * math.sqrt(math.log(2 / H3_SMALL_ALPHA) / (2 * draws))  # half-width at the family level
    rows, ok, family = [], True, {}
    for u in (1.0, 2.0):
        tot = math.sqrt(m) + math.sqrt(n) + u
        fails = int((s > K * tot).sum())
        t = failure_rate_test(fails, draws, 2 * math.exp(-u * u), H3_SMALL_ALPHA)
        family[f"failure rate, u={u:g}"] = t.p_value
        chat = float(s.max()) / (K * tot)
        chat_exact = math.sqrt(2.0) / (K * tot)
        rows.append({"u": u, "share sqrt(m)": math.sqrt(m) / tot, "share sqrt(n)": math.sqrt(n) / tot, "share u": u / tot,
                     "fail rate (C=1)": t.rate, "2e^{-u^2}": 2 * math.exp(-u * u), "C_hat": chat, "C_hat exact": chat_exact})
        ok &= abs(chat - chat_exact) <= 1e-12
    material = all(rows[-1][k] >= 0.25 for k in ("share sqrt(m)", "share sqrt(n)", "share u"))
    family["mean norm vs exact mean (Hoeffding)"] = ip.hoeffding_p(float(s.mean()), mean_exact, draws, math.sqrt(2.0) - 1.0)
    rej = dict(zip(family, ip.holm(list(family.values()), H3_SMALL_ALPHA)))
    mean_ok = not rej["mean norm vs exact mean (Hoeffding)"]
    ok &= off_law <= 1e-12 and not any(rej.values())
    record("holds" if ok else "violated", observed=max(r["C_hat"] for r in rows), bound=1.0,
           table=rows + [{"family (Holm at H3_SMALL_ALPHA)": {k: {"p": v, "rejected": rej[k]} for k, v in family.items()}}],
           false_alarm=H3_SMALL_ALPHA,  # the binomial test per u and the Hoeffding p-value, one Holm family
           evidence="test", inside=True, inside_reason="independent mean-zero ±½ entries (sub-Gaussian) by construction",
           covers=["term: sqrt(m)", "term: sqrt(n)", "term: u"] if material else [],
           config={"m": m, "n": n, "draws": draws, "K": K, "family alpha (Holm)": H3_SMALL_ALPHA,
                   "share of term sqrt(m) (u=2)": rows[-1]["share sqrt(m)"],
                   "share of term sqrt(n) (u=2)": rows[-1]["share sqrt(n)"], "share of term u (u=2)": rows[-1]["share u"]},
           hypotheses={"max distance of a norm to the exact law's values": off_law, "sample mean": float(s.mean()),
                       "exact mean": mean_exact, f"Hoeffding half-width ({H3_SMALL_ALPHA:g})": hoeff},
           tightness="implied constant Ĉ with C = 1 (loose at this size: the claim's C is unspecified); pinned to its exact value")
    assert material, rows
    assert off_law <= 1e-12, off_law
    assert mean_ok, (float(s.mean()), mean_exact, hoeff)
    assert ok, rows


# Tightness band of Lemma H.3 (issue 15). For ±½ entries ‖A‖₂ → ½(√m+√n) (Bai–Yin), so the implied constant
# Ĉ = max_draws ‖A‖/(K(√m+√n+u)) has the closed-form value √ln2·(√m+√n)/(√m+√n+u) (K = ½/√ln2), written here
# apart from theory.papers.kou2023.init_probability. Ĉ is a maximum over 60–2000 draws of a norm whose mean
# sits below the edge at finite size (normalized mean 0.86 at (20, 5), 0.99 at (400, 200)) and whose upper
# fluctuations shrink with the size (Tracy–Widom scale (√m+√n)·(mn)^{-1/6}/…: a few % at (20, 5), ≈ 1% at
# (400, 200)): measured 1.005–1.071 over u ∈ {1, 2} and seeds 0, 3, 11, 17. The band [0.85, 1.25] (width ×1.47 < 2)
# contains that with room on both sides, and a factor 2 in the constant C or in K moves the ratio to ≈ 0.5 or ≈ 2.
H3_BAND = (0.85, 1.25)


def h3_psi2_half() -> float:
    """‖X‖_ψ₂ of X = ±½ from the definition inf{t > 0 : E exp(X²/t²) ≤ 2}: exp(1/(4t²)) = 2 ⇔ t = 1/(2√ln 2)."""
    return 1.0 / (2.0 * math.sqrt(math.log(2.0)))


def h3_chat_bai_yin(m: int, n: int, u: float) -> float:
    """Bai–Yin value of the implied constant: ½(√m+√n) / (K(√m+√n+u)) with K = h3_psi2_half()."""
    edge = 0.5 * (math.sqrt(m) + math.sqrt(n))
    return edge / (h3_psi2_half() * (math.sqrt(m) + math.sqrt(n) + u))


@pytest.mark.claim("kou2023/lem-H.3")
def test_h3_rejects_small_constant(ctx, record):
    """Mutation: C = 0.5 is too small (‖A‖ ≈ ½(√m+√n) > 0.5·K(√m+√n+u)); the test must reject it."""
    gen = record.generator({"mut": 1})
    s = ip.h3_norms(100, 50, 200, generator=gen, device=ctx.device)
    base = math.sqrt(100) + math.sqrt(50)
    t = failure_rate_test(int((s > 0.5 * ip.PSI2_HALF * (base + 1)).sum()), 200, 2 * math.exp(-1), H3_ALPHA)
    record("holds" if t.rejects else "violated", role="companion", observed=t.rate, bound=2 * math.exp(-1),
           config={"m": 100, "n": 50, "draws": 200, "alpha": H3_ALPHA, "u": 1},
           note=f"mutation C=0.5: failure rate {t.rate:.3f} (p={t.p_value:.1e}) vs 2e^-1; rejected: {t.rejects}")
    assert t.rejects


@pytest.mark.claim("kou2023/lem-H.3")
@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_h3_band_rejects_constant_off_by_two(ctx, record, factor):
    """Companion of the H.3 tightness band: the bound C·K(√m+√n+u) with its constant halved (C = ½, also rejected
    by the failure rate) or doubled (C = 2, a bound the failure rate alone cannot reject) gives an implied constant
    Ĉ/factor outside the Bai–Yin band. The wrong bound is written here, K·factor·(√m+√n+u), not taken from the check."""
    gen = record.generator({"band": factor})
    m, n, draws, u = 100, 50, 200, 1.0
    s = ip.h3_norms(m, n, draws, generator=gen, device=ctx.device)
    wrong = factor * (1.0 / (2.0 * math.sqrt(math.log(2.0)))) * (math.sqrt(m) + math.sqrt(n) + u)
    v = float(s.max() / wrong) / h3_chat_bai_yin(m, n, u)
    true_v = v * factor  # the same draws against the bound with C = 1: must be inside (control)
    rejected = not (H3_BAND[0] <= v <= H3_BAND[1])
    record("holds" if rejected else "violated", role="companion", observed=v, bound=list(H3_BAND),
           config={"m": m, "n": n, "draws": draws, "u": u, "C": factor},
           note=(f"bound with C = {factor:g}: implied constant / Bai–Yin value = {v:.3f} outside {list(H3_BAND)} "
                 f"(rejected: {rejected}); with C = 1 the same draws give {true_v:.3f}"))
    assert H3_BAND[0] <= true_v <= H3_BAND[1]
    assert rejected

