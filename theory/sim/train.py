"""Full-batch gradient descent batched over the ensemble axis, and gradient flow.

- :func:`gd` — weight-space GD on the sum of per-network losses (the networks are
  independent, so each gets its own gradient). ``lr`` is a scalar or one value per
  member, (E,). Records on a time grid (:func:`geometric_grid`). Engines: closed-form
  backprop of the bias-free models (:mod:`theory.sim.mlp_backprop`, the default where it
  applies) or torch.autograd; same iterates up to rounding.
- :func:`gd_hidden` — exact GD for two-layer nets whose first layer alone is trained
  (Wang's TwoLayerNet, Kou's TwoClassNet), run on pre-activations with the data Gram
  matrix: W(t) = W(0) + C(t) X, Z(t) = Z(0) + C(t) XXᵀ (Kou et al. Lemma 5.2). Cost per
  step O(E·H·N²) instead of O(E·H·N·d); same iterates as :func:`gd` up to rounding.
- :func:`adam`, :func:`sgd` — minibatch Adam / SGD (torch.optim) over the same ensemble, for the
  experiments that the papers ran with Adam/SGD (Wang et al. Sec. 6); records per epoch; gradients by
  the same two engines.
- :func:`gradient_flow` — θ̇ = −∇J(θ) with scipy's adaptive integrators (float64).

Every run checks for NaN/inf and blow-up and raises :class:`DivergenceError`
naming the step and the ensemble members, instead of returning numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from ..errors import DivergenceError
from . import gd_blocks, graph_step, losses, mlp_backprop
from .models import TwoClassNet, TwoLayerNet, check_inputs
from .trajectory import Trajectory  # noqa: F401  (re-exported: train.Trajectory)
from .trajectory import divergence_error
from .trajectory import guard as _guard
from ..device import draw_device


def geometric_grid(T: int, points: int = 40, *, start: int = 1, include_zero: bool = True) -> list[int]:
    """Sorted unique integer times, geometrically spaced from ``start`` to ``T`` (both kept): the default record
    grid of :func:`gd` (``geometric_grid(steps)``), :func:`gd_hidden` and :func:`minibatch` (in epochs).

    Args:
        T: the last time (an integer >= 0; ``T = 0`` gives ``[0]``).
        points: how many geometrically spaced points to draw (>= 2, default 40) before rounding to integers and
            removing duplicates, so fewer may come back when ``T`` is small.
        start: the first positive time (>= 1, default 1).
        include_zero: also keep time 0 (default True: the initial state is recorded).

    Raises ValueError for T < 0, points < 2 or start < 1.

    >>> geometric_grid(100, 5)
    [0, 1, 3, 10, 32, 100]
    >>> geometric_grid(1000, 4, start=10, include_zero=False)
    [10, 46, 215, 1000]
    """
    if T < 0 or points < 2 or start < 1:
        raise ValueError(f"geometric_grid needs T>=0, points>=2, start>=1 (got {T}, {points}, {start})")
    if T == 0:
        return [0]
    g = np.unique(np.round(np.geomspace(start, max(T, start), points)).astype(int))
    out = sorted(set(int(t) for t in g if t <= T) | {T} | ({0} if include_zero else set()))
    return out


def _lr(lr, E: int, ref: torch.Tensor) -> torch.Tensor:
    t = torch.as_tensor(lr, dtype=ref.dtype, device=ref.device)
    if t.dim() == 0:
        t = t.expand(E)
    if t.shape != (E,):
        raise ValueError(f"lr must be a scalar or shape ({E},), got {tuple(t.shape)}")
    if not bool((t > 0).all()) or not bool(torch.isfinite(t).all()):
        raise ValueError("learning rates must be positive and finite")
    return t


ENGINES = ("auto", "analytic", "autograd")


def _engine_net(engine: str, model, X, y, loss: str, *, shared_inputs: bool = False):
    """The :class:`mlp_backprop.Net` that the analytic engine runs, or None for autograd."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: choose one of {ENGINES}")
    if engine == "autograd":
        return None
    why = mlp_backprop.unsupported(model, X, y, loss, shared_inputs=shared_inputs)
    net = why or mlp_backprop.build(model, X, y, loss)
    if shared_inputs and not isinstance(net, str) and net.y_has_members:
        net = "minibatch labels must be shared by the members"
    if isinstance(net, str):
        if engine == "analytic":
            raise ValueError(f"the analytic engine does not cover this run ({net}); use engine='autograd'")
        return None
    return net


def gd(model, X: torch.Tensor, y: torch.Tensor, *, loss: str, lr, steps: int,
       record: Sequence[int] | None = None, observe: Callable | None = None,
       layer_lr: Sequence[float] | None = None, blowup: float = 1e8, engine: str = "auto",
       guard_every: int = gd_blocks.GUARD_EVERY) -> Trajectory:
    """Run ``steps`` full-batch GD steps on ``model.params`` in place; return the recorded :class:`Trajectory`.

    Each member e of the ensemble takes θ_e ← θ_e − η_e k_l ∇_{θ_e} J_e with J_e the mean over the N samples of
    the per-sample loss (the members are independent: the summed loss gives each its own gradient).

    Args:
        model: a batched model of :mod:`theory.sim.models` (``TwoLayerNet``, ``TwoClassNet``, ``DeepMLP``) or any
            object with ``params`` (tensors with a leading ensemble axis E, trained in place) and
            ``forward(X, params)`` giving outputs (E, N) or (E, N, o).
        X: inputs, (N, d) shared by the members or (E, N, d) one set per member; checked for shape and NaN/inf.
        y: targets, (N,) shared or (E, N) per member ((N, o) / (E, N, o) for vector outputs; int64 class
            indices (N,) for ``cross_entropy``).
        loss: a name of :data:`theory.sim.losses.NAMES`: ``"logistic"`` (y ∈ {±1}, log(1 + e^{−yu})), ``"bce"``
            (y ∈ {0, 1}), ``"squared"`` (the mean over samples of ½(u − y)², no factor 2 in the gradient: u − y),
            ``"cross_entropy"`` (outputs (E, N, K)). Labels outside the loss's range raise ValueError.
        lr: the learning rate η: a positive scalar, or one per member (a sequence or tensor of shape (E,)).
        steps: the number of GD steps T (an integer >= 0); the parameters end at step T.
        record: the steps 0..T at which the loss (and ``observe``) is kept, in any order; steps outside 0..T are
            ignored; default :func:`geometric_grid` (``steps``) (40 geometric points with 0 and T).
        observe: ``observe(step, params, outputs)``, called at each recorded step after its loss, with the
            model's parameters (requiring grad, grad mode on: it may differentiate ``model.forward(X, params)``)
            and the outputs (E, N[, o]) at that step. It returns None or a dict ``{name: value}``; tensor values
            are detached, copied and stored, read back with ``traj.stacked(name)`` (one row per recorded step).
        layer_lr: one rate multiplier k_l per entry of ``model.params`` (Zhu et al. Lemma 3); default all 1.
        blowup: a member diverges when its loss is not finite or above ``blowup`` × its loss at step 0 (0: only
            non-finite losses count); default 1e8.
        engine: ``"auto"``, ``"analytic"`` or ``"autograd"`` (below).
        guard_every: steps between two host reads of the divergence guard (default
            :data:`theory.sim.gd_blocks.GUARD_EVERY` = 64; below).

    Raises :class:`theory.errors.DivergenceError` (a ValueError) naming the first diverging step, the diverging
    members there, their losses and their initial losses, instead of returning numbers from a diverged run;
    ValueError on bad arguments (shapes, labels, rates, engine).

    ``engine``: ``"analytic"`` runs the closed-form backward pass of the bias-free models
    (:mod:`theory.sim.mlp_backprop`: in-place updates, no gradient tensors, first-layer pre-activations
    carried by the data Gram matrix between exact recomputations when N < d; on CPU the members run in
    cache-sized blocks from one recorded step to the next, one worker thread per intra-op thread:
    :mod:`theory.sim.gd_blocks`); ``"autograd"`` differentiates the summed loss
    with torch.autograd; ``"auto"`` (default) takes the analytic engine wherever it covers the model,
    activation, loss and labels, autograd otherwise. Both give the same iterates up to rounding
    (checks/core/test_fast_gd.py) and raise DivergenceError at the same step. After a DivergenceError the
    analytic engine may leave members at different steps.

    Divergence (a member's loss not finite or above ``blowup`` × its initial loss) is checked at every step and
    reported at the first diverging step, but read on the host only every ``guard_every`` steps and at every
    recorded step (:class:`gd_blocks.ChunkGuard`: no host synchronisation per step on CUDA, issue 33); after a
    DivergenceError the parameters may stand up to ``guard_every − 1`` steps past the reported one. The inputs and
    labels are checked once (:func:`theory.sim.models.check_inputs`, :func:`theory.sim.losses.loss` remember a
    tensor that passed), so over T steps the host is read about T / ``guard_every`` + len(``record``) times
    (checks/core/test_host_syncs.py).

    >>> import torch
    >>> from theory.sim import models
    >>> net = models.DeepMLP.init(2, [3, 8, 1], act="tanh", generator=torch.Generator().manual_seed(0), device="cpu")
    >>> X, y = torch.eye(3, dtype=torch.float64), torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64)
    >>> traj = gd(net, X, y, loss="squared", lr=[0.1, 0.2], steps=50, record=[0, 50])
    >>> traj.steps, tuple(traj.loss_tensor().shape)  # (recorded steps, members)
    ([0, 50], (2, 2))
    >>> bool((traj.loss_tensor()[1] < traj.loss_tensor()[0]).all())
    True
    >>> gd(net, X, 100 * y, loss="squared", lr=50.0, steps=100)
    Traceback (most recent call last):
    ...
    theory.errors.DivergenceError: GD diverged at step ...: loss of ensemble members [0, 1] is ...
    """
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    params = model.params
    E = params[0].shape[0]
    eta = _lr(lr, E, params[0])
    mult = [1.0] * len(params) if layer_lr is None else list(layer_lr)
    if len(mult) != len(params):
        raise ValueError(f"layer_lr needs {len(params)} entries, got {len(mult)}")
    rec = set(geometric_grid(steps) if record is None else record)
    net = _engine_net(engine, model, X, y, loss)
    if net is not None:
        return gd_blocks.run(model, net, eta, [float(k) for k in mult], steps, rec, observe, blowup, guard_every)
    return _gd_autograd(model, X, y, loss, eta, mult, steps, rec, observe, blowup, guard_every)


def _raise_divergence(hit, first: torch.Tensor) -> None:
    """DivergenceError for a :class:`gd_blocks.ChunkGuard` read ``(step, mask, losses)``."""
    step, bad, cur = hit
    raise divergence_error(step, bad.nonzero().flatten().tolist(), cur[bad].tolist(), first[bad].tolist())


def _gd_autograd(model, X, y, loss, eta, mult, steps, rec, observe, blowup, guard_every) -> Trajectory:
    """:func:`gd` by torch.autograd on the sum of the members' losses."""
    params = model.params
    traj = Trajectory()
    guard = gd_blocks.ChunkGuard(blowup, guard_every)
    for p in params:
        p.requires_grad_(True)
    try:
        for t in range(steps + 1):
            u = model.forward(X, params)
            cur = losses.loss(loss, u, y)
            hit = guard.note(t, cur.detach())
            if hit is None and (t in rec or t == steps):
                hit = guard.read()  # before anything is recorded or observed, and at the end
            if hit is not None:
                _raise_divergence(hit, guard.first)
            if t in rec:
                traj._add(t, cur, observe(t, params, u.detach()) if observe else None)
            if t == steps:
                break
            grads = torch.autograd.grad(cur.sum(), params)
            with torch.no_grad():
                for p, g, k in zip(params, grads, mult):
                    p.sub_(g * (eta * k).view(-1, *([1] * (g.dim() - 1))))
    finally:
        for p in params:
            p.requires_grad_(False)
    return traj


OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}


def adam(model, X: torch.Tensor, y: torch.Tensor, **kw) -> Trajectory:
    """Minibatch Adam (Wang et al. Sec. 6, ResNet/WRN runs): :func:`minibatch` with ``optimizer="adam"``.

    Args:
        model, X, y: as in :func:`minibatch` (inputs (N, d) shared by the members, targets (N,)).
        **kw: the keyword arguments of :func:`minibatch` other than ``optimizer``: ``loss``, ``lr``, ``epochs``,
            ``batch`` (required), ``generator``, ``record``, ``observe``, ``blowup``, ``engine``.

    >>> import torch
    >>> from theory.sim import models
    >>> net = models.DeepMLP.init(2, [3, 8, 1], act="tanh", generator=torch.Generator().manual_seed(0), device="cpu")
    >>> X, y = torch.eye(3, dtype=torch.float64), torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64)
    >>> traj = adam(net, X, y, loss="squared", lr=0.01, epochs=5, batch=2, generator=torch.Generator().manual_seed(1),
    ...             record=[0, 5])
    >>> traj.steps, tuple(traj.loss_tensor().shape)  # (recorded epochs, members)
    ([0, 5], (2, 2))
    """
    return minibatch(model, X, y, optimizer="adam", **kw)


def sgd(model, X: torch.Tensor, y: torch.Tensor, **kw) -> Trajectory:
    """Minibatch SGD (Wang et al. Sec. 6: 50 epochs, batch 512, lr 0.003): :func:`minibatch` with ``optimizer="sgd"``
    (torch.optim.SGD: no momentum, no weight decay).

    Args:
        model, X, y: as in :func:`minibatch` (inputs (N, d) shared by the members, targets (N,)).
        **kw: the keyword arguments of :func:`minibatch` other than ``optimizer``: ``loss``, ``lr``, ``epochs``,
            ``batch`` (required), ``generator``, ``record``, ``observe``, ``blowup``, ``engine``.

    >>> import torch
    >>> from theory.sim import models
    >>> net = models.TwoClassNet.init(3, 4, 5, sigma0=0.1, act="relu", generator=torch.Generator().manual_seed(0),
    ...                               device="cpu")
    >>> X = torch.randn(8, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    >>> y = torch.tensor([1.0, -1.0] * 4, dtype=torch.float64)
    >>> traj = sgd(net, X, y, loss="logistic", lr=0.1, epochs=3, batch=4, generator=torch.Generator().manual_seed(2))
    >>> traj.steps
    [0, 1, 2, 3]
    """
    return minibatch(model, X, y, optimizer="sgd", **kw)


class _Batches:
    """Analytic forward/backward on row subsets of X for :func:`minibatch`: one :class:`mlp_backprop.Block`
    (all members) per batch size, its buffers allocated once; gradients written into ``p.grad``."""

    def __init__(self, model, net):
        self.net, self.blocks = net, {}
        self.grads = [torch.zeros_like(p) for p in model.params]
        self.views = [g.view(w.shape) for g, w in zip(self.grads, net.weights)]

    def block(self, X, y):
        N = X.shape[0]
        if N not in self.blocks:
            self.blocks[N] = mlp_backprop.Block(self.net, 0, self.net.E, X.unsqueeze(0), y, gram=False)
        return self.blocks[N].rebind(X.unsqueeze(0), y)

    def outputs(self, X):
        return self.block(X, None).forward().clone()

    def backward(self, X, y, params):
        self.block(X, y).grads_into(self.views)
        for p, g in zip(params, self.grads):
            p.grad = g


def minibatch(model, X: torch.Tensor, y: torch.Tensor, *, optimizer: str, loss: str, lr: float, epochs: int,
              batch: int, generator: torch.Generator | None = None, record: Sequence[int] | None = None,
              observe: Callable | None = None, blowup: float = 1e8, engine: str = "auto") -> Trajectory:
    """Minibatch ``optimizer`` ("adam" or "sgd", torch's defaults otherwise) on ``model.params`` in place,
    ``epochs`` passes over shuffled batches of ``batch``; returns the :class:`Trajectory` recorded per epoch.

    Args:
        model: a batched model, as in :func:`gd`.
        X: inputs (N, d), shared by the members (per-member inputs are not supported here).
        y: targets (N,) (or (N, o); int64 class indices for ``cross_entropy``), shared by the members.
        optimizer: ``"adam"`` (torch.optim.Adam) or ``"sgd"`` (torch.optim.SGD), with torch's defaults but ``lr``.
        loss: a loss name, as in :func:`gd` (``"squared"``: the mean over the batch of ½(u − y)²).
        lr: the learning rate, one positive number for all members.
        epochs: the number of passes over the data (an integer >= 0).
        batch: the batch size (a positive integer; the last batch of an epoch may be smaller).
        generator: the torch.Generator that draws each epoch's order (one permutation shared by the members);
            default torch's global generator.
        record: the epochs 0..``epochs`` at which the full-data loss (and ``observe``) is kept; default
            :func:`geometric_grid` (``epochs``).
        observe: ``observe(epoch, params, outputs)`` at each recorded epoch, outputs the full-data outputs
            (E, N[, o]); returns None or a dict of values to store, as in :func:`gd`.
        blowup: the divergence threshold, as in :func:`gd` (checked on the full-data loss at every epoch).
        engine: ``"auto"``, ``"analytic"`` or ``"autograd"``, as in :func:`gd`.

    Raises DivergenceError naming the epoch and members, ValueError on bad arguments.

    The E members share the batch order; their losses are summed, so each member gets its own gradient and,
    both optimizers being elementwise, its own optimizer state. Records the full-data loss, its outputs
    computed in chunks of ``batch`` rows so that memory stays at one batch's activations (and
    ``observe(epoch, params, outputs)``) at the ``record`` epochs (default: a geometric grid); divergence
    raises DivergenceError. ``engine`` as in :func:`gd`: the analytic one (inputs (N, d)) writes the
    gradients into buffers allocated once and leaves the update to the torch optimizer.

    >>> import torch
    >>> from theory.sim import models
    >>> net = models.DeepMLP.init(2, [3, 8, 1], act="tanh", generator=torch.Generator().manual_seed(0), device="cpu")
    >>> X, y = torch.eye(3, dtype=torch.float64), torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64)
    >>> traj = minibatch(net, X, y, optimizer="sgd", loss="squared", lr=0.1, epochs=4, batch=3, record=[0, 4])
    >>> bool((traj.loss_tensor()[1] < traj.loss_tensor()[0]).all())
    True
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}: choose one of {sorted(OPTIMIZERS)}")
    if not isinstance(epochs, int) or epochs < 0:
        raise ValueError(f"epochs must be a non-negative integer, got {epochs!r}")
    if not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr!r}")
    params = model.params
    net = _engine_net(engine, model, X, y, loss, shared_inputs=True)
    fast = _Batches(model, net) if net is not None else None
    rec = set(geometric_grid(epochs) if record is None else record)
    traj, first, N = Trajectory(), None, X.shape[0]
    for p in params:
        p.requires_grad_(True)
    opt = OPTIMIZERS[optimizer](params, lr=lr)
    try:
        for ep in range(epochs + 1):
            with torch.no_grad():  # full-data outputs in chunks of `batch` rows: memory (E, batch, width)
                chunks = [X[b:b + batch] for b in range(0, N, batch)]
                u = torch.cat([fast.outputs(x) if fast else model.forward(x, params) for x in chunks], dim=1)
                cur = losses.loss(loss, u, y)
            first = cur if first is None else first
            _guard(ep, cur, first, blowup)
            if ep in rec:
                traj._add(ep, cur, observe(ep, params, u) if observe else None)
            if ep == epochs:
                break
            perm = torch.randperm(N, generator=generator, device=draw_device(generator, "cpu")).to(X.device)
            for b in range(0, N, batch):
                i = perm[b:b + batch]
                if fast:
                    with torch.no_grad():
                        fast.backward(X[i], y[i], params)
                else:
                    opt.zero_grad(set_to_none=True)
                    losses.loss(loss, model.forward(X[i], params), y[i]).sum().backward()
                opt.step()
    finally:
        for p in params:
            p.requires_grad_(False)
            p.grad = None
    return traj


def hidden_readout(model):
    """(W as (E, H, d), readout c as (E, H)) so that f(x) = Σ_h c_h σ(⟨w_h, x⟩): the two-layer view that
    :func:`gd_hidden` trains.

    Args:
        model: a :class:`~theory.sim.models.TwoLayerNet` (W (E, m, d), c = a, H = m) or a
            :class:`~theory.sim.models.TwoClassNet` (W (E, 2, m, d) viewed as (E, 2m, d), c = +1/m on the first m
            rows and −1/m on the last m: f = F₊₁ − F₋₁, Kou et al. Def. 3.1); ValueError for any other model.

    >>> import torch
    >>> from theory.sim import models
    >>> net = models.TwoClassNet.init(2, 4, 6, sigma0=0.1, act="relu", generator=torch.Generator().manual_seed(0),
    ...                               device="cpu")
    >>> W, c = hidden_readout(net)
    >>> tuple(W.shape), c[0].tolist()
    ((2, 8, 6), [0.25, 0.25, 0.25, 0.25, -0.25, -0.25, -0.25, -0.25])
    """
    if isinstance(model, TwoLayerNet):
        return model.W, model.a
    if isinstance(model, TwoClassNet):
        E, _, m, d = model.W.shape
        c = torch.tensor([1.0, -1.0], dtype=model.W.dtype, device=model.W.device).repeat_interleave(m) / m
        return model.W.reshape(E, 2 * m, d), c.expand(E, 2 * m)
    raise ValueError(f"gd_hidden supports TwoLayerNet and TwoClassNet, not {type(model).__name__}")


@dataclass
class HiddenState:
    """State of :func:`gd_hidden`: coefficients C (E, H, N), pre-activations Z (E, H, N).

    :func:`gd_hidden` keeps C and Z as (E, H, N) views of contiguous (E, N, H) storage: its hot
    update Zᵀ = Z(0)ᵀ + G Cᵀ is then one batched GEMM with a long inner row (2–3× faster on CPU than in
    the (E, H, N) layout); a state built by hand in any layout is converted on entry. ``X`` is (1 | E, N, d).

    Fields: ``C`` the coefficients (E, H, N) with W(t) = W(0) + C(t) X; ``Z`` the pre-activations W(t) Xᵀ (E, H, N);
    ``W0`` the first-layer weights W(0) (E, H, d); ``X`` the inputs (1 | E, N, d). Pass the state returned by one
    :func:`gd_hidden` call as its ``state`` to continue the run.

    >>> import torch
    >>> from theory.sim import models
    >>> net = models.TwoClassNet.init(2, 4, 6, sigma0=0.1, act="relu", generator=torch.Generator().manual_seed(0),
    ...                               device="cpu")
    >>> X = torch.randn(4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    >>> _, state = gd_hidden(net, X, torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64), loss="logistic",
    ...                      lr=0.5, steps=20)
    >>> tuple(state.C.shape), tuple(state.Z.shape), tuple(state.weights().shape)
    ((2, 8, 4), (2, 8, 4), (2, 8, 6))
    >>> torch.allclose(state.Z, state.weights() @ X.T)  # Z = W Xᵀ
    True
    """

    C: torch.Tensor
    Z: torch.Tensor
    W0: torch.Tensor
    X: torch.Tensor

    def weights(self) -> torch.Tensor:
        """W(t) = W(0) + C X, shape (E, H, d)."""
        return self.W0 + self.C @ self.X


def _nh_storage(state: HiddenState) -> tuple[torch.Tensor, torch.Tensor]:
    """(Cᵀ, Zᵀ) as contiguous (E, N, H) tensors whose transposes are ``state.C`` / ``state.Z``."""
    out: list[torch.Tensor] = []
    for name in ("C", "Z"):
        T = getattr(state, name).transpose(1, 2)
        if not T.is_contiguous():
            T = T.contiguous()
            setattr(state, name, T.transpose(1, 2))
        out.append(T)
    return out[0], out[1]


def gd_hidden(model, X: torch.Tensor, y: torch.Tensor, *, loss: str, lr, steps: int,
              record: Sequence[int] | None = None, observe: Callable | None = None,
              state: HiddenState | None = None, blowup: float = 1e8, write_back: bool = True,
              guard_every: int = 100, every: Callable | None = None):
    """Exact first-layer GD in pre-activation space; returns (trajectory, state).

    With W(t) = W(0) + C(t) X (first layer only; readout c fixed) one GD step is
    dC_{h,i} = −(η/N) ℓ'(u_i) c_h σ'(Z_{h,i}),  C ← C + dC,  Z = Z(0) + C·XXᵀ  (Z = W Xᵀ),
    so no step touches the d-dimensional weights (Kou et al. Lemma 5.2 / Def. 5.1).

    ``X`` is (N, d), shared by all members, or (E, N, d), one data set per member (seeds that draw
    their own data share the ensemble axis); ``y`` is (N,) or (E, N).

    ``observe(step, state, outputs)`` is called at recorded steps; ``every(step, state, outputs)`` at every
    step (after ``observe`` where both run), with nothing stored: per-step trackers use it rather than
    recording every step, whose per-step loss records pin the heap between the step's large temporaries
    (glibc grew a 2·10⁵-step Kou run past 23 GB that way). ``state`` resumes a
    previous run (then step numbers continue from 0 of this call). With
    ``write_back`` the model's W is set to W(T) at the end. Divergence is checked every
    ``guard_every`` steps and at every recorded step.

    Args:
        model: a :class:`~theory.sim.models.TwoLayerNet` or :class:`~theory.sim.models.TwoClassNet`
            (:func:`hidden_readout`); only its first layer W is trained.
        X: inputs (N, d) or (E, N, d), as above; checked for shape and NaN/inf.
        y: labels (N,) or (E, N).
        loss: a loss name of :data:`theory.sim.losses.NAMES` with scalar outputs (``"logistic"``, ``"bce"``,
            ``"squared"`` = the mean of ½(u − y)²), as in :func:`gd`.
        lr: the rate η, a positive scalar or one per member (E,).
        steps: the number of steps T (an integer >= 0).
        record: steps 0..T whose loss (and ``observe``) is kept; default :func:`geometric_grid` (``steps``).
        observe: ``observe(step, state, outputs)`` at recorded steps: the :class:`HiddenState` and the outputs
            (E, N); returns None or a dict of values to store, as in :func:`gd`.
        state: a :class:`HiddenState` to resume from (default: a fresh one at the model's W).
        blowup: the divergence threshold, as in :func:`gd`; a divergence raises DivergenceError.
        write_back: set the model's W to W(T) at the end (default True).
        guard_every: steps between divergence checks (default 100; each reads the host).
        every: ``every(step, state, outputs)`` at every step, its return value ignored (above).

    >>> import torch
    >>> from theory.sim import models
    >>> net = models.TwoClassNet.init(2, 4, 6, sigma0=0.1, act="leaky_relu", gamma=0.1,
    ...                               generator=torch.Generator().manual_seed(0), device="cpu")
    >>> X = torch.randn(4, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    >>> y = torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)
    >>> traj, state = gd_hidden(net, X, y, loss="logistic", lr=0.5, steps=20, record=[0, 20])
    >>> traj.steps, bool((traj.loss_tensor()[1] < traj.loss_tensor()[0]).all())
    ([0, 20], True)
    >>> torch.equal(net.W.reshape(2, 8, 6), state.weights())  # write_back: the model holds W(T)
    True
    """
    W0, c = hidden_readout(model)
    E, H, d = W0.shape
    X = check_inputs(X, E, d)  # (1 | E, N, d), finite
    N = X.shape[1]
    if not isinstance(y, torch.Tensor) or y.shape not in ((N,), (E, N)):
        raise ValueError(f"gd_hidden needs labels y of shape ({N},) or ({E}, {N}), got {tuple(getattr(y, 'shape', ()))}")
    eta = _lr(lr, E, W0)
    if state is None:
        Zt0 = torch.matmul(X, W0.transpose(1, 2))  # (E, N, H)
        state = HiddenState(torch.zeros_like(Zt0).transpose(1, 2), Zt0.transpose(1, 2), W0.clone(), X)
    Ct, Zt = _nh_storage(state)
    rec = set(geometric_grid(steps) if record is None else record)
    traj = Trajectory()
    act = model.act
    losses.per_sample(loss, torch.zeros_like(y), y)  # validate the labels once
    c_row = c.unsqueeze(1)  # (E, 1, H)
    step_size = (-eta / N).view(E, 1, 1)
    gram_e = (X @ X.transpose(-1, -2)).expand(E, N, N).contiguous()  # shared Gram, or one per member
    Z0t = Zt - torch.bmm(gram_e, Ct)  # Z(0)ᵀ (exactly Zt for a fresh state)
    s, h = torch.empty_like(Zt), torch.empty_like(Zt)  # reused buffers: no per-step allocation
    pl = act.kind == "pl"

    def forward() -> torch.Tensor:  # the outputs u (E, N), with c_h σ'(Z_{h,i}) left in s
        act.slope_into(Zt, s)
        s.mul_(c_row)  # c_h σ'(Z_{h,i})
        if pl:
            torch.mul(Zt, s, out=h)  # c_h σ(Z) = c_h σ'(Z) Z
        else:
            torch.mul(act(Zt), c_row, out=h)
        return h.sum(-1)  # (E, N)

    def update(u: torch.Tensor) -> None:
        Ct.addcmul_(s, losses.derivative(loss, u, y, validate=False).unsqueeze(-1) * step_size)  # C += dC
        torch.baddbmm(Z0t, gram_e, Ct, out=Zt)  # Zᵀ = Z(0)ᵀ + G Cᵀ (G symmetric): Z = W Xᵀ with W = W(0) + C X

    # on CUDA the step (forward and update, fixed shapes, in place) replays from a captured graph (issue 33)
    replay = (graph_step.replayed(lambda: update(forward()), [Ct, Zt], Zt.device)
              if graph_step.enabled(Zt.device, steps) else None)
    first = None
    for t in range(steps + 1):
        guard = t in rec or t % guard_every == 0 or t == steps
        u = forward() if replay is None or guard or every is not None else None
        if guard:
            cur = losses.loss(loss, u, y)
            if first is None:
                first = cur
            _guard(t, cur, first, blowup)
            if t in rec:
                traj._add(t, cur, observe(t, state, u) if observe else None)
        if every is not None:
            every(t, state, u)
        if t == steps:
            break
        if replay is None:
            update(u)
        else:
            replay()
    if write_back:
        W = state.weights()
        if hasattr(model, "a"):
            model.W = W
        else:
            model.W = W.reshape(model.W.shape)
    return traj, state


# Gradient flow lives in theory.sim.flow (with its evaluation/time budget); re-exported here.
from .flow import FlowBudgetError, gradient_flow  # noqa: E402,F401
