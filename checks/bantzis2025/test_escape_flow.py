"""Gradient flow on the localized loss along an escape direction, and the radial/angular split.

``bantzis2025/prop-2.2``, ``prop-A.2``: norm law along an escape ray (printed constant off by L^{L/2}).
``bantzis2025/eq-escape-time``: output bound and escape time (printed sign and constant wrong).
``bantzis2025/prop-A.1``: ∂_t‖θ‖ and ∂_t θ̄ identities. ``bantzis2025/eq-stime``: reparametrized time
(printed exponentials miss the factor L) and the scaling law θ_α(t) = αθ(α^{L−2}t).

Escape directions are exact interior ones of width-one nets (no kink nearby), so the flow is smooth
and scipy's DOP853 (rtol 1e-11, atol 1e-12) is accurate to ~1e-11 relative: tolerance 1e-9.
"""
import math

import numpy as np
import pytest
import torch

from theory import ClaimViolation, assert_claim
from theory.device import draw
from theory.errors import DivergenceError
from theory.papers.bantzis2025 import bounds as B
from theory.papers.bantzis2025 import escape as es
from theory.papers.bantzis2025 import localized as loc

from ._shared import stime_runs

TOL = 1e-9  # DOP853 at rtol 1e-11 over ≤ 7 sample times: global error ~1e-11 relative


def _data(record, ctx):
    """Gaussian (X, G), N = 10, d = 3, conditioned on having an interior width-one escape direction
    (not guaranteed by the paper; redraws are seeded — the first draw is kept when it qualifies)."""
    g = record.generator({"data": "gaussian N=10 d=3"})
    X, G, _, _ = es.gaussian_with_interior_direction(10, 3, generator=g, dtype=ctx.dtype, device=ctx.device)
    return X, G


def _norms(traj):
    n = traj[0].shape[0]
    return np.sqrt(sum((p.reshape(n, -1) ** 2).sum(1).cpu().numpy() for p in traj))


def _run_ray(X, G, L, start_scale=1.0):
    w, c, s = es.interior_escape_directions(X, G)[0]
    rho = es.direction_params(w, c, L)
    _, res = loc.def21_residual(rho, X, G)
    th0 = loc.scale(rho, torch.tensor([start_scale], dtype=X.dtype, device=X.device))
    r0 = math.sqrt(L) * start_scale
    T = 3.0 / s if L == 2 else 0.9 * B.blowup_time(r0, s, L)
    t = np.linspace(0, T, 7)
    tt, traj, sol = es.flow(th0, X, G, t, atol=1e-12 * start_scale)  # atol scaled with the state
    obs = _norms(traj)
    dirs = torch.cat([p.reshape(len(tt), -1) for p in traj], 1)
    dirs = dirs / dirs.norm(dim=1, keepdim=True)
    drift = float((dirs - dirs[0]).norm(dim=1).max())
    return dict(s=s, res=float(res), r0=r0, t=tt, obs=obs, traj=traj, drift=drift, rho=rho)


def _rel(pred, obs):
    with np.errstate(invalid="ignore"):
        e = np.abs(pred - obs) / obs
    return float(np.nan_to_num(e, nan=np.inf).max())


@pytest.mark.claim("bantzis2025/prop-2.2")
@pytest.mark.parametrize("L", [2, 3, 4, 5])
def test_norm_law_along_escape_direction_corrected(record, ctx, L):
    X, G = _data(record, ctx)
    rows, worst, first = [], 0.0, None
    for start in (1.0, 1e-3):
        r = _run_ray(X, G, L, start)
        first = first or r
        e_c = _rel(B.norm_law(r["t"], r["r0"], r["s"], L), r["obs"])
        e_p = _rel(B.norm_law(r["t"], r["r0"], r["s"], L, printed=True), r["obs"])
        e_bar = _rel(B.norm_law(r["t"], r["r0"], B.unit_speed(r["s"], L), L, printed=True), r["obs"])
        worst = max(worst, e_c)
        if L > 2:  # the horizon is 0.9 × the predicted blow-up time: there ‖θ‖^{2−L} = 0.1·r0^{2−L}, written apart from B
            growth = float(r["obs"][-1] / r["r0"]) / 10 ** (1 / (L - 2))
            worst = max(worst, abs(growth - 1))
        rows.append({"start": f"{start}·ρ", "speed s": r["s"], "Def-2.1 residual": r["res"],
                     "corrected rel err": e_c, "printed (s) rel err": e_p, "printed with s̄=L^{-L/2}s": e_bar,
                     "direction drift": r["drift"]})
        assert r["res"] < 1e-13 and r["drift"] < 1e-9
    r = first
    ok = worst <= TOL
    # as stated: "the normalized direction remains constant" (an exact consequence of ∇L0(ρ) = −sρ: identity)
    drift = max(x["direction drift"] for x in rows)
    hyp = dict(inside=True, inside_reason=f"classical escape direction (Def.-2.1 residual ≤ {max(x['Def-2.1 residual'] for x in rows):.0e}, "
                                          "asserted < 1e-13) on the radius-√L sphere, gradient flow on L0 (DOP853)")
    record("holds" if drift < 1e-9 else "violated", observed=drift, bound=1e-9, evidence="consistency", **hyp,
           covers=["direction constant"], config={"L": L, "starts": ["ρ", "1e-3·ρ"]},
           tightness="max ‖θ̄(t) − ρ̄‖ along the integrated flow (DOP853 rtol 1e-11)",
           note="Prop 2.2's first conclusion: θ̄ stays at ρ̄ (asserted above as a precondition of the norm-law test).")
    record("holds" if ok else "violated", observed=worst, bound=TOL, table=rows, reading="reconstructed",
           covers=["norm law L = 2" if L == 2 else "norm law L != 2"], evidence="test", **hyp,
           config={"L": L, "data": "gaussian N=10 d=3", "integrator": "DOP853 rtol 1e-11"},
           tightness="max relative error of the corrected norm law (tolerance: DOP853 global error)",
           series={f"L={L} observed": {"x": r["t"].tolist(), "y": r["obs"].tolist(), "xlabel": "t", "ylabel": "‖θ(t)‖",
                                      "logy": True, "plot": f"norm-law-L{L}"},
                   f"L={L} corrected": {"x": r["t"].tolist(), "y": B.norm_law(r["t"], r["r0"], r["s"], L).tolist(),
                                       "xlabel": "t", "ylabel": "‖θ(t)‖", "logy": True, "plot": f"norm-law-L{L}"},
                   f"L={L} printed": {"x": r["t"].tolist(),
                                     "y": np.nan_to_num(B.norm_law(r["t"], r["r0"], r["s"], L, printed=True),
                                                        nan=0.0).tolist(),
                                     "xlabel": "t", "ylabel": "‖θ(t)‖ (0 = past predicted blow-up)", "logy": False,
                                     "plot": f"norm-law-L{L}-printed"}},
           note="Reconstructed (not the printed statement): ‖θ‖^{2−L} = ‖θ_0‖^{2−L} + (2−L)L^{1−L/2}s(t−t_0), "
                "e^{s(t−t_0)} for L=2 (= printed law "
                f"with the unit-sphere speed s̄); printed law with s: relative error up to "
                f"{max(x['printed (s) rel err'] for x in rows):.3g} (table).")
    assert ok, rows


@pytest.mark.claim("bantzis2025/prop-2.2")
@pytest.mark.parametrize("L", [2, 3])
@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason="printed Prop 2.2 constant (2−L)Ls / e^{2st} uses the unit-sphere speed")
def test_norm_law_as_printed(record, ctx, L):
    """Quote (Prop 2.2): "‖θ(t)‖ = (‖θ(t_0)‖^{2−L} + (2−L)Ls(t−t_0))^{1/(2−L)} if L ≠ 2, ‖θ(t_0)‖exp(2s(t−t_0)) if
    L = 2", s the Def-2.1 speed. Size pinned: the measured rate ratio printed/flow equals L^{L/2}."""
    _printed_norm_law(record, ctx, L)


def _rate_ratio(r, L):
    """Rate of the printed law over the rate measured on the integrated flow: ‖θ‖^{2−L} (log‖θ‖ at L = 2) is exactly
    affine in t along the ray, so its slope is read from the first and last samples. Independent prediction:
    along θ = λρ Euler gives λ' = sλ^{L−1}, i.e. the true coefficient is L^{1−L/2}s (s at L = 2), so
    printed/true = L·s/(L^{1−L/2}s) = L^{L/2} (2s/s = 2 = 2^{2/2} at L = 2)."""
    t, obs = r["t"], r["obs"]
    if L == 2:
        measured = (math.log(obs[-1]) - math.log(obs[0])) / (t[-1] - t[0])
        printed = 2 * r["s"]
    else:
        measured = (obs[-1] ** (2 - L) - obs[0] ** (2 - L)) / (t[-1] - t[0])
        printed = (2 - L) * L * r["s"]
    return printed / measured


def _printed_norm_law(record, ctx, L, appendix=False):
    X, G = _data(record, ctx)
    r = _run_ray(X, G, L)
    e_p = _rel(B.norm_law(r["t"], r["r0"], r["s"], L, printed=True), r["obs"])
    tb = B.blowup_time(r["r0"], r["s"], L, printed=True)
    ratio = _rate_ratio(r, L)
    # the size of the discrepancy (plain assert: if it is not L^{L/2}, the finding itself is wrong)
    assert abs(ratio / L ** (L / 2) - 1) <= 1e-6, (ratio, L ** (L / 2))
    # observed: the printed law's rate over the flow's (1 if the law were right); its relative error e_p can be inf
    # (the printed law blows up before the horizon) and is in the finding
    record("expected-failure", observed=ratio, bound=1.0, config={"L": L, "relative error of the printed law": e_p},
           finding_type="false-as-stated",
           evidence="test", inside=True, inside_reason=f"classical escape direction (Def.-2.1 residual {r['res']:.0e}), "
                                                       "gradient flow on L0 from ρ (DOP853)",
           covers=["norm law"] if appendix else ["norm law L = 2" if L == 2 else "norm law L != 2"],
           tightness=f"rate of the printed law / rate of the flow = {ratio:.9g} = L^(L/2) (pinned to 1e-6)",
           finding=(f"With Def. 2.1's speed s (sphere ‖θ‖²=L) the printed law is wrong: at L={L} its relative error "
                    f"is {e_p:.3g} " + ("(it predicts e^(2st); the flow gives e^(st)). " if L == 2 else
                                         f"(predicted blow-up at t={tb:.3g}, true {B.blowup_time(r['r0'], r['s'], L):.3g}). ")
                    + f"Its rate is {ratio:.6g} = L^(L/2) times the flow's: the printed constant holds with "
                      "s̄ = L^(−L/2)s."))
    assert_claim(e_p <= TOL, f"printed Prop 2.2 norm law: relative error {e_p:.3g} > {TOL:g} at L={L}")


@pytest.mark.claim("bantzis2025/prop-A.2")
@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason="Prop A.2 restates the Prop 2.2 law with the "
                   "unit-sphere constant: off by L^{L/2} for the Def-2.1 speed")
def test_appendix_norm_law_as_printed(record, ctx):
    """Quote (Prop A.2, same law as Prop 2.2) at L = 3: rate ratio printed/flow pinned to 3^{3/2}."""
    _printed_norm_law(record, ctx, 3, appendix=True)


@pytest.mark.claim("bantzis2025/prop-A.2")
def test_proof_step_loss_along_ray(record, ctx):
    """Along the ray L0(θ(t)) = −s̄‖θ(t)‖^L with s̄ = L^{−L/2}s (the proof uses −s‖θ‖^L)."""
    X, G = _data(record, ctx)
    rows, worst = [], 0.0
    for L in (2, 3, 4, 5):
        r = _run_ray(X, G, L)
        n = r["t"].size
        L0 = loc.localized_loss([p.reshape(n, *p.shape[2:]) for p in r["traj"]], X, G).cpu().numpy()
        pred = -B.unit_speed(r["s"], L) * r["obs"] ** L
        err = float(np.max(np.abs(L0 - pred) / np.abs(pred)))
        err_p = float(np.max(np.abs(L0 + r["s"] * r["obs"] ** L) / np.abs(L0)))
        worst = max(worst, err)
        rows.append({"L": L, "rel err (s̄)": err, "rel err (printed s)": err_p, "L^{L/2}": L ** (L / 2)})
    # pointwise evaluation at integrated states: rounding only (1e-10); the printed step (s for s̄) must be
    # rejected by the same comparison at every depth (mutation result in the table)
    ok = worst <= 1e-10
    rejected = all(r["rel err (printed s)"] > 0.5 for r in rows)
    record("holds" if ok else "violated", observed=worst, bound=1e-10, table=rows, reading="reconstructed",
           evidence="test", inside=True, inside_reason="classical escape directions, gradient flow on L0 from ρ (DOP853)",
           note="The proof's step 'L0(θ̄(t_0)) = −s' is where the factor L^{L/2} is lost: with ‖ρ‖² = L, "
                f"L0(θ̄) = −L^{{−L/2}}s. The printed version is off by L^{{L/2}} (relative error ≥ "
                f"{min(r['rel err (printed s)'] for r in rows):.3g} in the table).")
    assert ok and rejected, rows


@pytest.mark.claim("bantzis2025/prop-A.2")
@pytest.mark.xfail(strict=True, raises=ClaimViolation, reason="proof step L0(θ(t)) = −s‖θ(t)‖^L is off by L^{L/2}")
def test_proof_step_as_printed(record, ctx):
    X, G = _data(record, ctx)
    r = _run_ray(X, G, 3)
    n = r["t"].size
    L0 = loc.localized_loss([p.reshape(n, *p.shape[2:]) for p in r["traj"]], X, G).cpu().numpy()
    err = float(np.max(np.abs(L0 + r["s"] * r["obs"] ** 3) / np.abs(L0)))
    # size: L0(θ(t)) / (−s‖θ(t)‖³) = 3^{−3/2} at every sample (Def. 2.1 puts ρ on the radius-√3 sphere)
    q = L0 / (-r["s"] * r["obs"] ** 3)
    assert float(np.max(np.abs(q * 3 ** 1.5 - 1))) <= 1e-8, q
    record("expected-failure", observed=err, bound=1e-10, config={"L": 3}, reading="proof-step",
           finding_type="false-as-stated", evidence="test",
           inside=True, inside_reason="classical escape direction at L = 3, gradient flow on L0 from ρ (DOP853)",
           tightness=f"L0(θ(t))/(−s‖θ‖³) = {float(q.mean()):.9f} = 3^(−3/2) (pinned to 1e-8)",
           finding=f"Proof of Prop A.2, 'with L0(θ̄(t_0)) = −s we deduce L0(θ(t)) = −s‖θ(t)‖^L': along the escape ray "
                   f"L0(θ(t)) = −3^(−3/2)s‖θ‖³, not −s‖θ‖³ (relative error {err:.3g}); this step loses L^(L/2).")
    assert_claim(err <= 1e-10, f"proof step L0(θ(t)) = −s‖θ(t)‖^L: relative error {err:.3g}")


@pytest.mark.claim("bantzis2025/eq-escape-time")
def test_output_bound(record, ctx):
    gen = record.generator({"test": "output bound"})
    rows, worst = [], 0.0
    for L, n in ((2, 8), (3, 8), (5, 6), (8, 4)):
        X = draw(torch.randn, 12, 5, generator=gen, dtype=ctx.dtype, device=ctx.device)
        th = [draw(torch.randn, ctx.pick(quick=2000, full=20000), a, b, generator=gen, dtype=ctx.dtype, device=ctx.device)
              for a, b in zip([n] * (L - 1) + [2], [5] + [n] * (L - 1))]
        th = loc.scale(th, draw(torch.rand, th[0].shape[0], generator=gen, dtype=ctx.dtype, device=ctx.device) * 3)
        Y = loc.output(th, X)
        bound = (torch.sqrt(loc.sq_norm(th)) / math.sqrt(L)) ** L * X.norm()
        opprod = torch.stack([torch.linalg.matrix_norm(w, ord=2) for w in th], 1).prod(1) * X.norm()
        ratio = Y.norm(dim=(-1, -2)) / bound
        mid = float((Y.norm(dim=(-1, -2)) / opprod).max())
        worst = max(worst, float(ratio.max()))
        rows.append({"L": L, "width": n, "max ‖Y‖/((‖θ‖/√L)^L‖X‖)": float(ratio.max()),
                     "max ‖Y‖/(Π‖W‖_op‖X‖)": mid})
        rows[-1]["Π‖W‖_op ≤ (‖θ‖/√L)^L"] = float((opprod / bound).max()) <= 1 + 1e-12
    # equality case: X = x1ᵀ, width-one chain W_1 = a x̂ᵀ, W_ℓ = [a]
    x = torch.tensor([0.6, -0.8, 0.0, 0.0, 0.0], dtype=ctx.dtype, device=ctx.device) * 2.5
    X = x.expand(7, 5)
    eq = []
    for L in (2, 3, 6):
        a = 1.3
        th = [a * (x / x.norm()).reshape(1, 1, 5)] + [torch.full((1, 1, 1), a, dtype=ctx.dtype, device=ctx.device)] * (L - 1)
        rat = float(loc.output(th, X).norm() / ((loc.sq_norm(th).sqrt() / math.sqrt(L)) ** L * X.norm()))
        eq.append(rat)
    # adversarial search: Adam on θ maximizing ‖Y‖_F/((‖θ‖/√L)^L‖X‖_F) (scale-invariant in θ), random X
    adv_rows = []
    starts, steps = ctx.pick(quick=32, full=512), ctx.pick(quick=100, full=1000)
    for L, n in ((3, 8), (5, 6)):
        X = draw(torch.randn, 12, 5, generator=gen, dtype=ctx.dtype, device=ctx.device)
        th = [draw(torch.randn, starts, a, b, generator=gen, dtype=ctx.dtype, device=ctx.device).requires_grad_(True)
              for a, b in zip([n] * (L - 1) + [2], [5] + [n] * (L - 1))]
        opt = torch.optim.Adam(th, lr=0.05)
        best = torch.zeros(starts, dtype=ctx.dtype, device=ctx.device)
        for _ in range(steps + 1):
            rat = loc.output(th, X).norm(dim=(-1, -2)) / ((torch.sqrt(loc.sq_norm(th)) / math.sqrt(L)) ** L * X.norm())
            best = torch.maximum(best, rat.detach())
            opt.zero_grad()
            (-rat.sum()).backward()
            opt.step()
        worst = max(worst, float(best.max()))
        adv_rows.append({"L": L, "width": n, "adversarial search": f"{starts} starts × {steps} Adam steps",
                         "max ‖Y‖/((‖θ‖/√L)^L‖X‖)": float(best.max()), "median": float(best.median())})
    # float64 products of ≤ 8 matrices: 1e-12 relative
    ok = (worst <= 1 + 1e-12 and all(r["max ‖Y‖/(Π‖W‖_op‖X‖)"] <= 1 + 1e-12 for r in rows)
          and all(r["Π‖W‖_op ≤ (‖θ‖/√L)^L"] for r in rows))
    # band: the equality case attains 1 (so any constant < 1 fails) and nothing exceeds it
    tight = max(abs(r - 1) for r in eq) <= 1e-12
    worst = max(worst, max(eq))
    record("holds" if ok and tight else "violated", observed=worst, bound=1.0, table=rows + adv_rows,
           covers=["(a) ||Y|| <= prod ||W_l||_op ||X||", "(a) <= (r/sqrt L)^L ||X||"], evidence="test", worst_case=True,
           inside=True, inside_reason="(a) holds for any θ and X: random nets, the search and the equality case",
           tightness=f"max ratio over random nets, the adversarial search and the equality case {worst:.15f}; "
                     f"search alone {max(r['max ‖Y‖/((‖θ‖/√L)^L‖X‖)'] for r in adv_rows):.6f}",
           note="‖Y_θ‖_F ≤ Π‖W_ℓ‖_op‖X‖_F ≤ (‖θ‖/√L)^L‖X‖_F; equality attained (ratio 1 to "
                f"{max(abs(r - 1) for r in eq):.1e}), so any constant < 1 (e.g. 0.99) would be violated.")
    assert ok and tight, (rows, eq)


def _hit_times(X, G, L, factors):
    w, c, s = es.interior_escape_directions(X, G)[0]
    rho = es.direction_params(w, c, L)
    r0 = math.sqrt(L)
    out = []
    for f in factors:
        T = 2 * B.escape_time(f * r0, r0, s, L)
        _, _, sol = es.flow(rho, X, G, [0.0, T], max_norm=f * r0)
        out.append((f, float(sol.t_events[0][0]), s, r0))
    return out


@pytest.mark.claim("bantzis2025/eq-escape-time")
def test_escape_time_corrected(record, ctx):
    X, G = _data(record, ctx)
    rows, worst = [], 0.0
    for L in (2, 3, 4):
        for f, t1, s, r0 in _hit_times(X, G, L, (2.0, 10.0)):
            pc = B.escape_time(f * r0, r0, s, L)
            pp = B.escape_time(f * r0, r0, s, L, printed=True)
            # the reported printed value is the printed formula, written out here: (‖θ_0‖^{2−L} + r^{2−L})/((L−2)Ls),
            # log(r/‖θ_0‖)/(2s) at L = 2
            r = f * r0
            pp_ref = math.log(r / r0) / (2 * s) if L == 2 else (r0 ** (2 - L) + r ** (2 - L)) / ((L - 2) * L * s)
            assert abs(pp - pp_ref) <= 1e-12 * abs(pp_ref), (L, f, pp, pp_ref)
            e = abs(pc - t1) / t1
            worst = max(worst, e)
            rows.append({"L": L, "r/‖θ_0‖": f, "observed t_1": t1, "corrected": pc, "printed": pp})
    ok = worst <= TOL
    record("holds" if ok else "violated", observed=worst, bound=TOL, table=rows, reading="reconstructed",
           covers=["(b) escape time L != 2", "(b) escape time L = 2"], evidence="test",
           inside=True, inside_reason="gradient flow on L0 started on a classical escape ray (DOP853 hitting times)",
           tightness="max relative error of the corrected escape time vs the DOP853 hitting time",
           note="Reconstructed (not the printed formula): t_1(r) − t_0 = (‖θ_0‖^{2−L} − r^{2−L})/((L−2)L^{1−L/2}s); "
                "log(r/‖θ_0‖)/s for L = 2.")
    assert ok, rows


ESCAPE_VARIANTS = {
    # name: (L, sign, unit speed s̄?, what is wrong, reading, finding type). The printed formula itself (both errors,
    # and the L = 2 case) is the as-stated reading; a variant with one error corrected is our reconstruction, shown
    # beside the verdict to isolate each error.
    "printed (sign and constant), L=3": (3, +1, False, "'+r^(2−L)' and the Def-2.1 speed s in (L−2)Ls",
                                         "as-stated", "false-as-stated"),
    "printed sign only (constant corrected with s̄), L=3": (3, +1, True, "'+r^(2−L)' alone", "reconstructed", "typo"),
    "printed sign only (constant corrected with s̄), L=4": (4, +1, True, "'+r^(2−L)' alone", "reconstructed", "typo"),
    "printed constant only (sign corrected), L=3": (3, -1, False, "the constant (L−2)Ls with the Def-2.1 speed s",
                                                    "reconstructed", "false-as-stated"),
    "printed L=2 form log(r/‖θ_0‖)/(2s)": (2, -1, False, "the factor 2 (the L=2 case of the same constant)",
                                            "as-stated", "false-as-stated"),
}


def _variant_ratio(f, L, sign, unit):
    """Independent closed form of variant/true for r = f‖θ_0‖ (θ_0 = ρ, ‖θ_0‖ = √L): with a = ‖θ_0‖^{2−L},
    b = r^{2−L}, the true time is (a − b)/((L−2)L^{1−L/2}s) and the variant (a + sign·b)/((L−2)Lσ), σ ∈ {s̄, s},
    so the ratio is (a + sign·b)/(a − b)·(1 if σ = s̄ else L^{−L/2}); at L = 2 it is s/(2σ) (1/2 for σ = s)."""
    if L == 2:
        return 0.5 * (2 ** (2 / 2) if unit else 1.0)
    a, b = math.sqrt(L) ** (2 - L), (f * math.sqrt(L)) ** (2 - L)
    return (a + sign * b) / (a - b) * (1.0 if unit else L ** (-L / 2))


@pytest.mark.claim("bantzis2025/eq-escape-time")
@pytest.mark.parametrize("variant", list(ESCAPE_VARIANTS))
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="printed escape time: '+r^{2−L}' should be '−r^{2−L}', and (L−2)Ls / 2s use the "
                          "unit-sphere speed; each error is shown on its own")
def test_escape_time_as_printed(record, ctx, variant):
    """Each printed error on its own: the sign with the corrected constant, the constant with the corrected
    sign, both, and the L = 2 formula; the corrected form (sign −, s̄) passes in test_escape_time_corrected."""
    L, sign, unit, what, reading, ftype = ESCAPE_VARIANTS[variant]
    X, G = _data(record, ctx)
    rows = []
    for f, t1, s, r0 in _hit_times(X, G, L, (2.0, 10.0)):
        pv = B.escape_time_form(f * r0, r0, s, L, sign=sign, unit=unit)
        rows.append({"r/‖θ_0‖": f, "observed t_1 − t_0": t1, "variant": pv, "rel err": abs(pv - t1) / t1,
                     "corrected": B.escape_time(f * r0, r0, s, L), "variant/observed": pv / t1,
                     "predicted ratio (closed form)": _variant_ratio(f, L, sign, unit)})
    err = max(r["rel err"] for r in rows)
    # control: the corrected formula matches the same integrated hitting times (plain assert: not the finding)
    assert max(abs(r["corrected"] - r["observed t_1 − t_0"]) / r["observed t_1 − t_0"] for r in rows) <= TOL
    # size of the discrepancy: variant/observed equals its closed form (DOP853 hitting times: 1e-8 relative)
    assert all(abs(r["variant/observed"] / r["predicted ratio (closed form)"] - 1) <= 1e-8 for r in rows), rows
    # size of the discrepancy: the printed/observed factor farthest from 1 (the analysis shows max(r, 1/r))
    factor = max((r["variant/observed"] for r in rows), key=lambda x: abs(math.log(x)))
    record("expected-failure", observed=factor, bound=1.0, table=rows, reading=reading, finding_type=ftype,
           evidence="test", inside=True,
           inside_reason="gradient flow on L0 started on a classical escape ray (DOP853 hitting times)",
           covers=["(b) escape time L = 2" if L == 2 else "(b) escape time L != 2"],
           tightness="variant/observed hitting time = " + ", ".join(
               f"{r['variant/observed']:.6g} (r = {r['r/‖θ_0‖']:g}‖θ_0‖)" for r in rows) + " (closed form, pinned to 1e-8); "
               f"observed = the factor farthest from 1 against 1 (relative error {err:.3g} against TOL = {TOL:g} in the finding)",
           config={"L": L, "sign": "+" if sign > 0 else "−", "speed": "s̄ = L^(−L/2)s" if unit else "s (Def. 2.1)"},
           finding=(f"Escape time with {what} is wrong: relative error {err:.3g} against the integrated hitting "
                    f"time at L={L} (the corrected (‖θ_0‖^(2−L) − r^(2−L))/((L−2)L^(1−L/2)s) matches to "
                    f"{max(abs(r['corrected'] - r['observed t_1 − t_0']) / r['observed t_1 − t_0'] for r in rows):.1e})."))
    assert_claim(err <= TOL, f"{variant}: relative error {err:.3g} > {TOL:g}")


@pytest.mark.claim("bantzis2025/prop-A.1")
def test_gradient_flow_decomposition_pointwise(record, ctx):
    gen = record.generator({"test": "A.1"})
    X = torch.randn(12, 4, generator=gen, dtype=ctx.dtype, device=gen.device)
    G = torch.randn(12, generator=gen, dtype=ctx.dtype, device=gen.device)
    rows, worst = [], 0.0
    E = ctx.pick(quick=200, full=1000)
    for L in (2, 3, 4, 6):
        th = loc.scale(loc.random_sphere(E, [4] + [8] * (L - 1) + [1], generator=gen, dtype=ctx.dtype),
                       torch.rand(E, generator=gen, dtype=ctx.dtype, device=gen.device) * 2 + 0.1)
        nrm = torch.sqrt(loc.sq_norm(th))
        bar = loc.scale(th, 1 / nrm)
        _, g = loc.gradient(th, X, G)
        vb, gb = loc.gradient(bar, X, G)
        radial = -loc.inner(bar, g)
        rad_pred = -L * nrm ** (L - 1) * vb
        e1 = float(((radial - rad_pred).abs() / rad_pred.abs().clamp_min(1e-300)).max())
        # ∂_t θ̄ = −(I − θ̄θ̄ᵀ)∇L0(θ)/‖θ‖ = −‖θ‖^{L−2}(I − θ̄θ̄ᵀ)∇L0(θ̄)
        ang = [-(a - loc._bcast(loc.inner(bar, g), b) * b) / loc._bcast(nrm, a) for a, b in zip(g, bar)]
        pred = [-loc._bcast(nrm ** (L - 2), a) * (a - loc._bcast(loc.inner(bar, gb), b) * b) for a, b in zip(gb, bar)]
        diff = torch.sqrt(loc.sq_norm([a - b for a, b in zip(ang, pred)]))
        e2 = float((diff / torch.sqrt(loc.sq_norm(pred)).clamp_min(1e-300)).max())
        e3 = float((torch.sqrt(loc.sq_norm([a - loc._bcast(nrm ** (L - 1), b) * b for a, b in zip(g, gb)]))
                    / torch.sqrt(loc.sq_norm(g))).max())
        # the same radial identity without the factor L is rejected, judged on the members where L0(θ̄) ≠ 0 (a net
        # whose ReLUs are all off on X has L0 = 0 and both sides 0: no relative error; 1000 draws meet some)
        live = vb != 0
        wrong = float(((radial + nrm ** (L - 1) * vb)[live].abs() / rad_pred[live].abs()).median())
        worst = max(worst, e1, e2, e3)
        rows.append({"L": L, "radial rel err": e1, "angular rel err": e2, "∇L0(θ)=‖θ‖^{L−1}∇L0(θ̄) err": e3,
                     "without factor L (median rel err)": wrong, "members with L0(θ̄) = 0": int((~live).sum())})
    # products of ≤ 6 layers in float64; relative errors ~1e-15, except members with tiny L0 (cancellation)
    ok = worst <= 1e-9
    rejected = all(r["without factor L (median rel err)"] > 0.3 for r in rows)
    record("holds" if ok else "violated", observed=worst, bound=1e-9, table=rows, config={"θ per depth": E, "width": 8},
           evidence="consistency", covers=["radial equation", "angular equation"],
           inside=True, inside_reason="L0 homogeneous of degree L; random θ, off the ReLU kinks almost surely",
           note="Euler's identity makes both formulas exact wherever L0 is differentiable; the radial formula "
                f"without the factor L is rejected (median relative error ≥ "
                f"{min(r['without factor L (median rel err)'] for r in rows):.2f}).")
    assert ok and rejected, rows


# Sec. 2.1 formulas against the integrated flow (eq-stime). Kink crossings make each run's Heun error first order with
# a constant that depends on where in a step the kink falls; the corrected forms are judged on the mean over runs
# (32 runs: at 8 runs, --seed 41 had 4 of 8 runs escape and this phase noise put the 99% CI of the time form's
# fitted exponent at (−0.25, 1.91); at 32 runs its lower end was ≥ 0.67 over seeds 0–59).
STIME_MEAN_TOL = 1e-4   # mean over runs at the smallest dt (seeds 0–59: ≤ 9.2e-6)
STIME_MAX_TOL = 1e-3    # every run at the smallest dt (seeds 0–59: ≤ 8.7e-5)
# the printed log-norm × L against the flow's, on points with |log(‖θ‖/‖θ_0‖)| ≥ 0.05 (_shared.stime_runs): a
# log-norm error e of the integration shows up there as at most e/0.05, so the pin is STIME_MAX_TOL/0.05; a wrong
# factor (L ± 1 for L) is off by ≥ 25 %.
LOGQ_TOL = STIME_MAX_TOL / 0.05


def _ols_reference(x, y, alpha=0.01):
    """Slope and intercept 1 − α intervals of the least-squares line by the textbook formulas (n − 2 degrees of
    freedom), written apart from theory.stats to pin fit_power / fit_affine inside this check: their intervals decide
    the convergence (k > 0) and the non-zero limit of the printed forms."""
    from scipy import stats as sst

    x, y = np.asarray(x, float), np.asarray(y, float)
    n, xm, ym = x.size, x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    b = float(((x - xm) * (y - ym)).sum()) / sxx
    a = ym - b * xm
    s2 = float(((y - a - b * x) ** 2).sum()) / (n - 2)
    q = float(sst.t.isf(alpha / 2, n - 2))
    hb, ha = q * math.sqrt(s2 / sxx), q * math.sqrt(s2 * (1 / n + xm ** 2 / sxx))
    return (b - hb, b + hb), (a - ha, a + ha)


def _same_interval(got, want):
    half = (want[1] - want[0]) / 2
    return all(abs(g - w) <= 1e-9 * (half + abs(w)) for g, w in zip(got, want))


def _stime_fits(ctx):
    """Per L and formula: the errors over the dt grid, a power fit err ≈ C·dt^k (corrected: must converge,
    the 99% CI of k excludes 0) and an affine fit err ≈ e_0 + b·dt whose intercept e_0 is the dt → 0 limit of the
    error (printed: bounded away from 0)."""
    from theory.stats import fit_affine, fit_power

    rows = stime_runs(ctx.profile, ctx.seed, str(ctx.device))
    fits = {}
    for L in sorted({r["L"] for r in rows}):
        rs = [r for r in rows if r["L"] == L]
        dts = [r["dt"] for r in rs]
        for key in ("norm corrected", "time corrected", "norm printed", "time printed"):
            ys = [r[f"{key} (member mean)"] for r in rs]
            fits[(L, key)] = {"dt": dts, "err": ys, "max": [r[key] for r in rs], "power": fit_power(dts, ys),
                              "affine": fit_affine(dts, ys)}
            f = fits[(L, key)]
            assert _same_interval(f["power"].ci, _ols_reference(np.log(dts), np.log(ys))[0]) \
                and _same_interval(f["affine"].intercept_ci, _ols_reference(dts, ys)[1]) \
                and math.isclose(f["power"].r2, float(np.corrcoef(np.log(dts), np.log(ys))[0, 1]) ** 2, rel_tol=1e-9), \
                "theory.stats fits differ from the textbook least-squares intervals and r²"
    return rows, fits


def _fit_row(L, key, f):
    p, a = f["power"], f["affine"]
    return {"L": L, "formula": key, "mean-over-runs errors (dt grid)": f["err"], "max errors (dt grid)": f["max"],
            "fitted exponent k": p.exponent,
            "99% CI of k": p.ci, "limit dt→0 (affine intercept)": a.intercept, "99% CI of limit": a.intercept_ci}


@pytest.mark.claim("bantzis2025/eq-stime")
def test_reparametrized_time_formulas_corrected(record, ctx):
    """Sec. 2.1 with the factor L: ‖θ(τ)‖ = ‖θ_0‖e^{−L∫L0(θ̄)dτ} and t(τ) = ‖θ_0‖^{2−L}∫exp((L−2)L∫L0)dτ.

    The integrated flow (batched Heun) is compared with both formulas on a geometric dt grid. Heun is
    second order between kinks and first order across them, so the corrected errors (mean over runs of
    each run's max relative error) must fall like dt^k, k ≈ 1–2 (asserted: the 99% CI of the fitted k
    excludes 0, and at the smallest dt the mean over runs is ≤ STIME_MEAN_TOL and every run ≤ STIME_MAX_TOL);
    the printed forms are asserted in the xfail tests below (their dt → 0 limit is not 0)."""
    rows, fits = _stime_fits(ctx)
    table, ok = [], True
    for (L, key), f in fits.items():
        table.append(_fit_row(L, key, f))
        if "corrected" in key:
            ok &= f["power"].ci[0] > 0 and f["err"][-1] <= STIME_MEAN_TOL and f["max"][-1] <= STIME_MAX_TOL
    corr = [t for t in table if "corrected" in t["formula"]]
    series = {}
    for (L, key), f in fits.items():
        series[f"L={L} {key}"] = {"x": f["dt"], "y": f["err"], "xlabel": "dt", "ylabel": "relative error (mean over runs)",
                                  "logx": True, "logy": True, "plot": f"stime-L{L}"}
    record("holds" if ok else "violated", observed=max(f["err"][-1] for (L, k), f in fits.items() if "corrected" in k),
           bound=STIME_MEAN_TOL, table=rows + table, series=series, reading="reconstructed", covers=["norm formula", "time change"],
           evidence="test", inside=True, inside_reason="gradient flow on L0 (not on L), batched Heun from random starts",
           config={"dt grid": sorted({r["dt"] for r in rows}), "depths": sorted({r["L"] for r in rows}), "width": 4,
                   "runs": rows[0]["runs"], "horizon": 10.0, "norm cap": 3},
           tightness="observed = corrected-form error at the smallest dt; fitted exponents "
                     + ", ".join(f"{t['formula']} (L={t['L']}): k = {t['fitted exponent k']:.2f}" for t in corr),
           note="Reconstructed (not the printed formulas): both corrected formulas (with the factor L) converge to "
                "the flow as dt → 0; the printed ones "
                "(without L) have a non-zero dt → 0 limit (table: affine intercepts).")
    assert ok, table


def _printed_stime(record, ctx, what):
    rows, fits = _stime_fits(ctx)
    table = [_fit_row(L, k, f) for (L, k), f in fits.items() if k == f"{what} printed" or k == f"{what} corrected"]
    # control (plain assert): the corrected form converges on the same runs
    assert all(fits[(L, f"{what} corrected")]["power"].ci[0] > 0 for L in {L for L, _ in fits})
    lim = min(fits[(L, f"{what} printed")]["affine"].intercept_ci[0] for L in {L for L, _ in fits})
    worst = max(fits[(L, f"{what} printed")]["max"][-1] for L in {L for L, _ in fits})
    dt_min = min(r["dt"] for r in rows)
    logq = max(r["printed log-norm × L / flow log-norm − 1 (max)"] for r in rows if r["dt"] == dt_min)
    return table, lim, worst, logq, {"dt grid": sorted({r["dt"] for r in rows}), "depths": sorted({L for L, _ in fits})}


@pytest.mark.claim("bantzis2025/eq-stime")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="printed Sec. 2.1 formula ‖θ(τ)‖ = ‖θ_0‖exp(−∫L0) misses the factor L")
def test_reparametrized_norm_as_printed(record, ctx):
    """Quote (Sec. 2.1): "‖θ(s)‖ = ‖θ(0)‖exp(−∫_0^s L0(θ̄(s_1))ds_1)". Size pinned: the printed log-norm is 1/L of the
    flow's (the factor L of the preceding ODE ∂_s‖θ‖ = −L‖θ‖L0(θ̄) is dropped when integrating)."""
    table, lim, worst, logq, cfg = _printed_stime(record, ctx, "norm")
    assert logq <= LOGQ_TOL, logq     # size: log-norm off by exactly the factor L (to the integration's accuracy)
    record("expected-failure", observed=worst, bound=STIME_MAX_TOL, table=table, config=cfg, finding_type="typo",
           covers=["norm formula"], evidence="test",
           inside=True, inside_reason="gradient flow on L0 (not on L), batched Heun from random starts",
           tightness=f"printed log-norm × L = flow log-norm to {logq:.1e} at the smallest dt (pinned ≤ {LOGQ_TOL:g})",
           finding=f"Printed ‖θ(τ)‖ = ‖θ_0‖exp(−∫L0(θ̄)dτ) does not describe the flow: its error does not vanish as "
                   f"dt → 0 (lower 99% limit of the extrapolated mean-over-runs error {lim:.3g}; max {worst:.3g} at the "
                   f"smallest dt); its log-norm is 1/L of the flow's (to {logq:.1e}), i.e. the factor L of the printed "
                   "ODE is dropped, and the form with the factor L converges.")
    assert_claim(lim <= 0, f"printed norm formula: dt→0 error ≥ {lim:.3g}")


@pytest.mark.claim("bantzis2025/eq-stime")
@pytest.mark.xfail(strict=True, raises=ClaimViolation,
                   reason="printed Sec. 2.1 time change t(τ) = ‖θ_0‖^{2−L}∫exp((L−2)∫L0) misses the factor L")
def test_reparametrized_time_change_as_printed(record, ctx):
    """Quote (Sec. 2.1): "t(s) = ‖θ(0)‖^{2−L}∫_0^s exp((L−2)∫_0^{s_1}L0(θ̄(s_2))ds_2)ds_1". Size pinned: the dt → 0
    limit of its error is bounded away from 0 (99% lower limit of the affine extrapolation > 1e-2)."""
    table, lim, worst, _, cfg = _printed_stime(record, ctx, "time")
    assert lim > 1e-2, lim        # size: a dt-independent error of at least 1% (not a discretization effect)
    record("expected-failure", observed=worst, bound=STIME_MAX_TOL, table=table, config=cfg, finding_type="typo",
           covers=["time change"], evidence="test",
           inside=True, inside_reason="gradient flow on L0 (not on L), batched Heun from random starts", tightness=f"99% lower limit of the dt → 0 error of the printed form: {lim:.3g}",
           finding=f"Printed t(τ) = ‖θ_0‖^(2−L)∫exp((L−2)∫L0)dτ does not describe the flow: its error does not vanish "
                   f"as dt → 0 (lower 99% limit of the extrapolated mean-over-runs error {lim:.3g}; max {worst:.3g} at "
                   f"the smallest dt), while the form with (L−2)L converges.")
    assert_claim(lim <= 0, f"printed time change: dt→0 error ≥ {lim:.3g}")


@pytest.mark.claim("bantzis2025/eq-stime")
def test_scaling_law(record, ctx):
    """θ_α(t) = αθ(α^{L−2}t) solves GF from αθ_0 (scale invariance of the τ-trajectory)."""
    gen = record.generator({"test": "scaling"})
    X, G, dirs, _ = es.gaussian_with_interior_direction(10, 3, generator=gen, dtype=ctx.dtype, device=ctx.device)
    w, c, s = dirs[0]
    rows, worst = [], 0.0
    for L in (3, 4):
        rho = es.direction_params(w, c, L)
        # a generic start near (not on) the ray, still inside one activation region (smooth flow)
        th0 = [p + 0.02 * draw(torch.randn, p.shape, generator=gen, dtype=ctx.dtype, device=ctx.device) for p in rho]
        th0 = loc.scale(th0, torch.tensor([0.3], dtype=ctx.dtype, device=ctx.device))
        # the flows below follow one path up to τ = T·2^{L−2} (the wrong version at α = 2): the horizon T starts at 0.2
        # and is halved until that path is smooth (DOP853 fails where it reaches a ReLU kink: --seed 32), so every draw
        # is judged on a smooth stretch of its own flow; T is recorded
        T = 0.2
        while True:
            try:
                es.flow(th0, X, G, np.linspace(0, T * 2.0 ** (L - 2), 5))
                break
            except DivergenceError:
                T /= 2
                assert T > 1e-4, f"L={L}: no smooth stretch of the flow from the perturbed ray start"
        t = np.linspace(0, T, 5)
        _, base, _ = es.flow(th0, X, G, t)
        for alpha in (0.5, 2.0):
            _, tr, _ = es.flow(loc.scale(th0, torch.tensor([alpha], dtype=ctx.dtype, device=ctx.device)), X, G, t / alpha ** (L - 2))
            e = max(float((a - alpha * b).norm() / (alpha * b).norm()) for a, b in zip(tr, base))
            wrong = max(float((a - alpha * b).norm() / (alpha * b).norm()) for a, b in
                        zip(es.flow(loc.scale(th0, torch.tensor([alpha], dtype=ctx.dtype, device=ctx.device)), X, G, t)[1], base))
            worst = max(worst, e)
            rows.append({"L": L, "alpha": alpha, "horizon T": T, "rel err αθ(α^{L−2}t)": e, "rel err without time change": wrong})
    # DOP853 at rtol 1e-11 on a smooth flow: trajectories agree to ~1e-10; 1e-8 leaves margin. The wrong version
    # (no time change) is rejected when it misses by 100× that tolerance: its error is the flow's displacement over
    # the horizon, which depends on the draw (8e-4 at seed 10, where 1e-3 had been required)
    ok = worst <= 1e-8
    rejected = all(r["rel err without time change"] > 100 * 1e-8 for r in rows)
    record("holds" if ok else "violated", observed=worst, bound=1e-8, table=rows, evidence="consistency",
           covers=["scale invariance"], inside=True,
           inside_reason="α > 0, gradient flow on L0 over a smooth stretch (no kink crossed: DOP853 succeeded)",
           note="GF from αθ_0 equals αθ(α^{L−2}t); without the time change the comparison fails (relative error ≥ "
                f"{min(r['rel err without time change'] for r in rows):.2g}, table).")
    assert ok and rejected, rows
