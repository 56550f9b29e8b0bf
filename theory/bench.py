"""Benchmarks of the simulation core; prints one JSON document (not a timed test).

    python -m theory.bench [--only jacobian|ensemble] [--power-samples K] [--loop-members K] [--steps T]

1. Jacobian spectral norms of x ↦ ReLU(Wx), N=256 unit inputs, m=1024, d=784, float64:
   ``opnorm(method="lanczos")`` vs ``method="power"`` (Wang et al. Algorithm 2, tolerance 1e-6), both
   against dense SVD; speed-up target ≥ 50×, Lanczos error target ≤ 1e-8.
2. Ensemble GD: 64 Kou two-class nets (n=10, d=784, m=100, leaky ReLU) for 10⁴ steps, batched vs a
   loop over the 64 networks one at a time (same engine); target ≥ 10× on 2 CPU cores. Reported for
   the weight-space engine (``gd``) and the exact hidden-space engine (``gd_hidden``).
3. The same on CUDA when a GPU is present (skipped otherwise).

``--power-samples K`` / ``--loop-members K`` time the slow reference on K samples / members only
and scale linearly (per-sample and per-member costs are independent); the JSON says so. ``--engines
hidden`` skips the weight-space engine (its batched run is memory-bound on CPU: ~10 minutes).
Both Jacobian methods are warmed up on two samples first (torch.func's one-time start-up).
"""
from __future__ import annotations

import argparse
import json
import platform
import time

import torch

from fixtures import data
from theory.sim import jacobian, models, train


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def bench_jacobian(dev, power_samples: int, N=256, m=1024, d=784, seed=0) -> dict:
    g = torch.Generator(device=dev).manual_seed(seed)
    dt = torch.float64
    W = torch.randn(m, d, generator=g, dtype=dt, device=dev) / d ** 0.5
    X = data.unit_sphere(N, d, generator=g, device=dev)
    act = models.acts.get("relu")
    f = lambda x: act(W @ x)  # noqa: E731
    for method in ("lanczos", "power"):  # warm-up: torch.func's one-time start-up (~1 s) is not a per-call cost
        jacobian.opnorm(f, X[:2], method=method, tol=1e-6, max_iter=3)
    t = time.perf_counter()
    exact = jacobian.two_layer_hidden_opnorm_exact(W, X, act)
    _sync(dev)
    t_svd = time.perf_counter() - t
    t = time.perf_counter()
    lz, it = jacobian.opnorm(f, X, method="lanczos", tol=1e-9, return_iters=True, generator=g)
    _sync(dev)
    t_lz = time.perf_counter() - t
    k = min(power_samples, N)
    t = time.perf_counter()
    pw, pit = jacobian.opnorm(f, X[:k], method="power", tol=1e-6, return_iters=True, generator=g)
    _sync(dev)
    t_pw = (time.perf_counter() - t) * N / k
    rel = lambda a, b: float(((a - b).abs() / b).max())  # noqa: E731
    return {"N": N, "m": m, "d": d, "dtype": "float64", "device": str(dev),
            "svd_seconds": round(t_svd, 3), "lanczos_seconds": round(t_lz, 3),
            "lanczos_tol": 1e-9, "lanczos_iters_mean": float(it.float().mean()), "lanczos_iters_max": int(it.max()),
            "lanczos_max_rel_err_vs_svd": rel(lz, exact),
            "power_seconds": round(t_pw, 3), "power_tol": 1e-6, "power_timed_samples": k,
            "power_iters_mean": float(pit.float().mean()), "power_max_rel_err_vs_svd": rel(pw, exact[:k]),
            "speedup_lanczos_over_power": round(t_pw / t_lz, 1),
            "targets": {"speedup>=50": t_pw / t_lz >= 50, "lanczos_err<=1e-8": rel(lz, exact) <= 1e-8}}


def _kou(dev, E, seed, n=10, d=784, m=100):
    g = torch.Generator(device=dev).manual_seed(seed)
    X, _ = data.gram_controlled(n, d, 0.01, generator=g, device=dev)
    y = data.balanced_labels(n, device=dev)
    net = models.TwoClassNet.init(E, m, d, sigma0=0.01, act="leaky_relu", gamma=0.1, generator=g, device=dev)
    return net, X, y


ENGINES = {"weight": ("weight_space_gd", train.gd), "hidden": ("hidden_space_gd", train.gd_hidden)}


def bench_ensemble(dev, steps: int, loop_members: int, E=64, seed=0, engines=("weight", "hidden")) -> dict:
    out = {"E": E, "n": 10, "d": 784, "m": 100, "steps": steps, "device": str(dev), "dtype": "float64"}
    lr = 10 * 10 * 100 / 10  # η = nm/(10 R_max²), R_max = 1
    for name, engine in (ENGINES[e] for e in engines):
        net, X, y = _kou(dev, E, seed)
        W0 = net.W.clone()
        t = time.perf_counter()
        engine(net, X, y, loss="logistic", lr=lr, steps=steps, record=[steps])
        _sync(dev)
        t_batch = time.perf_counter() - t
        k = min(loop_members, E)
        t = time.perf_counter()
        for e in range(k):
            one = models.TwoClassNet(W0[e:e + 1].clone(), net.act)
            engine(one, X, y, loss="logistic", lr=lr, steps=steps, record=[steps])
        _sync(dev)
        t_loop = (time.perf_counter() - t) * E / k
        out[name] = {"batched_seconds": round(t_batch, 3), "loop_seconds": round(t_loop, 3),
                     "loop_timed_members": k, "speedup": round(t_loop / t_batch, 1),
                     "target_speedup>=10": t_loop / t_batch >= 10}
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("jacobian", "ensemble"))
    ap.add_argument("--power-samples", type=int, default=256)
    ap.add_argument("--loop-members", type=int, default=64)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--engines", default="weight,hidden",
                    help="GD engines to time, comma-separated: weight (autograd, W in R^{2m×d}), hidden (exact, "
                         "coefficient space)")
    a = ap.parse_args(argv)
    engines = tuple(e.strip() for e in a.engines.split(",") if e.strip())
    if not engines or set(engines) - set(ENGINES):
        ap.error(f"--engines takes a comma-separated subset of {sorted(ENGINES)}, got {a.engines!r}")
    res = {"torch": torch.__version__, "threads": torch.get_num_threads(), "machine": platform.machine(),
           "cpu": {}, "cuda": "skipped: no CUDA device" if not torch.cuda.is_available() else {}}
    devs = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    for dev in devs:
        slot = res["cpu"] if dev.type == "cpu" else res["cuda"]
        if a.only in (None, "jacobian"):
            slot["jacobian"] = bench_jacobian(dev, a.power_samples)
        if a.only in (None, "ensemble"):
            slot["ensemble_gd"] = bench_ensemble(dev, a.steps, a.loop_members, engines=engines)
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
