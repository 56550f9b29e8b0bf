"""Batched models: every parameter has a leading ensemble axis E.

E independent networks run as one tensor program. Inputs ``X`` are (N, d)
shared by all members or (E, N, d) per member; outputs are (E, N) for scalar
models and (E, N, o) for vector outputs.

- :class:`TwoLayerNet` — Wang et al. (Eq. 3): f(x) = aᵀσ(Wx), a ∈ {±1/√m} frozen,
  W ~ N(0, m^{-(1+2q)}).
- :class:`TwoClassNet` — Kou et al. (Def. 3.1): f = F₊₁ − F₋₁, F_j(x) = (1/m)Σ_r σ(⟨w_{j,r},x⟩),
  σ ReLU or leaky ReLU with σ'(0)=1; index 0 of the class axis is j=+1.
- :class:`DeepMLP` — bias-free f(x) = α·W_L σ(…σ(W₁x)) with per-layer init std
  (Zhu et al. Eq. 2: β_l, output scale α; Bantzis et al.: small init).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import torch

from ..device import DEFAULT_DTYPE, get_device
from . import activations as acts
from .losses import _CheckedOnce
from ..device import draw


def _positive_int(name: str, v) -> int:
    if not isinstance(v, (int,)) or isinstance(v, bool) or v <= 0:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


_FINITE = _CheckedOnce()  # inputs whose finiteness was read (issue 33)


def check_inputs(X: torch.Tensor, E: int, d: int) -> torch.Tensor:
    """Validate X as (N, d) or (E, N, d) and finite; return it as (E|1, N, d).

    Args:
        X: inputs, (N, d) shared by the E members or (E, N, d) one set per member.
        E: the ensemble size; d: the input dimension.

    Raises ValueError naming the expected shapes, or NaN/inf. The shape is checked at every call; finiteness
    (a host read, a synchronisation on CUDA) once per tensor and version: the same ``X`` passed again unchanged,
    as GD's loop passes it to every forward pass, is not read again (issue 33; a change in place is seen, one
    through ``.data`` or a NumPy view is not).

    >>> import torch
    >>> check_inputs(torch.zeros(4, 3, dtype=torch.float64), E=2, d=3).shape
    torch.Size([1, 4, 3])
    """
    if not isinstance(X, torch.Tensor):
        raise ValueError(f"X must be a torch.Tensor, got {type(X).__name__}")
    given = X
    if X.dim() == 2:
        X = X.unsqueeze(0)
    if X.dim() != 3 or X.shape[-1] != d or X.shape[0] not in (1, E):
        raise ValueError(f"X has shape {tuple(X.shape)}; expected (N, {d}) or ({E}, N, {d})")
    if _FINITE.hit(given, "finite"):
        return X
    try:
        finite = bool(torch.isfinite(X).all())
    except RuntimeError:  # inside torch.func.vmap a data-dependent check is not allowed; checked outside
        return X
    if not finite:
        raise ValueError("X contains NaN or inf")
    _FINITE.add(given, "finite")
    return X


def check_params(params: Sequence[torch.Tensor]) -> None:
    """Raise a ValueError naming the first non-finite parameter.

    Args:
        params: a list of tensors (e.g. ``model.params``).

    >>> import torch
    >>> check_params([torch.ones(2), torch.tensor([1.0, float("nan")])])
    Traceback (most recent call last):
    ...
    ValueError: parameter 1 (shape (2,)) contains NaN or inf
    """
    for i, p in enumerate(params):
        if not bool(torch.isfinite(p).all()):
            raise ValueError(f"parameter {i} (shape {tuple(p.shape)}) contains NaN or inf")


@dataclass
class TwoLayerNet:
    """Wang et al.: f(x) = aᵀσ(Wx). W: (E, m, d) trained, a: (E, m) frozen, ``act`` an
    :class:`~theory.sim.activations.Activation`.

    Build with :meth:`init`; ``forward(X)`` (or ``net(X)``) gives (E, N); ``params`` = [W] is what
    :func:`theory.sim.train.gd` trains in place (``gd_hidden`` trains it faster, in coefficient space).

    >>> import torch
    >>> net = TwoLayerNet.init(E=4, m=32, d=10, generator=torch.Generator().manual_seed(0), device="cpu")
    >>> tuple(net.W.shape), tuple(net.a.shape), net.act.name, net(torch.ones(5, 10, dtype=torch.float64)).shape
    ((4, 32, 10), (4, 32), 'relu', torch.Size([4, 5]))
    """

    W: torch.Tensor
    a: torch.Tensor
    act: acts.Activation

    @classmethod
    def init(cls, E: int, m: int, d: int, *, q: float = 0.0, act: str | acts.Activation = "relu",
             generator: torch.Generator | None = None, dtype=DEFAULT_DTYPE, device=None) -> "TwoLayerNet":
        """W_ij ~ N(0, m^{-(1+2q)}) (Assumption 5.1), a_r uniform on {±1/√m}.

        Args:
            E: ensemble size (independent networks); m: width; d: input dimension.
            q: the init exponent of Wang et al. (variance m^{-(1+2q)}).
            act: an activation name of :func:`theory.sim.activations.get` (σ'(0) = 1) or an Activation.
            generator: the torch.Generator to draw from (``record.generator(config)`` in a check).
            dtype, device: of the weights (default float64 on the policy device).
        """
        E, m, d = (_positive_int(k, v) for k, v in (("E", E), ("width m", m), ("input dim d", d)))
        dev = device or get_device()
        std = m ** (-(0.5 + q))
        W = draw(torch.randn, E, m, d, generator=generator, dtype=dtype, device=dev) * std
        signs = draw(torch.randint, 0, 2, (E, m), generator=generator, device=dev).to(dtype) * 2 - 1
        act = acts.get(act, grad_at_zero=1.0) if isinstance(act, str) else act
        return cls(W, signs / math.sqrt(m), act)

    @property
    def params(self) -> list[torch.Tensor]:
        """The trained parameters, [W]."""
        return [self.W]

    @property
    def E(self) -> int:
        """The ensemble size."""
        return self.W.shape[0]

    def hidden(self, X: torch.Tensor, W: torch.Tensor | None = None) -> torch.Tensor:
        """Pre-activations Wx, shape (E, N, m), of inputs X (N, d) or (E, N, d); ``W`` replaces the model's."""
        W = self.W if W is None else W
        X = check_inputs(X, W.shape[0], W.shape[-1])
        return X @ W.transpose(-1, -2)

    def forward(self, X: torch.Tensor, params: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        """Outputs (E, N) at inputs X (N, d) or (E, N, d); ``params`` ([W]) replaces the model's (for autograd)."""
        W = self.W if params is None else params[0]
        return (self.act(self.hidden(X, W)) * self.a.unsqueeze(1)).sum(-1)

    __call__ = forward


@dataclass
class TwoClassNet:
    """Kou et al.: W: (E, 2, m, d); f(x) = F₊₁(x) − F₋₁(x), F_j = (1/m)Σ_r σ(⟨w_{j,r},x⟩).

    Build with :meth:`init`; ``forward(X)`` gives (E, N); ``params`` = [W].

    >>> import torch
    >>> net = TwoClassNet.init(E=2, m=8, d=6, sigma0=1e-3, act="leaky_relu", gamma=0.1,
    ...                        generator=torch.Generator().manual_seed(0), device="cpu")
    >>> tuple(net.W.shape), net.act.gamma, net(torch.ones(3, 6, dtype=torch.float64)).shape
    ((2, 2, 8, 6), 0.1, torch.Size([2, 3]))
    """

    W: torch.Tensor
    act: acts.Activation
    SIGNS = (1.0, -1.0)

    @classmethod
    def init(cls, E: int, m: int, d: int, *, sigma0: float, act: str = "leaky_relu", gamma: float | None = None,
             generator: torch.Generator | None = None, dtype=DEFAULT_DTYPE, device=None) -> "TwoClassNet":
        """w_{j,r}(0) ~ N(0, σ₀² I_d) (Def. 3.2); σ'(0) = 1.

        Args:
            E: ensemble size; m: neurons per class; d: input dimension.
            sigma0: the init standard deviation σ₀ (> 0).
            act: ``"relu"`` or ``"leaky_relu"`` (then ``gamma``, its negative-side slope in (0, 1)), or an
                Activation (e.g. :func:`theory.sim.activations.member_slopes`).
            gamma: see ``act``.
            generator, dtype, device: as in :meth:`TwoLayerNet.init`.
        """
        E, m, d = (_positive_int(k, v) for k, v in (("E", E), ("width m", m), ("input dim d", d)))
        if not sigma0 > 0:
            raise ValueError(f"sigma0 must be positive, got {sigma0!r}")
        dev = device or get_device()
        W = draw(torch.randn, E, 2, m, d, generator=generator, dtype=dtype, device=dev) * sigma0
        a = acts.get(act, gamma=gamma, grad_at_zero=1.0) if isinstance(act, str) else act
        return cls(W, a)

    @property
    def params(self) -> list[torch.Tensor]:
        """The trained parameters, [W]."""
        return [self.W]

    @property
    def E(self) -> int:
        """The ensemble size."""
        return self.W.shape[0]

    def preact(self, X: torch.Tensor, W: torch.Tensor | None = None) -> torch.Tensor:
        """⟨w_{j,r}, x_i⟩, shape (E, 2, m, N), of inputs X (N, d) or (E, N, d); ``W`` replaces the model's."""
        W = self.W if W is None else W
        X = check_inputs(X, W.shape[0], W.shape[-1])
        return W @ X.transpose(-1, -2).unsqueeze(1)

    def forward(self, X: torch.Tensor, params: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        """Outputs f(x) = F₊₁(x) − F₋₁(x), (E, N), at inputs ``X`` (N, d) or (E, N, d); ``params`` ([W]) replaces
        the model's (for autograd)."""
        W = self.W if params is None else params[0]
        F = self.act(self.preact(X, W)).mean(2)  # (E, 2, N)
        return F[:, 0] - F[:, 1]

    __call__ = forward


@dataclass
class DeepMLP:
    """Bias-free f(x) = α·W_L σ(W_{L-1} … σ(W₁x)); weights[l]: (E, d_{l+1}, d_l).

    Build with :meth:`init` (``dims = [d, hidden widths…, o]``); ``forward(X)`` gives (E, N) for o = 1, else
    (E, N, o); ``params`` is the list of weights [W₁, …, W_L] that :func:`theory.sim.train.gd` trains in place.

    >>> import torch
    >>> net = DeepMLP.init(3, [5, 16, 16, 1], act="relu", generator=torch.Generator().manual_seed(0), device="cpu")
    >>> [tuple(w.shape) for w in net.params], net.E, net.depth
    ([(3, 16, 5), (3, 16, 16), (3, 1, 16)], 3, 3)
    >>> net(torch.ones(7, 5, dtype=torch.float64)).shape
    torch.Size([3, 7])
    """

    weights: list
    act: acts.Activation
    alpha: float = 1.0
    multipliers: list = field(default_factory=list)

    @classmethod
    def init(cls, E: int, dims: Sequence[int], *, stds: Sequence[float] | str = "he",
             act: str | acts.Activation = "relu", alpha: float = 1.0, ntk: bool = False,
             generator: torch.Generator | None = None, dtype=DEFAULT_DTYPE, device=None,
             grad_at_zero: float = 0.0) -> "DeepMLP":
        """``dims = [d, m, …, m, o]``; ``stds`` per layer or a scheme ``he|lecun``.

        ``ntk=True`` draws N(0,1) weights and multiplies layer l by ``stds[l]`` in the
        forward pass (NTK parameterization): the same function at init, other dynamics.

        Args:
            E: ensemble size (independent networks on the leading axis).
            dims: layer widths from the input dimension d to the output dimension o (L = len(dims) − 1 layers).
            stds: the init standard deviation of each layer (L numbers), or ``"he"`` (√(2/d_l)) / ``"lecun"``
                (√(1/d_l)).
            act: an activation name of :func:`theory.sim.activations.get` (``linear``, ``relu``, ``tanh``,
                ``softplus``; ``leaky_relu`` needs an Activation with its slope) or an Activation.
            alpha: the output scale α.
            ntk: NTK parameterization (see above).
            generator: the torch.Generator to draw from; dtype, device: of the weights.
            grad_at_zero: σ'(0) of a ReLU given by name (0 or 1).
        """
        E = _positive_int("E", E)
        if len(dims) < 2:
            raise ValueError(f"dims needs at least [d, o], got {list(dims)}")
        dims = [_positive_int(f"dims[{i}]", v) for i, v in enumerate(dims)]
        L = len(dims) - 1
        if isinstance(stds, str):
            gain = {"he": 2.0, "lecun": 1.0}.get(stds)
            if gain is None:
                raise ValueError(f"unknown init scheme {stds!r}: he, lecun, or a list of stds")
            stds = [math.sqrt(gain / dims[l]) for l in range(L)]
        stds = [float(s) for s in stds]
        if len(stds) != L or any(not s > 0 for s in stds):
            raise ValueError(f"stds must be {L} positive numbers, got {stds}")
        dev = device or get_device()
        ws = []
        for l in range(L):
            w = draw(torch.randn, E, dims[l + 1], dims[l], generator=generator, dtype=dtype, device=dev)
            ws.append(w if ntk else w * stds[l])
        a = acts.get(act, grad_at_zero=grad_at_zero) if isinstance(act, str) else act
        return cls(ws, a, float(alpha), stds if ntk else [])

    @property
    def params(self) -> list[torch.Tensor]:
        """The trained parameters: the weights [W₁, …, W_L]."""
        return self.weights

    @property
    def E(self) -> int:
        """The ensemble size."""
        return self.weights[0].shape[0]

    @property
    def depth(self) -> int:
        """The number of layers L."""
        return len(self.weights)

    def layers(self, X: torch.Tensor, params: Sequence[torch.Tensor] | None = None):
        """Pre-activations Z_l and post-activations Z^σ_l, each (E, N, d_l), l = 1..L, at inputs X (N, d) or
        (E, N, d); ``params`` replaces the model's weights (the last post-activation is the output before α)."""
        ws = self.weights if params is None else list(params)
        h = check_inputs(X, ws[0].shape[0], ws[0].shape[-1])
        Z, H = [], []
        for l, w in enumerate(ws):
            z = h @ w.transpose(-1, -2)
            if self.multipliers:
                z = z * self.multipliers[l]
            Z.append(z)
            h = self.act(z) if l < len(ws) - 1 else z
            H.append(h)
        return Z, H

    def forward(self, X: torch.Tensor, params: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        """Outputs (E, N) for a scalar output, else (E, N, o), at inputs ``X`` (N, d) or (E, N, d); ``params``
        replaces the weights (for autograd)."""
        out = self.layers(X, params)[1][-1] * self.alpha
        return out.squeeze(-1) if out.shape[-1] == 1 else out

    __call__ = forward
