"""Figure 1 / Figures 3–4 experiment (``bantzis2025/fig-1``): a deep bias-free ReLU MLP trained from a
small initialization, logging the loss and the top singular values of every layer across the first
saddle escape.

Training is the core's batched full-batch GD (:func:`theory.sim.train.gd`), run in chunks so that the
learning rate follows the paper's rule η(t) = η₀/‖θ(t)‖^{L−2} (η = 10/‖θ‖⁴ for L = 6, i.e. GD in the
reparametrized time of Sec. 2.1). Loss: squared loss to centred one-hot targets e_y − 1/K, whose
gradient at Y = 0 is G = (1/K − e_y)/N — exactly the cross-entropy G of the paper, so the localized
loss (and the first escape it governs) is the same; the deviation only matters after the escape.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from theory.sim import models, train

from . import localized as loc


def centred_onehot(labels: torch.Tensor, K: int, dtype=torch.float64) -> torch.Tensor:
    """e_y − 1/K, shape (N, K)."""
    Y = torch.nn.functional.one_hot(labels, K).to(dtype)
    return Y - 1.0 / K


def standardize(X: torch.Tensor) -> torch.Tensor:
    """(X − mean)/std with the dataset's global mean and std (Appendix B)."""
    return (X - X.mean()) / X.std()


@dataclass
class SaddleRun:
    steps: list = field(default_factory=list)
    loss: list = field(default_factory=list)          # (E,) per logged step
    top_sv: list = field(default_factory=list)        # per logged step: list over layers of (E, k)
    norm: list = field(default_factory=list)
    escaped: bool = False                              # set by train_saddle(escape_drop=...)

    def loss_tensor(self):
        return torch.stack(self.loss)

    def sv(self, layer: int):
        """(T, E, k) singular values of layer ``layer`` (0-based) over the logged steps."""
        return torch.stack([s[layer] for s in self.top_sv])


def train_saddle(X, Y, dims, *, init_std: float, eta0: float, steps: int, chunk: int = 10, log_every: int = 50,
                 E: int = 1, generator=None, power: float | None = None, k: int = 10,
                 lr_max: float = float("inf"), escape_drop: float | None = None, after_escape: int = 1000,
                 max_steps: int | None = None) -> SaddleRun:
    """GD on ½‖f(X) − Y‖² (mean over samples) with η = min(η₀/‖θ‖^{power}, lr_max) (power default L−2),
    from N(0, init_std²). ``lr_max`` (not in the paper) keeps GD stable once ‖θ‖ has grown.

    The time spent on the plateau at the origin varies with the draw (it grows like log(1/init) over the
    escape speed). With ``escape_drop`` training runs at least ``steps`` and then, in ``log_every`` blocks up
    to ``max_steps``, until every member's loss is below (1 − escape_drop)·loss(0), plus ``after_escape``
    steps; ``run.escaped`` says whether that happened (a member still on the plateau at ``max_steps`` is
    reported, never hidden)."""
    L = len(dims) - 1
    pw = L - 2 if power is None else power
    net = models.DeepMLP.init(E, dims, stds=[init_std] * L, act="relu", grad_at_zero=0.0, generator=generator,
                              dtype=X.dtype, device=X.device)
    run = SaddleRun()

    def log(t):
        with torch.no_grad():
            out = loc.output(net.weights, X)
            run.steps.append(t)
            run.loss.append((0.5 * ((out - Y) ** 2).sum(-1).mean(-1)).clone())
            run.top_sv.append([torch.linalg.svdvals(w)[:, :k].clone() for w in net.weights])
            run.norm.append(torch.sqrt(loc.sq_norm(net.weights)))

    if escape_drop is not None and not 0 < escape_drop < 1:
        raise ValueError(f"escape_drop must be in (0, 1), got {escape_drop!r}")
    cap = steps if escape_drop is None else max(steps, max_steps or steps)
    t = 0
    log(0)
    end = steps
    while t < end:
        n = min(chunk, end - t)
        lr = (eta0 / torch.sqrt(loc.sq_norm(net.weights)) ** pw).clamp_max(lr_max)
        train.gd(net, X, Y, loss="squared", lr=lr, steps=n, record=[])
        t += n
        if t % log_every == 0 or t == end:
            log(t)
            if escape_drop is not None and not run.escaped:
                if bool((run.loss[-1] <= (1 - escape_drop) * run.loss[0]).all()):
                    run.escaped = True
                    end = min(cap, max(steps, t + after_escape))
                elif t >= end:
                    end = min(cap, t + log_every)
    return run
