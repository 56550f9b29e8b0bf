"""Benchmarks of the simulation core; prints one JSON document (not a timed test).

    python -m theory.bench [--only jacobian|ensemble|minibatch|step] [--power-samples K] [--loop-members K] [--steps T]
                           [--engines weight,weight-autograd,hidden] [--epochs K] [--threads K] [--step-steps T]

1. Jacobian spectral norms of x ↦ ReLU(Wx), N=256 unit inputs, m=1024, d=784, float64:
   ``opnorm(method="lanczos")`` vs ``method="power"`` (Wang et al. Algorithm 2, tolerance 1e-6), both
   against dense SVD; speed-up target ≥ 50×, Lanczos error target ≤ 1e-8.
2. Ensemble GD: 64 Kou two-class nets (n=10, d=784, m=100, leaky ReLU) for 10⁴ steps, batched vs a
   loop over the 64 networks one at a time (same engine). Reported for the weight-space engine (``gd``:
   analytic backprop, target ≥ 3× over the loop and within 2× of the GEMM-bound time, i.e. its nominal
   FLOPs at the machine's measured float64 GEMM rate, printed beside the achieved GFLOP/s), the same
   engine by autograd (``weight-autograd``, the engine before issue 17; its batched result is compared
   with the analytic one) and the exact hidden-space engine (``gd_hidden``, target ≥ 10×).
3. Minibatch SGD and Adam (Wang et al. §6 shapes), analytic engine vs autograd (``--only minibatch``).
4. µs per GD step of one small net (Kou: n = 10, d = 784, m = 100; ``--only step``, issue 33): ``train.gd`` eager
   (both engines), a fixed-shape step with its divergence flag kept on the device (:class:`KouStep`) eager and,
   on CUDA only, replayed from a ``torch.cuda.CUDAGraph`` (skipped with a message on the CPU), each for one net
   and batched over 64 restarts on the ensemble axis; then the analytic engine's µs per step over ensemble sizes
   with their FLOPs per step, and the crossover: the smallest size at which a CUDA step beats a CPU step (needs
   CUDA; otherwise the policy's provisional constant, :data:`theory.device.CROSSOVER_FLOPS`, is printed as such).
   Each device's numbers carry its name.
5. The same on CUDA when a GPU is present (skipped otherwise).

``--power-samples K`` / ``--loop-members K`` time the slow reference on K samples / members only
and scale linearly (per-sample and per-member costs are independent); the JSON says so. The JSON
records the 1-minute load average at the start and end of the GD benchmark: on a shared machine
compare the engines of one run, not runs taken at different loads.
Both Jacobian methods are warmed up on two samples first (torch.func's one-time start-up).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from unittest import mock

import torch

from theory import data
from theory.sim import jacobian, mlp_backprop, models, train
from . import device as _device
from .device import draw


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def bench_jacobian(dev, power_samples: int, N=256, m=1024, d=784, seed=0) -> dict:
    g = torch.Generator().manual_seed(seed)  # CPU: the same data on every device
    dt = torch.float64
    W = draw(torch.randn, m, d, generator=g, dtype=dt, device=dev) / d ** 0.5
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
    g = torch.Generator().manual_seed(seed)  # CPU: the same data on every device
    X, _ = data.gram_controlled(n, d, 0.01, generator=g, device=dev)
    y = data.balanced_labels(n, device=dev)
    net = models.TwoClassNet.init(E, m, d, sigma0=0.01, act="leaky_relu", gamma=0.1, generator=g, device=dev)
    return net, X, y


ENGINES = {"weight": ("weight_space_gd", lambda *a, **k: train.gd(*a, **k)),
           "weight-autograd": ("weight_space_gd_autograd", lambda *a, **k: train.gd(*a, engine="autograd", **k)),
           "hidden": ("hidden_space_gd", train.gd_hidden)}


def gemm_rate(dev, n=1024, reps=5) -> float:
    """The machine's float64 GEMM rate (GFLOP/s): best of ``reps`` n×n products (one warm-up)."""
    a = torch.randn(n, n, dtype=torch.float64, device=dev)
    out = torch.empty_like(a)
    torch.mm(a, a, out=out)
    best = float("inf")
    for _ in range(reps):
        _sync(dev)
        t = time.perf_counter()
        torch.mm(a, a, out=out)
        _sync(dev)
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 / best / 1e9


def weight_gd_flops(E, n, d, H, steps) -> dict:
    """FLOPs of weight-space GD on a two-layer net with H hidden units (readout terms, O(E·H·n), left out).

    nominal: per step the forward product W Xᵀ and the weight gradient G X, 2·E·H·n·d each (what autograd does).
    executed (analytic engine, n < d): per step the pre-activation update Z += A XXᵀ (2·E·H·n²); once per
    mlp_backprop.GRAM_REFRESH steps and at both ends the deferred update W += C X and the exact W Xᵀ
    (2·E·H·n·d each)."""
    nominal = 4 * E * H * n * d * steps
    refresh = steps // mlp_backprop.GRAM_REFRESH + 2
    executed = 2 * E * H * n * n * steps + 4 * E * H * n * d * refresh
    return {"nominal": nominal, "executed": executed}


def bench_ensemble(dev, steps: int, loop_members: int, E=64, seed=0, engines=("weight", "hidden")) -> dict:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    rate = gemm_rate(dev)
    out = {"E": E, "n": 10, "d": 784, "m": 100, "steps": steps, "device": str(dev), "dtype": "float64",
           "gemm_gflops": round(rate, 2), "load_average_1min": load}
    lr = 10 * 10 * 100 / 10  # η = nm/(10 R_max²), R_max = 1
    flops = weight_gd_flops(E, 10, 784, 200, steps)
    finals = {}
    for key in engines:
        name, engine = ENGINES[key]
        net, X, y = _kou(dev, E, seed)
        W0 = net.W.clone()
        t, c = time.perf_counter(), time.process_time()
        engine(net, X, y, loss="logistic", lr=lr, steps=steps, record=[steps])
        _sync(dev)
        t_batch, c_batch = time.perf_counter() - t, time.process_time() - c
        finals[key] = net.W
        k = min(loop_members, E)
        t = time.perf_counter()
        for e in range(k):
            one = models.TwoClassNet(W0[e:e + 1].clone(), net.act)
            engine(one, X, y, loss="logistic", lr=lr, steps=steps, record=[steps])
        _sync(dev)
        t_loop = (time.perf_counter() - t) * E / k
        res = {"batched_seconds": round(t_batch, 3), "batched_cpu_seconds": round(c_batch, 3),
               "loop_seconds": round(t_loop, 3), "loop_timed_members": k, "speedup": round(t_loop / t_batch, 1)}
        if key == "hidden":  # each engine carries its own targets (module docstring)
            res["target_speedup>=10"] = t_loop / t_batch >= 10
        if key.startswith("weight"):
            bound = flops["nominal"] / 1e9 / rate
            res.update({"nominal_gflop": round(flops["nominal"] / 1e9, 1),
                        "gemm_bound_seconds": round(bound, 3), "time_over_gemm_bound": round(t_batch / bound, 2),
                        "nominal_gflops_achieved": round(flops["nominal"] / 1e9 / t_batch, 2),
                        "target_speedup>=3": t_loop / t_batch >= 3,
                        "target_within_2x_gemm_bound": t_batch <= 2 * bound})
            if key == "weight":
                res["executed_gflop"] = round(flops["executed"] / 1e9, 1)
                res["executed_gflops_achieved"] = round(flops["executed"] / 1e9 / t_batch, 2)
        out[name] = res
    if "weight" in finals and "weight-autograd" in finals:
        a, b = finals["weight"], finals["weight-autograd"]
        out["weight_space_gd"]["max_rel_diff_vs_autograd"] = float((a - b).abs().max() / b.abs().max())
        out["weight_space_gd"]["speedup_over_autograd_batched"] = round(
            out["weight_space_gd_autograd"]["batched_seconds"] / out["weight_space_gd"]["batched_seconds"], 1)
        out["weight_space_gd"]["speedup_over_autograd_loop"] = round(
            out["weight_space_gd_autograd"]["loop_seconds"] / out["weight_space_gd"]["batched_seconds"], 1)
    out["load_average_1min_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return out


def bench_minibatch(dev, epochs: int = 2, E=4, m=1024, d=784, N=4096, batch=512, seed=0) -> dict:
    """Minibatch SGD and Adam (Wang et al. §6 shapes: BCE, batch 512, d = 784) on E two-layer nets of width m:
    the analytic engine vs autograd, same process, same batch order; max relative difference of the weights.
    GEMM bound: the nominal FLOPs at the machine's measured float64 GEMM rate: per batch the forward W Xᵀ and the
    gradient G X (2·E·m·batch·d each), and per epoch (0 included) the full-data forward pass that the trainer's
    divergence guard and records read (2·E·m·N·d)."""
    g = torch.Generator().manual_seed(seed)  # CPU: the same data on every device
    rate = gemm_rate(dev)
    bound = (4 * E * m * batch * d * (N // batch) * epochs + 2 * E * m * N * d * (epochs + 1)) / 1e9 / rate
    X = draw(torch.randn, N, d, generator=g, dtype=torch.float64, device=dev) / d ** 0.5
    y = (draw(torch.rand, N, generator=g, dtype=torch.float64, device=dev) < 0.5).to(torch.float64)
    net = models.TwoLayerNet.init(E, m, d, act="relu", generator=g, device=dev)
    out = {"E": E, "m": m, "d": d, "N": N, "batch": batch, "epochs": epochs, "device": str(dev),
           "gemm_gflops": round(rate, 2), "gemm_bound_seconds": round(bound, 3),
           "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    for engine in ("analytic", "autograd"):  # warm-up (thread pool, allocator) on one batch, not timed
        one = models.TwoLayerNet(net.W.clone(), net.a, net.act)
        train.sgd(one, X[:batch], y[:batch], loss="bce", lr=3e-3, epochs=1, batch=batch, record=[1], engine=engine)
    for opt in ("sgd", "adam"):
        res, W = {}, {}
        for engine in ("analytic", "autograd"):
            one = models.TwoLayerNet(net.W.clone(), net.a, net.act)
            t, c = time.perf_counter(), time.process_time()
            getattr(train, opt)(one, X, y, loss="bce", lr=3e-3, epochs=epochs, batch=batch, record=[epochs],
                                generator=torch.Generator().manual_seed(seed), engine=engine)
            _sync(dev)
            res[f"{engine}_seconds"] = round(time.perf_counter() - t, 3)
            res[f"{engine}_cpu_seconds"] = round(time.process_time() - c, 3)
            W[engine] = one.W
        res["speedup"] = round(res["autograd_seconds"] / res["analytic_seconds"], 2)
        res["analytic_time_over_gemm_bound"] = round(res["analytic_seconds"] / bound, 2)
        res["target_within_2x_gemm_bound"] = res["analytic_seconds"] <= 2 * bound
        res["max_rel_diff"] = float((W["analytic"] - W["autograd"]).abs().max() / W["autograd"].abs().max())
        out[opt] = res
    return out


# -- µs per GD step of one small net, and the placement crossover (issue 33) ----------------------------------------

KOU = dict(n=10, d=784, m=100, gamma=0.1, sigma0=0.01)


def _kou_data(dev, E, seed=0):
    """Kou et al. Sec. 6 sizes: n = 10 points in d = 784, m = 100 neurons per class, leaky ReLU; CPU draws moved."""
    k = KOU
    g = torch.Generator().manual_seed(seed)  # CPU: the same data on every device
    X, _ = data.gram_controlled(k["n"], k["d"], 0.01, generator=g, device=dev)
    y = data.balanced_labels(k["n"], device=dev)
    net = models.TwoClassNet.init(E, k["m"], k["d"], sigma0=k["sigma0"], act="leaky_relu", gamma=k["gamma"],
                                  generator=g, device=dev)
    return net, X, y


def _time_gd(dev, E, steps, engine, reps=3) -> float:
    """µs per step of ``train.gd`` on E Kou nets (best of ``reps`` runs of ``steps`` steps after a warm-up)."""
    net, X, y = _kou_data(dev, E)
    lr = 1.0
    train.gd(net, X, y, loss="logistic", lr=lr, steps=min(steps, 20), record=[min(steps, 20)], engine=engine)
    best = float("inf")
    for _ in range(reps):
        _sync(dev)
        t = time.perf_counter()
        train.gd(net, X, y, loss="logistic", lr=lr, steps=steps, record=[steps], engine=engine)
        _sync(dev)
        best = min(best, time.perf_counter() - t)
    return best / steps * 1e6


def _time_gd_hidden(dev, E, steps, graphs: bool, reps=3) -> float:
    """µs per step of ``train.gd_hidden`` (the Kou engine) on E Kou nets; ``graphs`` lets it replay its step from a
    captured CUDA graph (``$THEORY_CUDA_GRAPHS``; only on CUDA, and only for ≥ graph_step.MIN_STEPS steps)."""
    from .sim import graph_step

    net, X, y = _kou_data(dev, E)
    n = max(steps, graph_step.MIN_STEPS)
    best = float("inf")
    with mock.patch.dict(os.environ, {"THEORY_CUDA_GRAPHS": "1" if graphs else "0"}):  # restored on exit
        for _ in range(reps):
            _sync(dev)
            t = time.perf_counter()
            train.gd_hidden(net, X, y, loss="logistic", lr=1.0, steps=n, record=[n], write_back=False)
            _sync(dev)
            best = min(best, time.perf_counter() - t)
    return best / n * 1e6


class KouStep:
    """One fixed-shape GD step of E Kou nets on the logistic loss, written with preallocated tensors only (no Python
    branch on data, no host read), so that ``torch.cuda.CUDAGraph`` can capture it: the forward pass, the loss kept
    in a device buffer with an on-device divergence flag (the first step whose loss is not finite or above 10⁸× the
    initial loss, as :class:`theory.sim.gd_blocks.ChunkGuard`), the backward pass and the in-place update."""

    def __init__(self, net, X, y, lr: float, blowup: float = 1e8):
        self.W = net.W  # (E, 2, m, d), updated in place
        E, _, m, _ = self.W.shape
        self.X, self.y, self.lr, self.m, self.gamma = X, y, lr, m, net.act.gamma
        self.a = torch.tensor([1.0, -1.0], dtype=X.dtype, device=X.device).view(1, 2, 1, 1)
        self.one, self.g = (torch.tensor(v, dtype=X.dtype, device=X.device) for v in (1.0, self.gamma))
        self.step_no = torch.zeros((), dtype=torch.long, device=X.device)
        self.first_bad = torch.full((), -1, dtype=torch.long, device=X.device)
        self.loss = self.forward_loss().clone()
        self.thr = blowup * self.loss.clamp_min(1e-300)

    def forward_loss(self):
        z = (self.W.view(-1, self.X.shape[1]) @ self.X.T).view(*self.W.shape[:3], -1)  # (E, 2, m, n): one GEMM
        self._z = z
        f = (torch.where(z > 0, z, self.g * z).mean(2, keepdim=True) * self.a).sum(1)  # (E, 1, n)
        self._f = f
        return torch.nn.functional.softplus(-self.y * f).mean((-1, -2))          # (E,)

    def __call__(self):
        cur = self.forward_loss()
        bad = (~(cur <= self.thr)).any()
        self.first_bad.copy_(torch.where(bad & (self.first_bad < 0), self.step_no, self.first_bad))
        self.step_no.add_(1)
        n = self.X.shape[0]
        gl = -self.y * torch.sigmoid(-self.y * self._f) / n                       # dℓ/df, (E, 1, n)
        slope = torch.where(self._z > 0, self.one, self.g)
        dz = slope * (self.a * gl.unsqueeze(1)) / self.m                          # (E, 2, m, n)
        self.W.view(-1, self.X.shape[1]).addmm_(dz.reshape(-1, n), self.X, alpha=-self.lr)  # W −= η ∂/∂W, in place


def _time_hand(step, dev, steps) -> float:
    for _ in range(3):
        step()
    _sync(dev)
    t = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(dev)
    return (time.perf_counter() - t) / steps * 1e6


def _graph(step, dev, steps) -> float:
    """µs per replay of ``step`` captured in a CUDA graph (the documented warm-up on a side stream first)."""
    s = torch.cuda.Stream(dev)
    s.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream(dev).wait_stream(s)
    gr = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):
        step()
    return _time_hand(gr.replay, dev, steps)


def bench_step(dev, steps: int, batch_E: int = 64, sizes=(1, 4, 16, 64, 256)) -> dict:
    """µs per GD step of one Kou net (n = 10, d = 784, m = 100) on ``dev``: ``train.gd`` eager (analytic and autograd
    engines), ``train.gd_hidden`` (the Kou engine) eager and (CUDA only) replaying its captured step, the fixed-shape
    :class:`KouStep` eager and (CUDA only) replayed from a CUDA graph, each for one net and
    for ``batch_E`` restarts in one program (the ensemble axis); and the analytic engine's µs per step over ensemble
    sizes, with each size's nominal FLOPs per step (the crossover table)."""
    k = KOU
    cpu_div = 10 if dev.type == "cpu" else 1  # the CPU is slow: fewer steps, same per-step cost
    T = max(50, steps // cpu_div)
    out = {"device": str(dev), "name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor()
           or platform.machine(), "threads": torch.get_num_threads(), "steps": T, **k,
           "flops_per_step_per_net": mlp_backprop.gd_step_flops(1, k["n"], [k["d"], 2 * k["m"], 1], 1),
           "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
           "us_per_step": {}}
    us = out["us_per_step"]
    for E in (1, batch_E):
        for engine in ("analytic", "autograd"):
            us[f"train.gd {engine} eager E={E}"] = round(_time_gd(dev, E, T, engine), 1)
        net, X, y = _kou_data(dev, E)
        us[f"fixed-shape step eager E={E}"] = round(_time_hand(KouStep(net, X, y, 1.0), dev, T), 1)
        us[f"train.gd_hidden eager E={E}"] = round(_time_gd_hidden(dev, E, T, graphs=False), 1)
        if dev.type == "cuda":
            net, X, y = _kou_data(dev, E)
            us[f"fixed-shape step CUDA graph E={E}"] = round(_graph(KouStep(net, X, y, 1.0), dev, T), 1)
            us[f"train.gd_hidden CUDA graph E={E}"] = round(_time_gd_hidden(dev, E, T, graphs=True), 1)
        else:
            us[f"fixed-shape step CUDA graph E={E}"] = "skipped: CUDA graphs need a CUDA device"
            us[f"train.gd_hidden CUDA graph E={E}"] = "skipped: CUDA graphs need a CUDA device"
    for E in (1, batch_E):
        us[f"per member, train.gd analytic E={E}"] = round(us[f"train.gd analytic eager E={E}"] / E, 2)
    # the fixed-shape step against train.gd (same data, same rate): the benchmark times the same arithmetic
    net_a, X, y = _kou_data(dev, 2)
    net_b, _, _ = _kou_data(dev, 2)
    train.gd(net_a, X, y, loss="logistic", lr=1.0, steps=30, record=[30], engine="autograd")
    step = KouStep(net_b, X, y, 1.0)
    for _ in range(30):
        step()
    out["fixed_shape_step_max_rel_diff_vs_train_gd"] = float((net_a.W - net_b.W).abs().max() / net_a.W.abs().max())
    table = []
    for E in sizes:
        table.append({"E": E, "flops_per_step": out["flops_per_step_per_net"] * E,
                      "us_per_step": round(_time_gd(dev, E, max(20, T // max(1, E // 4)), "analytic", reps=2), 1)})
    out["sizes"] = table
    out["load_average_1min_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return out


def crossover(cpu: dict, cuda: dict | None) -> dict:
    """The smallest size (FLOPs per step) of the ensemble table at which a CUDA step beats a CPU step, from two
    :func:`bench_step` results of the same sizes; without CUDA, the policy's constant and why it is not measured."""
    res = {"policy_constant_flops": _device.CROSSOVER_FLOPS, "policy_source": _device.CROSSOVER_SOURCE}
    if cuda is None:
        res["measured"] = "skipped: needs a CUDA device (this run had none)"
        return res
    rows = []
    for a, b in zip(cpu["sizes"], cuda["sizes"]):
        rows.append({"flops_per_step": a["flops_per_step"], "cpu_us": a["us_per_step"], "cuda_us": b["us_per_step"]})
    won = [r["flops_per_step"] for r in rows if r["cuda_us"] < r["cpu_us"]]
    res.update(rows=rows, device=cuda["name"], measured=min(won) if won else
               f"CUDA slower at every size up to {rows[-1]['flops_per_step']:.3g} FLOPs per step")
    return res


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("jacobian", "ensemble", "minibatch", "step"))
    ap.add_argument("--step-steps", type=int, default=2000,
                    help="steps timed per case of --only step (the CPU times a tenth of them)")
    ap.add_argument("--power-samples", type=int, default=256)
    ap.add_argument("--loop-members", type=int, default=64)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--engines", default="weight,hidden",
                    help="GD engines to time, comma-separated: weight (train.gd, analytic backprop, W in R^{2m×d}), "
                         "weight-autograd (train.gd by autograd: the engine before issue 17), hidden (exact, "
                         "coefficient space)")
    ap.add_argument("--epochs", type=int, default=2, help="epochs of the minibatch benchmark")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    a = ap.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
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
        if a.only in (None, "minibatch"):
            slot["minibatch"] = bench_minibatch(dev, a.epochs)
        if a.only in (None, "step"):
            slot["step"] = bench_step(dev, a.step_steps)
    if a.only in (None, "step"):
        res["crossover"] = crossover(res["cpu"]["step"], res["cuda"]["step"] if isinstance(res["cuda"], dict) else None)
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
