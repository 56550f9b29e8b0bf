"""Shared setup for the Kou, Chen & Gu (2023) checks: configuration, data, initialization,
hypothesis report and the coefficient-space runner.

Typical use (a check)::

    from theory.papers.kou2023 import setup as ks
    cfg = ks.C0_L.replace(E=4, steps=20_000)
    data = ks.make_data(cfg, record.generator(cfg.key()), device=ctx.device)
    net = ks.make_net(cfg, data, record.generator(cfg.key("init")))
    run = ks.simulate(cfg, data, net, track=True)     # exact GD, Lemma 5.2 (coefficient space)
    run.rho            # (T, E, 2, m, n) coefficients ρ_{j,r,i} at run.t (index 0 of axis 2 is j=+1)
    run.hyp            # hypothesis report (catalog "Hypothesis report"), run.hyp["inside"]

Conventions (catalog "Shared notation"):

- ``W`` of :class:`theory.sim.models.TwoClassNet` is (E, 2, m, d); class axis index 0 is j=+1.
- Coefficients: W_j(t) = W_j(0) + C_j(t) X with C from :func:`theory.sim.train.gd_hidden`;
  ρ_{j,r,i} = C_{j,r,i}·‖x_i‖² (Def. 5.1, eq. (5.1)). Pre-activations Z_{j,r,i} = ⟨w_{j,r}, x_i⟩.
- ℓ'_i = ℓ'(y_i f(x_i)) = −1/(1+e^{y_i f(x_i)}) ∈ (−1, 0); σ'(0) = 1 for both activations.
- Natural time unit τ = η R_max² t/(nm) (:func:`tau`).

Data kinds (``KouConfig.data``): ``"G"`` D-G(p) Gram-controlled unit-norm rows (default),
``"O"`` D-O orthonormal (x_i = e_i, or Q e_i with ``rotate``), ``"N"`` D-N(d) Gaussian rows
N(0, I/d), ``"P"`` D-P the paper's §6 data (x_i = y_i μ + ξ_i, its own Rademacher labels), ``"D"`` a
balanced two-digit task from scikit-learn's shipped 8×8 digits (``fixtures.real.binary_digits``, pixels in
[0, 1] as for MNIST, d = 64; digits ``cfg.digits``, label +1 for the first).
Everything is float64; long runs must stay float64 (catalog "Precision").
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from theory import data as fdata
from theory.device import DEFAULT_DTYPE, get_device, tensor
from theory.papers.kou2023.stable_rank import srank_and_norm_from_gram
from theory.sim import losses, models, train
from ...device import draw

ACTIVATIONS = ("leaky_relu", "relu")
DATA_KINDS = ("G", "O", "N", "P", "D")
LABELS = ("balanced", "positive")

# Thresholds of the catalog's "hypotheses hold" flag (def-B.2): C_data ≥ 20, C_η ≥ 10,
# β ≤ 0.3γ (leaky) or β ≤ 0.3 (ReLU), balanced labels, linearly independent data; and the σ₀ condition
# of Thm 4.1 / (B.2) and Thm 4.3 / (E.4), σ₀ ≤ γ(C R_max √log(mn/δ))⁻¹ (leaky, appendix form; ReLU without
# γ), read as C_σ = γ/(σ₀ R_max √log(mn/δ)) ≥ C with the same "sufficiently large" C = 10 as for η.
#
# The β condition is checked on its own (issue 35), although for Gaussian initializations it is implied: on the event
# of Lemma A.1, β ≤ √(2 log(8mn/δ))·σ₀R_max, and C_σ ≥ 10 gives σ₀R_max ≤ γ/(10√log(mn/δ)), so
# β ≤ γ·√2/10·√(1 + log 8/log(mn/δ)) ≤ 0.3γ whenever log(mn/δ) ≥ log 8/3.5 ≈ 0.59 (mn/δ ≥ 1.82: every configuration,
# since n ≥ 2 and δ < 1); :func:`beta_implied_by_c_sigma` evaluates that bound. A hand-built W(0) (not Gaussian) can
# break β ≤ 0.3γ alone among the W(0)-free conditions; the report then names β (``conditions["beta"]`` False).
C_DATA_MIN, C_ETA_MIN, BETA_MAX, C_SIGMA_MIN = 20.0, 10.0, 0.3, 10.0


@dataclass(frozen=True)
class KouConfig:
    """One experimental setting (catalog "Standard configurations").

    ``eta=None`` means η = nm/(C_eta·R_max²) computed from the data; ``p=None`` means the
    catalog default for D-G(p): γ⁴/(20n) (leaky) or 1/(20n) (ReLU), i.e. C_data = 20.
    ``E`` is the number of ensemble members (seeds) trained together. ``labels`` is used for
    D-G/D-O/D-N ("balanced": first n/2 are +1; "positive": all +1); D-P keeps its own labels.
    """

    n: int = 10
    d: int = 100
    m: int = 20
    act: str = "leaky_relu"
    gamma: float = 0.5
    sigma0: float = 0.01
    eta: float | None = None
    C_eta: float = 10.0
    steps: int = 20_000
    data: str = "G"
    p: float | None = None
    E: int = 1
    delta: float = 0.1
    labels: str = "balanced"
    rotate: bool = False
    grid_points: int = 50
    digits: tuple = (3, 8)

    def __post_init__(self):
        for k in ("n", "d", "m", "E", "grid_points"):
            v = getattr(self, k)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"KouConfig.{k} must be a positive integer, got {v!r}")
        if not isinstance(self.steps, int) or self.steps < 0:
            raise ValueError(f"KouConfig.steps must be a non-negative integer, got {self.steps!r}")
        if self.act not in ACTIVATIONS:
            raise ValueError(f"KouConfig.act must be one of {ACTIVATIONS}, got {self.act!r}")
        if self.act == "leaky_relu" and not (0 < self.gamma < 1):
            raise ValueError(f"leaky ReLU needs gamma in (0, 1), got {self.gamma!r}")
        if self.data not in DATA_KINDS:
            raise ValueError(f"KouConfig.data must be one of {DATA_KINDS}, got {self.data!r}")
        if self.labels not in LABELS:
            raise ValueError(f"KouConfig.labels must be one of {LABELS}, got {self.labels!r}")
        if not self.sigma0 > 0:
            raise ValueError(f"KouConfig.sigma0 must be positive, got {self.sigma0!r}")
        if self.eta is not None and not self.eta > 0:
            raise ValueError(f"KouConfig.eta must be positive, got {self.eta!r}")
        if not self.C_eta > 0 or not (0 < self.delta < 1):
            raise ValueError(f"need C_eta > 0 and delta in (0,1), got {self.C_eta}, {self.delta}")
        if self.n > self.d:
            raise ValueError(f"n={self.n} > d={self.d}: the data are linearly dependent and the "
                             "decomposition of Def. 5.1 is not unique; use n <= d")
        if self.p is not None and self.p < 0:
            raise ValueError(f"KouConfig.p must be >= 0, got {self.p!r}")
        if self.data == "D" and self.d != 64:
            raise ValueError(f"the shipped digits task has d = 64 (8×8 images), got d={self.d}")

    # -- derived ---------------------------------------------------------------------------
    @property
    def slope(self) -> float:
        """Negative-side slope γ of σ (0 for ReLU)."""
        return self.gamma if self.act == "leaky_relu" else 0.0

    @property
    def p_level(self) -> float:
        """D-G(p) level used (the default gives C_data = 20)."""
        if self.p is not None:
            return float(self.p)
        return (self.gamma ** 4 if self.act == "leaky_relu" else 1.0) / (20 * self.n)

    def replace(self, **kw) -> "KouConfig":
        return dataclasses.replace(self, **kw)

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        if self.data == "G":
            d["p"] = self.p_level
        if self.act == "relu":
            d["gamma"] = 0.0
        if self.data != "D":
            d.pop("digits")
        return d

    def key(self, *extra) -> list:
        """A JSON-able seeding key: the data-defining fields plus ``extra`` tags."""
        return [self.data, self.n, self.d, self.p_level if self.data == "G" else None, self.rotate,
                self.labels, *([list(self.digits)] if self.data == "D" else []), *extra]


# Catalog standard configurations (cheap): C0-L, C0-R, C0-O. The ReLU ones have m = 300 ≥ 50 log(2n/δ) = 265
# (n = 10, δ = 0.1: Theorem 4.3's width condition with Lemma A.2's constant, :func:`relu_width_min`); Theorem 4.1
# (leaky) has no width condition. At d = 100 Lemma A.1's norm event holds for all 2m = 600 neurons in most draws.
C0_L = KouConfig(n=10, d=100, m=20, act="leaky_relu", gamma=0.5, sigma0=0.01, data="G")
C0_R = KouConfig(n=10, d=100, m=300, act="relu", sigma0=0.01, data="G")
C0_O = KouConfig(n=10, d=100, m=300, act="relu", sigma0=0.01, data="O")


@dataclass
class KouData:
    """Inputs X (n, d), labels y (n,) ∈ {±1}, Gram G = XXᵀ, ‖x_i‖² and the statistics."""

    X: torch.Tensor
    y: torch.Tensor
    G: torch.Tensor
    norms2: torch.Tensor
    stats: fdata.DataStats

    @property
    def jy(self) -> torch.Tensor:
        """(2, n) tensor of j·y_i (class axis index 0 is j=+1)."""
        return torch.stack([self.y, -self.y])

    @property
    def own(self) -> torch.Tensor:
        """(2, n) boolean: j = y_i (own-class entries, where ρ = ρ̄ ≥ 0)."""
        return self.jy > 0


def make_data(cfg: KouConfig, generator: torch.Generator | None = None, *, device=None,
              dtype=DEFAULT_DTYPE) -> KouData:
    """Build the configured data set (see module docstring for the kinds)."""
    dev = device or get_device()
    n, d = cfg.n, cfg.d
    if cfg.data == "G":
        X, _ = fdata.gram_controlled(n, d, cfg.p_level, generator=generator, dtype=dtype, device=dev)
    elif cfg.data == "O":
        X = fdata.orthonormal(n, d, random_rotation=cfg.rotate, generator=generator, dtype=dtype, device=dev)
    elif cfg.data == "N":
        X, _ = fdata.gaussian_rows(n, d, generator=generator, dtype=dtype, device=dev)
    elif cfg.data == "P":
        X, y, _ = fdata.kou_section6(n, d, generator=generator, dtype=dtype, device=dev)
    else:
        from theory.data import real

        X, y = real.binary_digits(*cfg.digits, n=n, unit_norm=False, generator=generator, dtype=dtype, device=dev)
    if cfg.data not in ("P", "D"):
        y = fdata.balanced_labels(n, dtype=dtype, device=dev)
        if cfg.labels == "positive":
            y = torch.ones_like(y)
    G = X @ X.T
    return KouData(X, y, G, G.diagonal().clone(), fdata.stats(X))


def default_eta(cfg: KouConfig, data: KouData) -> float:
    """η of the config, or nm/(C_eta R_max²)."""
    if cfg.eta is not None:
        return float(cfg.eta)
    return cfg.n * cfg.m / (cfg.C_eta * data.stats.R_max ** 2)


def make_net(cfg: KouConfig, data: KouData, generator: torch.Generator | None = None, *,
             sigma0s=None, on_events: bool = False, max_draws: int = 200) -> models.TwoClassNet:
    """E networks w_{j,r}(0) ~ N(0, σ₀² I_d) (Def. 3.2) with σ'(0) = 1.

    ``sigma0s`` (E values) puts several initialization scales on the ensemble axis: member e
    uses σ₀ = sigma0s[e] (the same Gaussian draw rescaled is *not* used: each member has its
    own draw, multiplied by sigma0s[e]/cfg.sigma0).

    ``on_events=True`` conditions the initialization on the events the appendix proofs assume
    (:func:`init_events`: Lemma A.1, and Lemma A.2 for ReLU): a member whose draw misses them is redrawn
    from the same generator (deterministic), at most ``max_draws`` times. The paper's statements hold "with
    probability ≥ 1 − δ" because they hold on these events, so a run on them is inside the hypotheses.
    """
    net = models.TwoClassNet.init(cfg.E, cfg.m, cfg.d, sigma0=cfg.sigma0, act=cfg.act,
                                  gamma=cfg.gamma if cfg.act == "leaky_relu" else None,
                                  generator=generator, dtype=data.X.dtype, device=data.X.device)
    if sigma0s is not None:
        s = torch.as_tensor(sigma0s, dtype=data.X.dtype, device=data.X.device)
        if s.shape != (cfg.E,) or not bool((s > 0).all()):
            raise ValueError(f"sigma0s must be {cfg.E} positive values, got {sigma0s!r}")
        net.W = net.W * (s / cfg.sigma0).view(-1, 1, 1, 1)
    if on_events:
        s0 = (torch.full((cfg.E,), cfg.sigma0, dtype=data.X.dtype, device=data.X.device) if sigma0s is None
              else torch.as_tensor(sigma0s, dtype=data.X.dtype, device=data.X.device))
        for _ in range(max_draws):
            ok = torch.as_tensor(init_events(cfg, data, net.W, s0.cpu().numpy())["ok"], device=net.W.device)
            if bool(ok.all()):
                break
            fresh = draw(torch.randn, net.W.shape, generator=generator, dtype=net.W.dtype, device=net.W.device)
            net.W = torch.where(ok.view(-1, 1, 1, 1), net.W, fresh * s0.view(-1, 1, 1, 1))
        else:
            raise RuntimeError(f"no initialization on the events of Lemmas A.1/A.2 within {max_draws} draws "
                               f"(m={cfg.m}, d={cfg.d}, n={cfg.n}): the events are unlikely at this size")
    return net


def init_events(cfg: KouConfig, data: KouData, W0: torch.Tensor, s0) -> dict:
    """Per member, the initialization events on which the appendix proofs are stated: Lemma A.1 (every
    ‖w_{j,r}(0)‖² ∈ [½, 3/2]·σ₀²d and every |⟨w_{j,r}(0), x_i⟩| ≤ √(2 log(8mn/δ))·σ₀R_max; Sections B–D condition
    on it) and, for ReLU, Lemma A.2 (0.4m ≤ |S_i^(0)| ≤ 0.6m for every i; Sections E–G condition on all of
    Section A). Returns boolean arrays (E,) ``A1``, ``A2`` (True for leaky, where it is not invoked), ``ok``."""
    s0 = np.broadcast_to(np.asarray(s0, float), (W0.shape[0],))
    n, m, d = cfg.n, cfg.m, W0.shape[-1]
    Z0 = W0 @ data.X.T.unsqueeze(0).unsqueeze(0)  # (E,2,m,n)
    wn2 = (W0 ** 2).sum(-1).flatten(1).cpu().numpy()  # (E, 2m)
    norm_ok = np.all((wn2 >= 0.5 * s0[:, None] ** 2 * d) & (wn2 <= 1.5 * s0[:, None] ** 2 * d), axis=1)
    ip_lim = math.sqrt(2 * math.log(8 * m * n / cfg.delta)) * s0 * data.stats.R_max
    ip_ok = Z0.abs().flatten(1).max(1).values.cpu().numpy() <= ip_lim
    A1 = norm_ok & ip_ok
    if cfg.act == "relu":
        S0 = active_at_init(Z0, data).sum(1).cpu().numpy()  # (E, n)
        A2 = np.all((S0 >= 0.4 * m) & (S0 <= 0.6 * m), axis=1)
    else:
        A2 = np.ones_like(A1)
    return {"A1": A1, "A2": A2, "ok": A1 & A2, "A1_norms": norm_ok, "A1_inner": ip_ok}


def tau(cfg: KouConfig, data: KouData, eta, t):
    """Natural time τ = η R_max² t/(nm) (thresholds T₁ = C'nm/(ηR_max²) are τ = C')."""
    return np.asarray(eta, float) * data.stats.R_max ** 2 * np.asarray(t, float) / (cfg.n * cfg.m)


def preact0(net: models.TwoClassNet, data: KouData) -> torch.Tensor:
    """Z(0)_{j,r,i} = ⟨w_{j,r}(0), x_i⟩, shape (E, 2, m, n)."""
    return net.preact(data.X)


def active_at_init(Z0: torch.Tensor, data: KouData) -> torch.Tensor:
    """S_i^(0) as a mask (E, m, n): r ∈ S_i^(0) ⇔ ⟨w_{y_i,r}(0), x_i⟩ > 0 (strict; def-data)."""
    own = torch.where(data.y > 0, Z0[:, 0], Z0[:, 1])  # (E, m, n): class y_i row
    return own > 0


def hypotheses(cfg: KouConfig, data: KouData, W0: torch.Tensor, eta, *, sigma0s=None) -> dict:
    """The catalog's hypothesis report (def-B.2 / def-data) for one run, with the verdict
    ``inside`` (all members inside the theorem's assumptions) and ``outside_reasons``.

    Per-member quantities (β, η, σ₀, |S_i^(0)|) are reported as the worst case over the
    ensemble, and as lists where they differ across members.
    """
    st = data.stats
    n, m, d = cfg.n, cfg.m, cfg.d
    g = cfg.slope
    E = W0.shape[0]
    eta = np.broadcast_to(np.asarray(tensor(eta, device="cpu")), (E,))
    s0 = np.broadcast_to(np.asarray(cfg.sigma0 if sigma0s is None else tensor(sigma0s, device="cpu"), float), (E,))
    Z0 = W0 @ data.X.T.unsqueeze(0).unsqueeze(0)  # (E,2,m,n)
    beta = Z0.abs().flatten(1).max(1).values.cpu().numpy()  # (E,)
    S0 = active_at_init(Z0, data).sum(1).cpu().numpy()  # (E, n)
    npos, nneg = int((data.y > 0).sum()), int((data.y < 0).sum())
    c_data_R = st.C_data  # R_min²/(R² n p), ∞ at p = 0 (fixtures.data.stats)
    c_data_L = c_data_R * cfg.gamma ** 4
    c_data = c_data_L if cfg.act == "leaky_relu" else c_data_R
    C_eta = n * m / (eta * st.R_max ** 2)
    logt = math.sqrt(math.log(m * n / cfg.delta))
    C_sigma = (g if g > 0 else 1.0) / (s0 * st.R_max * logt)
    beta_lim = BETA_MAX * (g if g > 0 else 1.0)
    reasons = []
    tol = 1 - 1e-9  # thresholds met by construction (e.g. p = γ⁴/(20n)) must not flip on rounding
    # each condition on its own (``conditions``), so a report says which one failed
    ev = init_events(cfg, data, W0, s0)
    cond = {"C_data": bool(c_data >= C_DATA_MIN * tol), "C_eta": bool(C_eta.min() >= C_ETA_MIN * tol),
            "beta": bool(beta.max() * tol <= beta_lim), "C_sigma": bool(C_sigma.min() >= C_SIGMA_MIN * tol),
            "balanced": npos == nneg, "independent": bool(st.diag_dominant or _independent(data)),
            "event_A1": bool(ev["A1"].all()), "event_A2": bool(ev["A2"].all())}
    # Theorem 4.3 (ReLU) states "m ≥ C log(n/δ)"; the only constant the paper gives for it is Lemma A.2's 50 log(2n/δ).
    # Theorem 4.1 (leaky) has no width condition. Lemma A.1's d = Ω(log(mn/δ)) has no constant: its event is checked.
    m_width = relu_width_min(n, cfg.delta)
    if cfg.act == "relu":
        cond["width"] = bool(m >= m_width)
    if not cond["C_data"]:
        reasons.append(f"C_data={c_data:.3g} < {C_DATA_MIN:g} (data not orthogonal enough)")
    if not cond["C_eta"]:
        reasons.append(f"C_eta={C_eta.min():.3g} < {C_ETA_MIN:g} (step size too large)")
    if not cond["beta"]:
        reasons.append(f"beta={beta.max():.3g} > {beta_lim:.3g} (initialization too large)")
    if not cond["C_sigma"]:
        reasons.append(f"C_sigma={C_sigma.min():.3g} < {C_SIGMA_MIN:g} (sigma0={s0.max():.3g} above "
                       f"{'γ' if g > 0 else ''}/({C_SIGMA_MIN:g} R_max √log(mn/δ)) = "
                       f"{(g if g > 0 else 1.0) / (C_SIGMA_MIN * st.R_max * logt):.3g})")
    if not cond.get("width", True):
        reasons.append(f"width m={m} < 50 log(2n/δ) = {m_width:.0f} (Theorem 4.3's m ≥ C log(n/δ) with Lemma A.2's "
                       f"constant, δ={cfg.delta:g})")
    if not cond["balanced"]:
        reasons.append(f"unbalanced labels ({npos} vs {nneg})")
    if not cond["independent"]:
        reasons.append("data linearly dependent")
    # the events the appendix proofs are conditioned on ("on the event of Lemma A.1", "all results in Section A")
    if not ev["A1"].all():
        reasons.append(f"initialization off the event of Lemma A.1 in {int((~ev['A1']).sum())}/{E} members "
                       f"(norms {int((~ev['A1_norms']).sum())}, inner products {int((~ev['A1_inner']).sum())})")
    if not ev["A2"].all():
        reasons.append(f"initialization off the event of Lemma A.2 (0.4m ≤ |S_i^(0)| ≤ 0.6m) in "
                       f"{int((~ev['A2']).sum())}/{E} members (|S_i^(0)|/m ∈ [{S0.min() / m:.3g}, {S0.max() / m:.3g}])")

    def _v(a):
        a = np.asarray(a, float)
        return float(a.flat[0]) if np.allclose(a, a.flat[0]) else [float(x) for x in a]

    return {
        "n": n, "d": d, "m": m, "act": cfg.act, "gamma": g, "sigma0": _v(s0), "eta": _v(eta),
        "delta": cfg.delta, "data": cfg.data,
        "R_min": st.R_min, "R_max": st.R_max, "R": st.R, "p": st.p, "epsilon": st.epsilon,
        "n_pos": npos, "n_neg": nneg,
        "C_data_L": c_data_L, "C_data_R": c_data_R, "C_data": c_data,
        "C_eta": float(C_eta.min()), "C_sigma": float(C_sigma.min()),
        "sigma0_limit": float((g if g > 0 else 1.0) / (C_SIGMA_MIN * st.R_max * logt)),
        "beta": float(beta.max()), "beta_over_gamma": float(beta.max() / g) if g > 0 else None, "beta_limit": beta_lim,
        "S0_min_frac": float(S0.min() / m), "S0_max_frac": float(S0.max() / m),
        "c_prime": float(m / max(S0.min(), 1)),
        "init_norms_ok": bool(ev["A1_norms"].all()), "diag_dominant": st.diag_dominant,
        "event_A1": bool(ev["A1"].all()), "event_A2": bool(ev["A2"].all()) if cfg.act == "relu" else None,
        "m_for_A2 (50 log(2n/δ))": m_width,
        "conditions": cond, "inside": not reasons, "outside_reasons": reasons,
    }


def relu_width_min(n: int, delta: float) -> float:
    """Theorem 4.3's width condition m ≥ C log(n/δ) with the constant of Lemma A.2 (the only one the paper gives):
    50 log(2n/δ), e.g. 265 at n = 10 and 369 at n = 80 for δ = 0.1."""
    if not (n >= 1 and 0 < delta < 1):
        raise ValueError(f"need n ≥ 1 and δ ∈ (0, 1), got n={n}, delta={delta}")
    return 50 * math.log(2 * n / delta)


def beta_implied_by_c_sigma(m: int, n: int, delta: float, c_sigma: float = C_SIGMA_MIN) -> float:
    """The largest β/γ (leaky; β for ReLU) a Gaussian W(0) on the event of Lemma A.1 can have when C_σ ≥ ``c_sigma``:
    √(2 log(8mn/δ))·σ₀R_max with σ₀R_max = γ/(c_sigma √log(mn/δ)), i.e. √2·√(log(8mn/δ)/log(mn/δ))/c_sigma
    (≤ 0.3 = BETA_MAX for every mn/δ ≥ 1.82: the β condition of the report is then implied, see the constants above)."""
    if not (m >= 1 and n >= 1 and 0 < delta < 1 and c_sigma > 0) or m * n / delta <= 1:
        raise ValueError(f"need m, n ≥ 1, δ ∈ (0, 1), mn/δ > 1 and c_sigma > 0, got {m}, {n}, {delta}, {c_sigma}")
    L = math.log(m * n / delta)
    return math.sqrt(2 * (L + math.log(8)) / L) / c_sigma


def inside(h: dict) -> tuple[bool, str]:
    """(inside, inside_reason) of a record from one hypothesis report ``h`` (:func:`hypotheses`): inside when every
    condition of the report held (the effective constants against their thresholds, balance, independence and the
    events of Lemma A.1 and, for ReLU, A.2, which the appendix proofs invoke), with the measured values."""
    vals = (f"C_data={h['C_data']:.3g} (≥ {C_DATA_MIN:g}), C_eta={h['C_eta']:.3g} (≥ {C_ETA_MIN:g}), "
            f"C_sigma={h['C_sigma']:.3g} (≥ {C_SIGMA_MIN:g}), beta={h['beta']:.3g} (≤ {h['beta_limit']:.3g}), "
            f"labels {h['n_pos']}/{h['n_neg']}, event A.1 {'held' if h['event_A1'] else 'failed'}"
            + (f", event A.2 (|S_i^(0)|/m ∈ [{h['S0_min_frac']:.3g}, {h['S0_max_frac']:.3g}]) "
               f"{'held' if h['event_A2'] else 'failed'}" if h["act"] == "relu" else ""))
    if h["inside"]:
        return True, f"hypothesis report ({h['act']}, n={h['n']}, m={h['m']}): every condition held: {vals}"
    return False, f"hypothesis report ({h['act']}, n={h['n']}, m={h['m']}): outside: " + "; ".join(h["outside_reasons"])


def inside_all(named: dict) -> tuple[bool, str]:
    """(inside, inside_reason) of a record resting on several runs ``{name: hypothesis report}``: inside only when
    every run is."""
    parts = {k: inside(h) for k, h in named.items()}
    ok = all(v for v, _ in parts.values())
    return ok, ("every run inside: " if ok else "not every run inside: ") + " | ".join(
        f"{k}: {why}" for k, (_, why) in parts.items())


def inside_rows(rows: list[dict], what: str = "runs") -> tuple[bool, str]:
    """(inside, inside_reason) of a record over sweep rows carrying :func:`hyp_row` (``inside``, ``outside_reasons``):
    inside when every row is, with the count and the outside rows' reasons."""
    k = sum(bool(r["inside"]) for r in rows)
    if k == len(rows):
        return True, f"all {k} {what} inside the hypothesis report (C_data, C_eta, C_sigma, beta, events A.1/A.2)"
    bad = "; ".join(f"{r.get('label', i)}: {r['outside_reasons']}" for i, r in enumerate(rows) if not r["inside"])
    return False, f"{len(rows) - k} of {len(rows)} {what} outside the hypothesis report ({bad})"


def hyp_row(h: dict) -> dict:
    """The hypothesis figures one table row of a sweep carries (one row per run): data statistics, the
    effective constants against their limits, the inside flag and the reasons."""
    keys = ("R_min", "R_max", "p", "epsilon", "C_data", "eta", "C_eta", "sigma0", "C_sigma", "sigma0_limit", "beta",
            "S0_min_frac", "event_A1", "event_A2", "inside")
    return {**{k: h[k] for k in keys}, "outside_reasons": "; ".join(h["outside_reasons"])}


def _independent(data: KouData) -> bool:
    s = torch.linalg.svdvals(data.X)
    return bool(s.min() > s.max() * data.X.shape[1] * torch.finfo(data.X.dtype).eps)


@dataclass
class KouRun:
    """A finished run: grid times ``t`` (numpy), and per-grid-point tensors

    - ``rho`` (T, E, 2, m, n): ρ_{j,r,i};  ``Z`` (T, E, 2, m, n): ⟨w_{j,r}, x_i⟩;
    - ``loss`` (T, E); ``dl`` (T, E, n): ℓ'_i; ``margin`` (T, E, n): y_i f(x_i);
    - ``norms`` (T, E, 2, m): ‖w_{j,r}‖; ``srank`` / ``srank_delta`` (T, E, 2): stable rank of
      W_j and of W_j − W_j(0); ``spec`` / ``spec_delta`` (T, E, 2): their spectral norms;
    - ``S_acc`` (T, E, n): Σ_{s<t} |ℓ'_i^{(s)}| (only with ``track=True``; exact per step).

    Trackers (``track=True``, evaluated at *every* step, not only on the grid):
    ``last_mismatch`` (E,): last step with some sign(⟨w_{j,r},x_i⟩) ≠ j·y_i (−1: never);
    ``last_change`` (E,): last step at which some σ'-pattern entry changed (−1: never);
    ``s0_lost`` (E,): number of (step, i, r∈S_i^(0)) with ⟨w_{y_i,r},x_i⟩ ≤ 0 (Lemma 5.8).
    ``hook_out``: whatever the user ``every_step`` hook accumulated (its return of ``finish()``).
    """

    cfg: KouConfig
    data: KouData
    eta: torch.Tensor
    hyp: dict
    t: np.ndarray
    Z0: torch.Tensor
    S0: torch.Tensor
    state: train.HiddenState
    obs: dict = field(default_factory=dict)
    last_mismatch: torch.Tensor | None = None
    last_change: torch.Tensor | None = None
    s0_lost: torch.Tensor | None = None
    hook_out: object = None

    def __getattr__(self, k):
        obs = self.__dict__.get("obs", {})
        if k in obs:
            return obs[k]
        raise AttributeError(k)

    def weights(self) -> torch.Tensor:
        """W(T) as (E, 2, m, d)."""
        E, m = self.cfg.E, self.cfg.m
        return self.state.weights().reshape(E, 2, m, -1)

    def tau(self, t=None):
        return tau(self.cfg, self.data, self.eta.cpu().numpy()[:, None] if t is None else self.eta.cpu().numpy(),
                   self.t if t is None else t)


OBSERVABLES = ("rho", "Z", "loss", "dl", "margin", "norms", "srank")


def coefficients(state: train.HiddenState, data: KouData, m: int) -> torch.Tensor:
    """ρ (E, 2, m, n) from the gd_hidden state: ρ_{j,r,i} = C_{j,r,i}‖x_i‖² (Def. 5.1)."""
    E = state.C.shape[0]
    return state.C.reshape(E, 2, m, -1) * data.norms2


def simulate(cfg: KouConfig, data: KouData, net: models.TwoClassNet, *, eta=None, steps: int | None = None,
             record=None, observe=OBSERVABLES, track: bool = False,
             every_step: Callable | None = None, sigma0s=None) -> KouRun:
    """Train the first layer by exact coefficient-space GD (:func:`theory.sim.train.gd_hidden`,
    Lemma 5.2) for ``steps`` (default ``cfg.steps``) and record on a grid.

    - ``eta``: scalar or (E,) step sizes (configurations on the ensemble axis); default
      :func:`default_eta`.
    - ``record``: grid of steps (default geometric, ``cfg.grid_points`` points, 0 included).
    - ``observe``: which of :data:`OBSERVABLES` to store at grid points (stable ranks cost an
      m×m eigendecomposition; they are computed from blocks, never from d-dimensional W).
    - ``track``: evaluate the cheap per-step trackers (see :class:`KouRun`) at every step; this
      roughly doubles the cost per step.
    - ``every_step(t, rho, Z, dl)``: optional user hook called at every step (with ``track``)
      *before* the update of step t → t+1; ``rho``, ``Z`` are (E, 2, m, n), ``dl`` (E, n). If the
      hook has a ``finish()`` method its return value is stored as ``hook_out``.

    Divergence raises :class:`theory.DivergenceError` (from gd_hidden).
    """
    steps = cfg.steps if steps is None else steps
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    bad = set(observe) - set(OBSERVABLES)
    if bad:
        raise ValueError(f"unknown observables {sorted(bad)}; choose from {OBSERVABLES}")
    X, y = data.X, data.y
    E, m, n = cfg.E, cfg.m, cfg.n
    if net.W.shape != (E, 2, m, cfg.d) or X.shape != (n, cfg.d):
        raise ValueError(f"net W {tuple(net.W.shape)} / X {tuple(X.shape)} do not match the config "
                         f"(E={E}, m={m}, d={cfg.d}, n={n})")
    eta_t = torch.as_tensor(default_eta(cfg, data) if eta is None else eta, dtype=X.dtype, device=X.device)
    eta_t = eta_t.expand(E).clone() if eta_t.dim() == 0 else eta_t
    W0 = net.W.clone()
    hyp = hypotheses(cfg, data, W0, eta_t, sigma0s=sigma0s)
    Z0 = W0 @ X.T  # (E,2,m,n)
    S0 = active_at_init(Z0, data)
    grid = sorted(set(train.geometric_grid(steps, cfg.grid_points) if record is None else (int(r) for r in record)))
    if not grid or grid[0] < 0 or grid[-1] > steps:
        raise ValueError(f"record must be a non-empty set of steps in [0, {steps}], got {grid[:3]}…{grid[-3:]}")
    grid_set = set(grid)
    # d-free blocks for norms and stable ranks: W Wᵀ = W0W0ᵀ + Z0 Cᵀ + C Z0ᵀ + C G Cᵀ
    need_sr = "srank" in observe
    need_norm = "norms" in observe
    if (need_sr or need_norm) and m <= cfg.d:
        A0 = W0 @ W0.transpose(-1, -2)  # (E,2,m,m)
    jy = data.jy.view(1, 2, 1, n)
    obs: dict[str, list] = {k: [] for k in observe}
    if need_sr:
        obs.update(srank_delta=[], spec=[], spec_delta=[])
    tr = {}
    if track:
        obs["S_acc"] = []
        tr = dict(last_mismatch=torch.full((E,), -1, dtype=torch.long, device=X.device),
                  last_change=torch.full((E,), -1, dtype=torch.long, device=X.device),
                  s0_lost=torch.zeros(E, dtype=torch.long, device=X.device),
                  acc=torch.zeros(E, n, dtype=X.dtype, device=X.device),
                  prev=(Z0 >= 0))

    def _obs(t, state, u):
        Z = state.Z.reshape(E, 2, m, n)
        rho = None
        dl = y * losses.derivative("logistic", u, y, validate=False)  # ℓ'(y_i f(x_i)) = y_i ∂ℓ/∂u_i (y_i² = 1), (E, n)
        if track:
            act = Z >= 0  # σ'-pattern (σ'(0) = 1)
            tt = torch.full((E,), t, dtype=torch.long, device=X.device)
            mism = ((torch.sign(Z) != jy).flatten(1)).any(1)
            tr["last_mismatch"] = torch.where(mism, tt, tr["last_mismatch"])
            ch = (act != tr["prev"]).flatten(1).any(1)
            tr["last_change"] = torch.where(ch, tt, tr["last_change"])
            tr["prev"] = act
            own = torch.where(y > 0, Z[:, 0], Z[:, 1])
            tr["s0_lost"] += (S0 & (own <= 0)).flatten(1).sum(1)
            if every_step is not None:
                rho = coefficients(state, data, m)
                every_step(t, rho, Z, dl)
        out = {}
        if t in grid_set:
            if rho is None:
                rho = coefficients(state, data, m)
            if "rho" in observe:
                obs["rho"].append(rho.clone())
            if "Z" in observe:
                obs["Z"].append(Z.clone())
            if "loss" in observe:
                obs["loss"].append(losses.loss("logistic", u, y))
            if "dl" in observe:
                obs["dl"].append(dl.clone())
            if "margin" in observe:
                obs["margin"].append((y * u).clone())
            if (need_sr or need_norm) and m > cfg.d:
                # wide layers: the d×d Gram matrices WᵀW carry the same nonzero spectrum as WWᵀ (m×m)
                Cm = state.C.reshape(E, 2, m, n)
                dW = Cm @ X  # (E, 2, m, d)
                W = W0 + dW
                if need_norm:
                    obs["norms"].append(W.norm(dim=-1))
                if need_sr:
                    sr, sp = srank_and_norm_from_gram(W.transpose(-1, -2) @ W)
                    obs["srank"].append(sr)
                    obs["spec"].append(sp)
                    if t > 0:
                        srd, spd = srank_and_norm_from_gram(dW.transpose(-1, -2) @ dW)
                    else:
                        srd, spd = torch.full_like(sr, float("nan")), torch.zeros_like(sp)
                    obs["srank_delta"].append(srd)
                    obs["spec_delta"].append(spd)
            elif need_sr or need_norm:
                Cm = state.C.reshape(E, 2, m, n)
                ZC = Z0 @ Cm.transpose(-1, -2)
                D = Cm @ data.G @ Cm.transpose(-1, -2)  # (W−W0)(W−W0)ᵀ
                WW = A0 + ZC + ZC.transpose(-1, -2) + D
                if need_norm:
                    obs["norms"].append(WW.diagonal(dim1=-2, dim2=-1).clamp_min(0).sqrt())
                if need_sr:
                    sr, sp = srank_and_norm_from_gram(WW)
                    obs["srank"].append(sr)
                    obs["spec"].append(sp)
                    if t > 0:
                        srd, spd = srank_and_norm_from_gram(D)
                    else:
                        srd, spd = torch.full_like(sr, float("nan")), torch.zeros_like(sp)
                    obs["srank_delta"].append(srd)
                    obs["spec_delta"].append(spd)
            if track:
                obs["S_acc"].append(tr["acc"].clone())
        if track:
            tr["acc"] += dl.abs()
        return out

    # with track the trackers run at every step through ``every`` (nothing stored per step), else at the grid only
    _, state = train.gd_hidden(net, X, y, loss="logistic", lr=eta_t, steps=steps, record=grid,
                               observe=None if track else _obs, every=_obs if track else None, write_back=True)
    stacked = {k: torch.stack(v) for k, v in obs.items() if v}
    run = KouRun(cfg, data, eta_t, hyp, np.asarray(grid), Z0, S0, state, stacked)
    if track:
        run.last_mismatch, run.last_change, run.s0_lost = tr["last_mismatch"], tr["last_change"], tr["s0_lost"]
        if every_step is not None and hasattr(every_step, "finish"):
            run.hook_out = every_step.finish()
    return run

