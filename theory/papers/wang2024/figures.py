"""Width × q training grids and the statistics behind Wang et al.'s empirical claims (§6, App. D):
Fig. 1 (`wang2024/fig-1`: 𝔖(f) vs robust accuracy, ϱ over training), Fig. 3 (`fig-3`: Δϱ per (m, q) at a
stated horizon τ = ηk), Fig. 4 (`fig-4`: accuracy vs ϱ; (F1) invariance of the binary linear model) and
Fig. 6 (`fig-6`: total Δϱ vs width and q).

Setting (theorem-faithful, catalog "common note"): binary labels y ∈ {0,1}, scalar output f = aᵀσ(Wx),
a ∈ {±1/√m} frozen, W(0) ~ N(0, m^{-(1+2q)}) (Assumption 5.1), full-batch GD on the mean BCE
(:func:`theory.sim.train.gd`), σ linear or ReLU (σ'(0) = 1, the paper's convention). Widths have different
shapes, so one GD run per width is batched over its ensemble axis E = |q| × seeds (member e ↔
q = qs[e // seeds], seed e % seeds). Statistics are on a held-out set (the paper "covers the entire testset").

:func:`run_width_sgd` is the paper-optimizer variant (minibatch SGD, :func:`theory.sim.train.sgd`, ϱ per epoch) for
MNIST-size inputs (d = 784): the ensemble is split into as many member chunks as a memory budget needs (the
trainer evaluates the full training loss in one (E, N, m) forward each epoch), and ‖D(x)W‖₂ comes from the
core's batched Lanczos with closed-form matrix–vector products (:func:`hidden_opnorm`) instead of one dense
Gram eigendecomposition per test point.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from scipy import stats as st

from theory.papers.wang2024 import adversarial as adv
from theory.papers.wang2024 import cocorrelation as cc
from theory.device import generator as make_generator
from theory.sim import jacobian as jac
from theory.sim import models, train


def varrho(W: torch.Tensor, a: torch.Tensor, Xe: torch.Tensor, act) -> torch.Tensor:
    """ϱ_{a,W} (linear, Eq. 11) or ϱ_{a,σ∘W} over the evaluation inputs (Def. 4.2, RMS form): (E,)."""
    if getattr(act, "name", act) == "linear":
        return cc.linear_varrho(W, a)
    return cc.mlp_varrho(W, a, Xe, act)


def dirichlet_energy(W: torch.Tensor, a: torch.Tensor, Xe: torch.Tensor, act) -> torch.Tensor:
    """𝔖(f) = (E_x‖J_f(x)‖₂²)^{1/2} (Def. 3.2) with the closed form ‖J_f(x)‖ = ‖WᵀD(x)a‖ (1×d Jacobian): (E,)."""
    D = act.slope(Xe @ W.transpose(-1, -2))  # (E, N, m)
    return ((D * a.unsqueeze(1)) @ W).norm(dim=-1).pow(2).mean(-1).sqrt()


def robust_accuracy(W, a, Xe, ye, eps: float, act, *, steps: int = 50, restarts: int = 2, generator=None):
    """Fraction of evaluation points still classified correctly under every L2 perturbation ‖δ‖ ≤ eps: (E,).

    Linear model: exact (correct iff s·wᵀx − eps‖w‖ > 0, w = Wᵀa). ReLU: L2 PGD on the BCE loss
    (:func:`adversarial.pgd_l2`, all E members in one batch); a point counts as broken when the best loss found
    reaches log 2 (s·f ≤ 0), so the PGD value is an *upper* estimate of the robust accuracy.
    """
    if not eps >= 0:
        raise ValueError(f"eps must be non-negative, got {eps!r}")
    s = 2 * ye - 1
    if getattr(act, "name", act) == "linear":
        w = (a.unsqueeze(-1) * W).sum(-2)  # (E, d)
        return ((s * (w @ Xe.T) - eps * w.norm(dim=-1, keepdim=True)) > 0).to(W.dtype).mean(-1)
    E, N, d = W.shape[0], Xe.shape[0], Xe.shape[1]
    Xr, yr = Xe.repeat(E, 1), ye.repeat(E)  # member-major rows: (E·N, d)

    def f(Z):  # Z (B·E·N, d), B = restarts × radii
        Zb = Z.reshape(-1, E, N, d).transpose(0, 1).reshape(E, -1, d)
        u = (act(Zb @ W.transpose(-1, -2)) * a.unsqueeze(1)).sum(-1)  # (E, B·N)
        return u.reshape(E, -1, N).transpose(0, 1).reshape(-1)

    worst = adv.pgd_l2(f, Xr, yr, [eps], steps=steps, restarts=restarts, generator=generator)[0]  # (E·N,)
    broken = worst >= torch.log(torch.tensor(2.0, dtype=W.dtype, device=W.device))
    return (~broken).reshape(E, N).to(W.dtype).mean(-1)


def accuracy(W, a, Xe, ye, act) -> torch.Tensor:
    """Test accuracy of ŷ = 1{sig(f) > 0.5} (Eq. 1): (E,)."""
    u = (act(Xe @ W.transpose(-1, -2)) * a.unsqueeze(1)).sum(-1)
    return ((u > 0).to(W.dtype) == ye).to(W.dtype).mean(-1)


@dataclass
class WidthRuns:
    """One width: member e ↔ (q = qs[e // seeds], seed e % seeds). ``varrho`` is (T, E) on ``steps``."""

    m: int
    qs: list
    seeds: int
    steps: list
    varrho: torch.Tensor
    acc: torch.Tensor
    rob_acc: torch.Tensor
    energy: torch.Tensor
    W0: torch.Tensor | None  # None for the SGD runs (not kept: 2.9 GB at m = 8192, E = 56)
    W: torch.Tensor | None
    a: torch.Tensor
    q_of: list = field(default_factory=list)
    tau: list = field(default_factory=list)  # GD time τ = η·(optimizer steps taken) at each recorded point
    diag: dict = field(default_factory=dict)  # run diagnostics (chunks, Lanczos iterations and control)

    def at(self, step: int) -> torch.Tensor:
        return self.varrho[self.steps.index(step)]

    def index_at(self, tau: float) -> int:
        """First recorded point with τ ≥ ``tau`` (the last one if the run is shorter)."""
        return next((i for i, t in enumerate(self.tau) if t >= tau - 1e-12), len(self.tau) - 1)


def _init_net(act, m: int, qs, seeds: int, d: int, generator, dtype, device):
    """E = |qs|·seeds nets of width m, member e ↔ q = qs[e // seeds]: W(0) ~ N(0, m^{-(1+2q)}) (Assumption 5.1)."""
    E = len(qs) * seeds
    q_of = [qs[e // seeds] for e in range(E)]
    net = models.TwoLayerNet.init(E, m, d, q=0.0, act=act, generator=generator, dtype=dtype, device=device)
    net.W = net.W * torch.tensor([m ** -q for q in q_of], dtype=dtype, device=device).view(-1, 1, 1)
    return net, q_of


def run_width(act, m: int, qs, seeds: int, data, *, eta: float, steps: int, record, eps: float | None,
              generator: torch.Generator, lr_scale=None, pgd_steps: int = 50, pgd_restarts: int = 2) -> WidthRuns:
    """Train E = |qs|·seeds nets of width m by full-batch GD (BCE) and measure ϱ(k), accuracy, robust accuracy
    at radius ``eps`` (``None``: not measured, ``rob_acc`` is NaN) and 𝔖(f) at the end. ``lr_scale(m, q)``
    multiplies η per member (only for the deliberately confounded companion of `fig-4`; the faithful runs use
    one η)."""
    Xtr, ytr, Xe, ye = data
    net, q_of = _init_net(act, m, qs, seeds, Xtr.shape[1], generator, Xtr.dtype, Xtr.device)
    E = len(q_of)
    W0 = net.W.clone()
    lr = eta if lr_scale is None else torch.tensor([eta * lr_scale(m, q) for q in q_of], dtype=Xtr.dtype, device=Xtr.device)

    def observe(t, params, u):
        with torch.no_grad():
            return {"varrho": varrho(params[0].detach(), net.a, Xe, net.act)}

    traj = train.gd(net, Xtr, ytr, loss="bce", lr=lr, steps=steps, record=record, observe=observe)
    W = net.W.detach()
    return WidthRuns(m=m, qs=list(qs), seeds=seeds, steps=list(traj.steps), varrho=traj.stacked("varrho"),
                     acc=accuracy(W, net.a, Xe, ye, net.act),
                     rob_acc=(torch.full((E,), float("nan"), dtype=W.dtype, device=W.device) if eps is None else
                              robust_accuracy(W, net.a, Xe, ye, eps, net.act, steps=pgd_steps, restarts=pgd_restarts,
                                              generator=generator)),
                     energy=dirichlet_energy(W, net.a, Xe, net.act), W0=W0, W=W, a=net.a, q_of=q_of,
                     tau=[eta * k for k in traj.steps])


# ---- the paper-optimizer variant (minibatch SGD on MNIST-size inputs) ---------------------------

GRAM_MAX = 32  # ‖D(x)W‖₂ by a dense min(m,d)² Gram eigendecomposition up to this size, by Lanczos above
LANCZOS_TOL = 1e-10  # relative accuracy of λ_max = ‖D(x)W‖₂² (Ritz-residual stop of the core's Lanczos)
LANCZOS_MAX_ITER = 200  # ≈ 70 iterations suffice at m = 4096, d = 784; reaching the cap raises


def _lanczos_opnorm(W: torch.Tensor, X: torch.Tensor, act) -> tuple[torch.Tensor, int]:
    """‖D(x)W‖₂ for every member and point by :func:`theory.sim.jacobian.lanczos_top_eig` on the smaller Gram side
    (v ↦ WᵀD²Wv in ℝ^d, or u ↦ DWWᵀDu in ℝ^m), products batched per member: ((E, N), max iterations)."""
    E, m, d = W.shape
    N = X.shape[0]
    D = act.slope(X @ W.transpose(-1, -2))  # (E, N, m)
    side_in = d <= m
    n = d if side_in else m
    D2 = D * D

    def matvec(idx, V):
        e, i = idx // N, idx % N
        mem, pos = torch.unique(e, return_inverse=True)
        buf = V.new_zeros(len(mem), N, n)
        buf[pos, i] = V
        Wm = W[mem]
        if side_in:
            out = ((buf @ Wm.transpose(-1, -2)) * D2[mem]) @ Wm
        else:
            Dm = D[mem]
            out = Dm * (((Dm * buf) @ Wm) @ Wm.transpose(-1, -2))
        return out[pos, i]

    k_max = min(n, LANCZOS_MAX_ITER)
    gen = make_generator(0)  # a CPU generator: the start vectors are drawn on the CPU and moved (issue 33)
    lam, it = jac.lanczos_top_eig(matvec, n, E * N, tol=LANCZOS_TOL, max_iter=k_max, dtype=W.dtype,
                                  device=W.device, generator=gen)
    if k_max < n and bool((it >= k_max).any()):
        raise RuntimeError(f"Lanczos for ‖D(x)W‖₂ reached its cap of {k_max} iterations at "
                           f"{int((it >= k_max).sum())} points (m = {m}, d = {d}): not converged")
    return lam.clamp_min(0).sqrt().reshape(E, N), int(it.max())


def hidden_opnorm(W: torch.Tensor, X: torch.Tensor, act, *, budget_bytes: float) -> tuple[torch.Tensor, int]:
    """‖D(x)W‖₂, (E, N): the Gram form (:func:`cocorrelation.mlp_hidden_opnorm_gram`) when min(m, d) ≤ GRAM_MAX,
    else :func:`_lanczos_opnorm`; members are processed in chunks whose Lanczos basis (N·(k+1)·n per member) fits
    ``budget_bytes``. Returns (norms, max Lanczos iterations; 0 for the Gram form)."""
    E, m, d = W.shape
    N, n = X.shape[0], min(m, d)
    if n <= GRAM_MAX:
        per = W.element_size() * N * (n * n + 2 * m)
        c = max(1, int(budget_bytes // per))
        return torch.cat([cc.mlp_hidden_opnorm_gram(W[i:i + c], X, act) for i in range(0, E, c)]), 0
    per = W.element_size() * N * ((min(n, LANCZOS_MAX_ITER) + 4) * n + 4 * m)
    c = max(1, int(budget_bytes // per))
    parts = [_lanczos_opnorm(W[i:i + c], X, act) for i in range(0, E, c)]
    return torch.cat([p[0] for p in parts]), max(p[1] for p in parts)


def varrho_large(W: torch.Tensor, a: torch.Tensor, Xe: torch.Tensor, act, *, budget_bytes: float):
    """ϱ (Def. 4.2 / Eq. 11) like :func:`varrho`, for large d: the linear ‖W‖₂ from the smaller Gram side, the
    ReLU E‖D(x)W‖₂² through :func:`hidden_opnorm`. Returns ((E,), max Lanczos iterations)."""
    if getattr(act, "name", act) == "linear":
        m, d = W.shape[-2:]
        G = W @ W.transpose(-1, -2) if m < d else W.transpose(-1, -2) @ W
        s1 = torch.linalg.eigvalsh(G)[..., -1].clamp_min(0).sqrt()
        return (a.unsqueeze(-1) * W).sum(-2).norm(dim=-1) / (a.norm(dim=-1) * s1), 0
    D = act.slope(Xe @ W.transpose(-1, -2))
    C2 = ((D * a.unsqueeze(1)) @ W).pow(2).sum(-1).mean(-1)
    B, it = hidden_opnorm(W, Xe, act, budget_bytes=budget_bytes)
    return (C2 / B.pow(2).mean(-1)).sqrt() / a.norm(dim=-1), it


def members_per_chunk(m: int, d: int, n_train: int, n_test: int, batch: int, n_eval: int, restarts: int,
                      itemsize: int, budget_bytes: float) -> int:
    """How many ensemble members one :func:`theory.sim.train.sgd` call can hold within ``budget_bytes``: W and its
    gradient (2md) plus the largest transient, the trainer's full-data forward (≈ 3·n_train·m per member, each
    epoch), the test-set accuracy (3·n_test·m), a minibatch step (6·batch·m) or the PGD batch (8·restarts·n_eval·m)."""
    per = itemsize * (2 * m * d + max(3 * n_train * m, 3 * n_test * m, 6 * batch * m, 8 * restarts * n_eval * m))
    return max(1, int(budget_bytes // per))


def run_width_sgd(act, m: int, qs, seeds: int, data, *, lr: float, epochs: int, batch: int, n_eval: int,
                  eps: float | None, generator: torch.Generator, order_seed: int, budget_bytes: float,
                  pgd_steps: int = 50, pgd_restarts: int = 2) -> WidthRuns:
    """The paper's optimizer (Wang et al. §6): E = |qs|·seeds nets of width m trained by minibatch SGD
    (:func:`theory.sim.train.sgd`, BCE, ``lr``, ``batch``, ``epochs``), ϱ recorded after every epoch on the first
    ``n_eval`` held-out points, accuracy on the whole held-out set, robust accuracy (radius ``eps``; ``None``: not
    measured) and 𝔖(f) on the ``n_eval`` points at the end.

    Members are trained in chunks of :func:`members_per_chunk` (``budget_bytes``); every chunk draws its batch order
    from a fresh CPU generator seeded with ``order_seed``, so all members share one batch order, as in one batched
    call. ``steps`` are epochs; ``tau`` = lr·⌈n/batch⌉·epoch. ``W0``/``W`` are not kept. ``diag`` holds the chunk
    size, the Lanczos iteration maximum and a control: ‖D(x)W‖₂ by Lanczos vs the Gram form on 4 points × 2 members
    of the trained nets (both values; the check forms their relative difference)."""
    Xtr, ytr, Xe, ye = data
    n, d = Xtr.shape
    if not 1 <= n_eval <= Xe.shape[0]:
        raise ValueError(f"n_eval must be in 1..{Xe.shape[0]}, got {n_eval}")
    Xv, yv = Xe[:n_eval], ye[:n_eval]
    net, q_of = _init_net(act, m, qs, seeds, d, generator, Xtr.dtype, Xtr.device)
    E = len(q_of)
    c = members_per_chunk(m, d, n, Xe.shape[0], batch, n_eval, pgd_restarts, Xtr.element_size(), budget_bytes)
    out = {k: [] for k in ("varrho", "acc", "rob", "energy")}
    iters, control = 0, None
    for lo in range(0, E, c):
        sub = models.TwoLayerNet(net.W[lo:lo + c].clone(), net.a[lo:lo + c], net.act)

        def observe(t, params, u):
            nonlocal iters
            with torch.no_grad():
                v, it = varrho_large(params[0].detach(), sub.a, Xv, sub.act, budget_bytes=budget_bytes / 2)
            iters = max(iters, it)
            return {"varrho": v}

        order = torch.Generator().manual_seed(int(order_seed))
        traj = train.sgd(sub, Xtr, ytr, loss="bce", lr=lr, epochs=epochs, batch=batch, generator=order,
                         record=list(range(epochs + 1)), observe=observe)
        W = sub.W.detach()
        out["varrho"].append(traj.stacked("varrho"))
        out["acc"].append(accuracy(W, sub.a, Xe, ye, sub.act))
        out["rob"].append(torch.full((W.shape[0],), float("nan"), dtype=W.dtype, device=W.device) if eps is None else
                          robust_accuracy(W, sub.a, Xv, yv, eps, sub.act, steps=pgd_steps, restarts=pgd_restarts,
                                          generator=generator))
        out["energy"].append(dirichlet_energy(W, sub.a, Xv, sub.act))
        if lo == 0 and getattr(sub.act, "name", sub.act) != "linear" and min(m, d) > GRAM_MAX:
            ref = cc.mlp_hidden_opnorm_gram(W[:2], Xv[:4], sub.act)
            control = {"lanczos": _lanczos_opnorm(W[:2], Xv[:4], sub.act)[0].cpu().tolist(), "gram": ref.cpu().tolist()}
        del sub, W, traj
    steps_per_epoch = -(-n // batch)
    return WidthRuns(m=m, qs=list(qs), seeds=seeds, steps=list(range(epochs + 1)),
                     varrho=torch.cat(out["varrho"], dim=1), acc=torch.cat(out["acc"]), rob_acc=torch.cat(out["rob"]),
                     energy=torch.cat(out["energy"]), W0=None, W=None, a=net.a, q_of=q_of,
                     tau=[lr * steps_per_epoch * ep for ep in range(epochs + 1)],
                     diag={"members per chunk": min(c, E), "chunks": -(-E // c), "steps per epoch": steps_per_epoch,
                           "max Lanczos iterations": iters, "Lanczos and Gram ‖D(x)W‖₂ (control)": control})


# ---- statistics ----------------------------------------------------------------------------------

def kendall_trend(x, y, alpha: float = 0.01, alternative: str = "greater"):
    """Kendall τ of y with x and its one-sided p-value (scipy, exact for small tie-free samples):
    (tau, p, significant at level alpha)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"kendall_trend needs ≥3 paired points, got shapes {x.shape}, {y.shape}")
    r = st.kendalltau(x, y, alternative=alternative)
    return float(r.statistic), float(r.pvalue), bool(r.pvalue < alpha)


def nondecreasing_fraction(series: torch.Tensor, *, tol: float = 0.0) -> torch.Tensor:
    """Fraction of recorded increments ϱ(k_{j+1}) − ϱ(k_j) ≥ −tol along the first axis: (E,)."""
    if series.shape[0] < 2:
        raise ValueError("need at least two recorded times")
    return (series.diff(dim=0) >= -tol).to(series.dtype).mean(0)


# ---- (F1): the binary linear network is logistic regression in w = Wᵀa ---------------------------

def logistic_gd(w0: torch.Tensor, X: torch.Tensor, y: torch.Tensor, *, eta: float, steps: int) -> torch.Tensor:
    """GD on the mean BCE of wᵀx from w0 (E, d): w ← w + η x̃, x̃ = (1/n)Σ(y_i − sig(wᵀx_i))x_i (Lemma B.1/(F1))."""
    w = w0.clone()
    for _ in range(steps):
        w = w + eta * ((y - torch.sigmoid(w @ X.T)) / X.shape[0]) @ X
    return w


def logistic_nonexpansive(X: torch.Tensor, eta: float) -> bool:
    """GD on a convex L-smooth loss is non-expansive when η ≤ 2/L; for the mean BCE of wᵀx, L ≤ λ_max(XᵀX)/(4n)."""
    L = float(torch.linalg.eigvalsh(X.T @ X / X.shape[0])[-1]) / 4
    return eta <= 2 / L


def flip_bound(w_ref: torch.Tensor, radius: torch.Tensor, Xe: torch.Tensor) -> torch.Tensor:
    """Largest accuracy change possible for any w with ‖w − w_ref‖ ≤ radius (w_ref (d,), radius (E,)): the
    fraction of evaluation x with |w_refᵀx| ≤ radius·‖x‖ (only those can change sign, Cauchy–Schwarz): (E,)."""
    return ((Xe @ w_ref).abs() <= radius.unsqueeze(-1) * Xe.norm(dim=-1)).to(Xe.dtype).mean(-1)


def kendall_S(x, y, strata) -> float:
    """Pooled within-stratum Kendall S = Σ_strata Σ_{i<j} sign(x_i − x_j)·sign(y_i − y_j)."""
    x, y, g = np.asarray(x, float), np.asarray(y, float), np.asarray(strata)
    out = 0.0
    for s in dict.fromkeys(g.tolist()):
        ix = np.flatnonzero(g == s)
        out += float((np.sign(x[ix][:, None] - x[ix][None, :]) * np.sign(y[ix][:, None] - y[ix][None, :])).sum()) / 2
    return out


def stratified_kendall(x, y, strata, *, n_perm: int, seed: int, alpha: float = 0.01):
    """Kendall trend of y in x within each stratum (e.g. along width at each fixed q), pooled.

    Per stratum: Kendall τ (scipy). Pooled statistic: S = Σ_strata Σ_{i<j} sign(x_i − x_j)·sign(y_i − y_j); its
    one-sided p-value (H1: S > 0) by permuting y within every stratum (``n_perm`` draws, p ≥ 1/(n_perm+1)).
    Returns dict(per={stratum: tau}, S, p, significant).
    """
    x, y, g = np.asarray(x, float), np.asarray(y, float), np.asarray(strata)
    if not (x.shape == y.shape == g.shape) or x.size < 3:
        raise ValueError("stratified_kendall needs equal-length x, y, strata with ≥3 points")
    groups = [np.flatnonzero(g == s) for s in dict.fromkeys(g.tolist())]
    if any(len(ix) < 3 for ix in groups):
        raise ValueError("every stratum needs ≥3 points")
    obs = kendall_S(x, y, g)
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_perm):
        yp = y.copy()
        for ix in groups:
            yp[ix] = y[rng.permutation(ix)]
        hits += kendall_S(x, yp, g) >= obs - 1e-9
    p = (1 + hits) / (1 + n_perm)
    per = {s: float(st.kendalltau(x[ix], y[ix]).statistic) for s, ix in zip(dict.fromkeys(g.tolist()), groups)}
    return dict(per=per, S=obs, p=float(p), significant=bool(p < alpha))


def kendall_permutation(x, y, *, n_perm: int, seed: int, alternative: str = "greater"):
    """Kendall S = Σ_{i<j} sign(x_i − x_j)·sign(y_i − y_j) of one line (ties allowed) and its one-sided permutation
    p-value (``greater``: H1 S > 0; ``less``: H1 S < 0), p = (1 + #{perm: S_perm as extreme})/(1 + n_perm).
    Vectorized over permutations, in blocks of bounded memory. Returns (tau_b from scipy, p)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.size < 3 or n_perm < 1:
        raise ValueError("kendall_permutation needs ≥3 paired points and n_perm ≥ 1")
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")
    sx = np.sign(x[:, None] - x[None, :])
    obs = float((sx * np.sign(y[:, None] - y[None, :])).sum()) / 2
    rng = np.random.default_rng(seed)
    P = np.argsort(rng.random((n_perm, x.size)), axis=1)
    chunk = max(1, 2 ** 22 // x.size ** 2)  # permutations per block: (chunk, n, n) stays ≤ 32 MiB
    S = np.concatenate([(sx[None] * np.sign(yp[:, :, None] - yp[:, None, :])).sum((1, 2)) / 2
                        for yp in (y[P[i:i + chunk]] for i in range(0, n_perm, chunk))])
    hits = (S >= obs - 1e-9) if alternative == "greater" else (S <= obs + 1e-9)
    return float(st.kendalltau(x, y).statistic), float((1 + hits.sum()) / (1 + n_perm))
