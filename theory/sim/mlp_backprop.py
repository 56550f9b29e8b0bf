"""Analytic forward and backward passes of the bias-free models, for the fast paths of :mod:`theory.sim.train`.

Every model of :mod:`theory.sim.models` is a bias-free MLP with a leading ensemble axis:

- :class:`~theory.sim.models.TwoLayerNet` (Wang et al. Eq. 3): trained W (E, m, d), frozen readout a;
- :class:`~theory.sim.models.TwoClassNet` (Kou et al. Def. 3.1): trained W viewed as (E, 2m, d), frozen
  readout ±1/m;
- :class:`~theory.sim.models.DeepMLP` (Zhu et al. Eq. 2, Bantzis et al.): every W_l trained, output scale α,
  NTK multipliers.

A :class:`Block` holds members [e0, e1) of such a model in the feature-major layout Z_l = W_l H_{l-1}
(shape (c, d_l, N); H_0 = Xᵀ): the forward pass into buffers allocated once, and the backward pass of
Σ_e mean_i ℓ(u_{e,i}, y_i) by the chain rule,

    ∂/∂Z_L = (α/N) ℓ'(u)ᵀ,   ∂/∂W_l = μ_l (∂/∂Z_l) H_{l-1}ᵀ,   ∂/∂H_{l-1} = μ_l W_lᵀ ∂/∂Z_l,
    ∂/∂Z_{l-1} = ∂/∂H_{l-1} ⊙ σ'(Z_{l-1})

(μ_l the NTK multiplier, 1 otherwise; σ' the activation's ``slope``, the same derivative that autograd sees,
including its value at 0). Its result is either a GD step applied in place (W_l += −η_e k_l ∂/∂W_l as one
``addmm_``/``baddbmm_`` per layer: no gradient tensor is ever allocated) or the gradient written into given
buffers (minibatch optimizers). Same iterates as autograd up to rounding (checks/core/test_fast_gd.py).

:func:`unsupported` says why a model/loss/input combination is left to autograd (custom activations or
model subclasses, non-contiguous weights, label shapes that do not match the outputs).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from . import activations as acts
from . import losses
from .models import DeepMLP, TwoClassNet, TwoLayerNet, check_inputs


@dataclass
class Net:
    """A model as a list of layers: ``weights[l]`` (E, d_{l+1}, d_l) views of the parameters, the last one
    frozen (``readout``) for the two-layer models; activation on every layer but the last."""

    weights: list
    trained: int          # the first ``trained`` layers are trained; the rest (a readout) are frozen
    act: object
    alpha: float
    mult: list            # NTK multipliers per layer (1.0 where none)
    X: torch.Tensor       # (1 | E, N, d)
    y: torch.Tensor
    loss: str
    y_has_members: bool
    out_dim: int

    @property
    def E(self) -> int:
        return self.weights[0].shape[0]


def _act_ok(act) -> bool:
    return type(act) in (acts.Activation, acts.MemberSlopes)


def _weights(model):
    """(weights, number trained, alpha, multipliers) or a reason string."""
    t = type(model)
    if t is TwoLayerNet:
        if not model.W.is_contiguous():
            return "non-contiguous W"
        return [model.W, model.a.unsqueeze(1)], 1, 1.0, [1.0, 1.0]
    if t is TwoClassNet:
        W = model.W
        if not W.is_contiguous():
            return "non-contiguous W"
        E, _, m, d = W.shape
        c = torch.tensor([1.0, -1.0], dtype=W.dtype, device=W.device).repeat_interleave(m) / m
        return [W.view(E, 2 * m, d), c.view(1, 1, 2 * m).expand(E, 1, 2 * m)], 1, 1.0, [1.0, 1.0]
    if t is DeepMLP:
        if not all(w.is_contiguous() for w in model.weights):
            return "non-contiguous weights"
        mult = [float(k) for k in model.multipliers] or [1.0] * len(model.weights)
        return list(model.weights), len(model.weights), float(model.alpha), mult
    return f"model class {t.__name__}"


def unsupported(model, X: torch.Tensor, y: torch.Tensor, loss: str, *, shared_inputs: bool = False) -> str | None:
    """Why the analytic path does not cover this call (None when it does). Raises the same ValueError as the
    autograd engine for bad inputs or labels. ``shared_inputs`` requires X of shape (N, d)."""
    got = _weights(model)
    if isinstance(got, str):
        return got
    if not _act_ok(model.act):
        return f"activation {type(model.act).__name__}"
    if not isinstance(y, torch.Tensor):
        return "labels are not a tensor"
    if shared_inputs and (not isinstance(X, torch.Tensor) or X.dim() != 2):
        return "minibatch inputs must be (N, d)"
    return None


def build(model, X: torch.Tensor, y: torch.Tensor, loss: str) -> Net | str:
    """The :class:`Net` of ``model`` on (X, y), or the reason it is not covered. Validates X and the labels
    with the models' and losses' own checks (same errors as a forward pass and a loss evaluation)."""
    why = unsupported(model, X, y, loss)
    if why:
        return why
    weights, trained, alpha, mult = _weights(model)
    E, d = weights[0].shape[0], weights[0].shape[-1]
    X = check_inputs(X, E, d)
    N, o = X.shape[1], weights[-1].shape[1]
    u_shape = (E, N) if o == 1 else (E, N, o)
    dl = losses.derivative(loss, torch.zeros(u_shape, dtype=X.dtype, device=X.device), y)  # validates labels
    if dl.shape != u_shape:
        return f"labels of shape {tuple(y.shape)} do not match outputs {u_shape}"
    has_members = y.dim() == len(u_shape) and y.shape[0] == E and E > 1
    if y.dim() == len(u_shape) and not has_members and y.shape[0] != 1:
        return f"labels of shape {tuple(y.shape)}"
    return Net(weights, trained, model.act, alpha, mult, X, y, loss, has_members, o)


def member_bytes(net: Net, N: int) -> int:
    """Bytes one member touches per step: its activations (Z, H, σ' per layer) and its weights, except the first
    layer's when its update is deferred (N < d, :class:`Block`): then the per-step coefficient buffer C_0
    (d_1 × N) stands in for W_0, which is read and written once per :data:`GRAM_REFRESH` steps."""
    size = net.weights[0].element_size()
    deferred = N < net.weights[0].shape[-1] and GRAM_REFRESH > 0
    w = sum(int(t[0].numel()) for t in net.weights[1 if deferred else 0:])
    a = sum(3 * t.shape[1] * N for t in net.weights) + (net.weights[0].shape[1] * N if deferred else 0)
    return size * (w + a)


def gd_step_flops(E: int, N: int, dims, trained: int | None = None) -> int:
    """Nominal FLOPs of one full-batch GD step of E bias-free nets with layer widths ``dims = [d, …, o]`` on N inputs,
    the first ``trained`` layers trained (default all): per layer l (d_l → d_{l+1}) the forward product, the weight
    gradient where trained and the input gradient above the first layer, 2·E·N·d_l·d_{l+1} each (what autograd
    executes; the analytic engine's Gram updates do less when N < d). The size that
    :func:`theory.device.place` reads (issue 33)."""
    dims = [int(v) for v in dims]
    if len(dims) < 2 or E < 1 or N < 1 or any(v < 1 for v in dims):
        raise ValueError(f"gd_step_flops needs E, N >= 1 and at least two positive widths, got {E}, {N}, {dims}")
    L = len(dims) - 1
    trained = L if trained is None else int(trained)
    return sum(2 * E * N * dims[l] * dims[l + 1] * (1 + (l < trained) + (l > 0)) for l in range(L))


def step_flops(net: Net) -> int:
    """:func:`gd_step_flops` of a :class:`Net` (its inputs' N; a Kou two-class net counts its 2m hidden units)."""
    dims = [net.weights[0].shape[-1]] + [w.shape[1] for w in net.weights]
    return gd_step_flops(net.E, net.X.shape[1], dims, net.trained)


GRAM_REFRESH = 32
"""GD steps between exact recomputations of the first layer's pre-activations from W_0 (0: always exact), so
that the rounding of the Gram updates cannot accumulate over a long run; the forward pass at every recorded
step is exact (checks/core/test_fast_gd.py runs cross the refresh)."""


def _slice_act(act, e0: int, e1: int):
    if isinstance(act, acts.MemberSlopes):
        return acts.MemberSlopes(act.gammas[e0:e1])
    return act


class Block:
    """Members [e0, e1) of a :class:`Net` on inputs X (1 | E, N, d): forward into preallocated buffers,
    backward as an in-place GD step (:meth:`gd_step`) or into gradient buffers (:meth:`grads_into`)."""

    def __init__(self, net: Net, e0: int, e1: int, X: torch.Tensor | None = None, y: torch.Tensor | None = None,
                 gram: bool = True):
        self.net, self.e0, self.e1 = net, e0, e1
        c = e1 - e0
        X = net.X if X is None else X
        y = net.y if y is None else y
        self.W = [w[e0:e1] for w in net.weights]
        self.X = X if X.shape[0] == 1 else X[e0:e1]            # (1 | c, N, d)
        self.shared = self.X.shape[0] == 1
        self.XT = self.X.transpose(1, 2)                       # (1 | c, d, N)
        self.y = y[e0:e1] if net.y_has_members else y
        self.act = _slice_act(net.act, e0, e1)
        self.pl = getattr(self.act, "kind", "pl") == "pl"
        self.linear = bool(getattr(self.act, "is_linear", False))
        N = self.X.shape[1]
        self.N = N
        L = len(self.W)
        opts = dict(dtype=self.W[0].dtype, device=self.W[0].device)
        self.Z = [torch.empty(c, w.shape[1], N, **opts) for w in self.W]
        self.S = [torch.empty(c, w.shape[1], N, **opts) for w in self.W[:-1]]   # σ'(Z_l)
        self.H = [torch.empty(c, w.shape[1], N, **opts) for w in self.W[:-1]]   # σ(Z_l)
        self.u = self.cur = None
        self.L = L
        # First-layer pre-activations by the Gram matrix between exact refreshes (GD steps only, N < d):
        # W_0 += A X  ⇒  Z_0 += μ_0 A XXᵀ, O(c d_1 N²) instead of the O(c d_1 N d) product W_0 Xᵀ.
        d = self.X.shape[-1]
        self.gram = self.X @ self.XT if gram and N < d and GRAM_REFRESH > 0 else None  # (1 | c, N, N)
        self.z0_ok = False     # Z_0 holds μ_0 W_0 Xᵀ at the current W_0 (plus the pending C_0 X)
        self.since = 0         # Gram updates since Z_0 was last computed from W_0
        # Deferred first-layer update: the steps' A (W_0 += A X) are summed in C_0 (c, d_1, N) and applied as one
        # product W_0 += C_0 X when W_0 is next read (a refresh of Z_0, the end of a segment): per step the
        # block touches C_0 instead of streaming W_0 (d/N times larger) from memory. Same sum, other rounding.
        self.C = torch.zeros_like(self.Z[0]) if self.gram is not None else None
        self.pending = False   # C_0 holds updates not yet applied to W_0

    def rebind(self, X: torch.Tensor, y: torch.Tensor | None) -> "Block":
        """Point the block at other inputs (1, N, d) with the same N (and labels, when given)."""
        if X.shape[1] != self.N:
            raise ValueError(f"block built for {self.N} inputs, got {X.shape[1]}")
        self.X, self.XT = X, X.transpose(1, 2)
        if y is not None:
            self.y = y
        self.flush()
        self.u = self.cur = None
        self.z0_ok, self.gram, self.C = False, None, None
        return self

    def flush(self) -> None:
        """W_0 += C_0 X (the deferred first-layer updates), C_0 ← 0."""
        if self.pending:
            self._gemm(0, self.C, self.W[0], accumulate=True)
            self.C.zero_()
            self.pending = False

    # -- forward ---------------------------------------------------------------------------------------
    def _layer0(self, out: torch.Tensor) -> None:
        W0 = self.W[0]
        if self.shared:
            c, o, d = W0.shape
            torch.mm(W0.view(c * o, d), self.XT[0], out=out.view(c * o, self.N))
        else:
            torch.bmm(W0, self.XT, out=out)

    def forward(self) -> torch.Tensor:
        """Outputs u (c, N) or (c, N, o) at the current weights; cached until the next update."""
        if self.u is not None:
            return self.u
        net = self.net
        for l in range(self.L):
            Z = self.Z[l]
            if l == 0:
                if not self.z0_ok:
                    self.flush()
                    self._layer0(Z)
                    if net.mult[0] != 1.0:
                        Z.mul_(net.mult[0])
                    self.z0_ok, self.since = True, 0
            else:
                torch.bmm(self.W[l], self.H[l - 1], out=Z)
                if net.mult[l] != 1.0:
                    Z.mul_(net.mult[l])
            if l < self.L - 1:
                self.act.slope_into(Z, self.S[l])
                if self.linear:
                    self.H[l].copy_(Z)
                elif self.pl:
                    torch.mul(Z, self.S[l], out=self.H[l])
                else:
                    self.H[l].copy_(self.act(Z))
        out = self.Z[-1]
        if net.alpha != 1.0:
            out = out * net.alpha
        self.u = out[:, 0] if net.out_dim == 1 else out.transpose(1, 2)
        self.cur = None
        return self.u

    def loss(self) -> torch.Tensor:
        """Mean loss per member (c,), at the cached forward pass."""
        if self.cur is None:
            self.cur = losses.loss(self.net.loss, self.forward(), self.y)
        return self.cur

    # -- backward --------------------------------------------------------------------------------------
    def _backward(self, sink) -> None:
        """Chain rule from the cached forward pass; ``sink(l, dZ_l)`` receives ∂/∂Z_l (c, d_l, N) after
        ∂/∂H_{l-1} has been formed from W_l (so the sink may overwrite W_l)."""
        net, u = self.net, self.forward()
        dl = losses.derivative(net.loss, u, self.y, validate=False)
        dZ = (dl.unsqueeze(1) if net.out_dim == 1 else dl.transpose(1, 2)) * (net.alpha / self.N)
        for l in range(self.L - 1, -1, -1):
            prev = None
            if l > 0:
                if self.W[l].shape[1] == 1:   # readout row: Wᵀ dZ is an outer product
                    prev = self.W[l].transpose(1, 2) * dZ
                else:
                    prev = torch.bmm(self.W[l].transpose(1, 2), dZ)
                if net.mult[l] != 1.0:
                    prev.mul_(net.mult[l])
                prev.mul_(self.S[l - 1])
            if l < net.trained:
                sink(l, dZ)
            dZ = prev
        self.u = self.cur = None

    def _gemm(self, l: int, A: torch.Tensor, out: torch.Tensor, accumulate: bool) -> None:
        """out (+)= A H_{l-1}ᵀ, A (c, d_l, N); H_{-1} = X."""
        if l == 0 and self.shared:
            c, o, d = out.shape
            A2, o2 = A.reshape(c * o, self.N), out.view(c * o, d)
            if accumulate:
                o2.addmm_(A2, self.X[0])
            else:
                torch.mm(A2, self.X[0], out=o2)
            return
        B = self.X if l == 0 else self.H[l - 1].transpose(1, 2)
        if accumulate:
            out.baddbmm_(A, B)
        else:
            torch.bmm(A, B, out=out)

    def step_scales(self, eta: torch.Tensor, layer_lr) -> list:
        """The factors −η_e k_l μ_l, (c, 1, 1) per trained layer, that :meth:`gd_step` applies to ∂/∂Z_l."""
        return [(eta * (-layer_lr[l] * self.net.mult[l])).view(-1, 1, 1) for l in range(self.net.trained)]

    def gd_step(self, scales: list) -> None:
        """W_l ← W_l − η_e k_l ∂/∂W_l in place for every trained layer (``scales`` from :meth:`step_scales`)."""

        def sink(l, dZ):
            A = dZ * scales[l]
            if l == 0 and self.C is not None:
                self.C.add_(A)
                self.pending = True
            else:
                self._gemm(l, A, self.W[l], accumulate=True)
            if l == 0:
                self._gram_update(A)

        self._backward(sink)

    def _gram_update(self, A: torch.Tensor) -> None:
        """After W_0 += A X: Z_0 += μ_0 A XXᵀ, or mark Z_0 stale (every GRAM_REFRESH steps, or N ≥ d)."""
        if self.gram is None or not self.z0_ok or self.since >= GRAM_REFRESH:
            self.z0_ok = False
            return
        Z0, mu = self.Z[0], self.net.mult[0]
        if self.shared:
            c, o, N = Z0.shape
            Z0.view(c * o, N).addmm_(A.reshape(c * o, N), self.gram[0], alpha=mu)
        else:
            Z0.baddbmm_(A, self.gram, alpha=mu)
        self.since += 1

    def refresh(self) -> None:
        """Recompute Z_0 = μ_0 W_0 Xᵀ at the next forward pass (no accumulated Gram updates)."""
        self.z0_ok = False
        self.u = self.cur = None

    def grads_into(self, grads) -> None:
        """grads[l] (the members' slice of each trained parameter's gradient) ← ∂/∂W_l."""
        mult = self.net.mult
        self.z0_ok = False  # the weights change outside the block (optimizer step)

        def sink(l, dZ):
            self._gemm(l, dZ, grads[l], accumulate=False)
            if mult[l] != 1.0:
                grads[l].mul_(mult[l])

        self._backward(sink)
