"""Discussion conjectures and remarks (``bantzis2025/rem-5``).

(3) Weak balancedness is an exact conservation law of gradient flow for bias-free ReLU nets (any loss):
d/dt[‖W_{ℓ,i·}‖² − ‖W_{ℓ+1,·i}‖²] = 0 per hidden neuron; full matrix balance W_ℓW_ℓᵀ − W_{ℓ+1}ᵀW_{ℓ+1} is not
conserved. Checked with fixed-step Heun (kinks are crossed, so the per-neuron drift must vanish linearly in
dt). (1)–(2) are conjectures: evidence only, recorded as not-applicable.
"""
import math

import pytest
import torch

from fixtures import data
from theory.papers.bantzis2025 import extend as EX
from theory.papers.bantzis2025 import localized as loc
from theory.papers.bantzis2025.ratios import ratios
from theory.sim.heun import heun_flow

from ._shared import circle_optimum


def _balances(ps):
    neuron = torch.cat([(ps[l] ** 2).sum(-1) - (ps[l + 1] ** 2).sum(-2) for l in range(len(ps) - 1)], 1)
    full = [ps[l] @ ps[l].transpose(-1, -2) - ps[l + 1].transpose(-1, -2) @ ps[l + 1] for l in range(len(ps) - 1)]
    return neuron, full


@pytest.mark.claim("bantzis2025/rem-5")
def test_weak_balancedness_is_conserved(record, ctx):
    gen = record.generator({"test": "balancedness"})
    X = torch.randn(12, 3, generator=gen, dtype=ctx.dtype)
    y = torch.randn(12, 1, generator=gen, dtype=ctx.dtype)
    E = 4
    th0 = [0.5 * torch.randn(E, a, b, generator=gen, dtype=ctx.dtype) for a, b in ((5, 3), (5, 5), (5, 5), (1, 5))]

    def mse(ps):
        return 0.5 * ((loc.output(ps, X) - y) ** 2).sum((-1, -2)) / X.shape[0]

    n0, f0 = _balances(th0)
    rows = []
    for dt in ctx.pick(quick=[4e-3, 2e-3], full=[4e-3, 2e-3, 1e-3, 5e-4]):
        res = heun_flow(mse, th0, dt=dt, steps=int(round(3.0 / dt)))
        n1, f1 = _balances(res.params)
        dn = float((n1 - n0).abs().max())
        df = max(float((a - b).abs().max()) for a, b in zip(f1, f0))
        moved = float(torch.sqrt(loc.sq_norm([a - b for a, b in zip(res.params, th0)])).min())
        rows.append({"dt": dt, "per-neuron drift": dn, "full-matrix drift": df, "min ‖θ(3) − θ(0)‖": moved})
    dn = [r["per-neuron drift"] for r in rows]
    df = [r["full-matrix drift"] for r in rows]
    conv = all(dn[i] / dn[i + 1] >= 1.6 for i in range(len(dn) - 1))        # → 0 with dt (first order)
    not_cons = min(df) > 100 * max(dn) and max(df) / min(df) < 1.2           # full balance: dt-independent drift
    assert conv and not_cons and min(r["min ‖θ(3) − θ(0)‖"] for r in rows) > 1e-2
    record("holds", observed=max(dn), bound=min(df), table=rows,
           config={"depth": 4, "width": 5, "init std": 0.5, "horizon": 3.0, "loss": "MSE"},
           series={"per-neuron": {"x": [r["dt"] for r in rows], "y": dn, "xlabel": "dt", "ylabel": "drift", "logx": True,
                                  "logy": True, "plot": "balance"},
                   "full matrix": {"x": [r["dt"] for r in rows], "y": df, "xlabel": "dt", "ylabel": "drift",
                                   "logx": True, "logy": True, "plot": "balance"}},
           note="Weak (per-neuron) balancedness is conserved: its drift is a discretization error halving with dt; "
                "full matrix balancedness is not conserved (dt-independent drift) — the wrong, stronger version "
                "is rejected.")


@pytest.mark.claim("bantzis2025/rem-5")
def test_conjectures_evidence(record, ctx):
    X, G = data.unit_circle_8(device=ctx.device)
    th3, s3 = circle_optimum(ctx.profile, ctx.seed, str(ctx.device))
    th5 = EX.extend(th3, X, G, 2, width=8).params
    r = ratios(th5, X)
    s5 = float(-loc.localized_loss(th5, X, G))
    assert s5 >= s3 * (1 - 1e-12)
    assert float(r.tail_W[0, 2:].max()) < 1e-10          # rank-one tail layers of the constructed optimum
    record("not-applicable", observed=s5, bound=None,
           table=[{"layer": l + 1, "tail W": float(r.tail_W[0, l]),
                   "ν": float(r.nu[0, l]) if l < 4 else None} for l in range(5)],
           note="Conjectures (1) large width finds the optimum — evidence in fig-2 (success fraction grows with width); "
                "(2) finitely many high-rank layers then rank-one identity-like layers — consistent on the circle data: "
                f"the depth-5 point EXTEND(θ̂_3) (speed {s5:.5f} ≥ ŝ(3) = {s3:.5f}) has rank-one linear layers 3–5. "
                "The converse (rank-one tails ⇒ s*(L) = s*(L_0)) and (4) BN-rank incremental learning are not "
                "numerically decidable.")
