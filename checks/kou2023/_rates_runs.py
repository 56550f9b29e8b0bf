"""Shared long coefficient-space runs for the kou2023 limit / rate checks (kou-B half).

Each builder is cached per process and (profile, seed, device), so checks that look at the same run
(thm-4.1, lem-C.3 and lem-D.2 all use the leaky long run) train it once per worker. Seeds come
from ``ctx.generator(<claim>, <config key>)`` only. All runs are float64 (``ctx.dtype``).
"""
from __future__ import annotations

import functools

from theory.papers.kou2023 import setup as ks

OBS = ("rho", "Z", "loss", "norms", "srank")


def _key(ctx):
    return (ctx.profile, ctx.seed, str(ctx.device))


def leaky_long_config(ctx) -> ks.KouConfig:
    """C0-L on a geometric grid to 10⁵ steps (quick) / a P2-like leaky setting to 10⁶ steps (full)."""
    return ctx.pick(quick=ks.C0_L.replace(E=4, steps=100_000, grid_points=60),
                    full=ks.C0_L.replace(n=40, d=1024, m=100, E=5, sigma0=1e-3, steps=1_000_000, grid_points=80))


@functools.lru_cache(maxsize=4)
def _leaky_long(key, ctx):
    cfg = leaky_long_config(ctx)
    data = ks.make_data(cfg, ctx.generator("kou2023/thm-4.1", cfg.key()), device=ctx.device)
    net = ks.make_net(cfg, data, ctx.generator("kou2023/thm-4.1", cfg.key("init")), on_events=True)
    return ks.simulate(cfg, data, net, observe=OBS)


def leaky_long(ctx) -> ks.KouRun:
    return _leaky_long(_key(ctx), ctx)


def orth_config(ctx, act: str) -> ks.KouConfig:
    """C0-O (orthonormal data) with the given activation; 5·10⁴ steps quick, 10⁶ full (n=100, m=1000)."""
    base = ctx.pick(quick=ks.C0_O.replace(E=4, steps=50_000, grid_points=60),
                    full=ks.C0_O.replace(n=100, d=1024, m=1000, E=4, sigma0=1e-3, steps=1_000_000, grid_points=80))
    return base.replace(act=act)


@functools.lru_cache(maxsize=4)
def _orth_pair(key, ctx):
    """Leaky and ReLU trained on the same orthonormal data from the same W(0) (Remark 4.4)."""
    cfg_r = orth_config(ctx, "relu")
    data = ks.make_data(cfg_r, ctx.generator("kou2023/lem-F.3", cfg_r.key()), device=ctx.device)
    # initialization on the events of Lemmas A.1 and A.2 (Appendices E–G are stated on them)
    net_r = ks.make_net(cfg_r, data, ctx.generator("kou2023/lem-F.3", cfg_r.key("init")), on_events=True)
    cfg_l = orth_config(ctx, "leaky_relu")
    net_l = ks.make_net(cfg_l, data, None)
    net_l.W = net_r.W.clone()  # the same initialization for both activations
    run_r = ks.simulate(cfg_r, data, net_r, observe=OBS)
    run_l = ks.simulate(cfg_l, data, net_l, observe=OBS)
    return run_r, run_l


def orth_pair(ctx) -> tuple[ks.KouRun, ks.KouRun]:
    """(ReLU run, leaky run) on D-O from one W(0)."""
    return _orth_pair(_key(ctx), ctx)


def relu_c0r_config(ctx, p: float) -> ks.KouConfig:
    return ctx.pick(quick=ks.C0_R.replace(E=4, steps=20_000, p=p, grid_points=50),
                    full=ks.C0_R.replace(E=5, steps=1_000_000, p=p, grid_points=80))


def _relu_c0r_setup(ctx, p):
    cfg = relu_c0r_config(ctx, p)
    data = ks.make_data(cfg, ctx.generator("kou2023/lem-G.1", cfg.key()), device=ctx.device)
    net = ks.make_net(cfg, data, ctx.generator("kou2023/lem-G.1", cfg.key("init")), on_events=True)
    return cfg, data, net


@functools.lru_cache(maxsize=4)
def _relu_c0r(key, ctx, p):
    return ks.simulate(*_relu_c0r_setup(ctx, p), observe=OBS)


def relu_c0r(ctx, p: float = 0.005) -> ks.KouRun:
    """C0-R (ReLU, D-G(p), m = 300 ≥ Theorem 4.3's width condition) — p = 0.005 gives C_data = 20."""
    return _relu_c0r(_key(ctx), ctx, p)


def relu_c0r_every_step(ctx, hook, p: float = 0.005) -> ks.KouRun:
    """The run of :func:`relu_c0r` again (same data and W(0), rebuilt from the same generators; not cached), with
    ``hook(t, rho, Z, dl)`` called at every step (``ks.simulate(track=True)``); only the loss is stored on the grid."""
    return ks.simulate(*_relu_c0r_setup(ctx, p), track=True, every_step=hook, observe=("loss",))
