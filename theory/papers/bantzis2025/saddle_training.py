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


def escape_profile(loss, steps, C0: float, *, drop: float = 0.05, plateau_factor: float = 100.0) -> dict:
    """First saddle escape of one loss curve (logged at ``steps``), judged by rates, not by levels.

    ``esc`` = first log where the loss is ≥ ``drop``·C0 below C0. Rates are |Δloss|/Δstep between logs;
    ``pre_rate`` = their mean over the first half of the pre-escape logs, ``esc_rate`` = their maximum over
    the logs around the escape (esc−2 .. esc+2). The curve has a *plateau then an escape* iff at least 4
    logs precede the escape and pre_rate ≤ esc_rate/plateau_factor: the loss is flat before and falls
    fast at the escape. A steady decline (linear, exponential, or any curve whose early rate is comparable
    to its rate at the 5% mark) fails the rate test, whatever its levels."""
    import numpy as np

    loss, steps = np.asarray(loss, float), np.asarray(steps, float)
    if loss.ndim != 1 or loss.shape != steps.shape or loss.size < 3:
        raise ValueError(f"escape_profile needs matching 1-d loss and steps (≥ 3 logs), got {loss.shape}, {steps.shape}")
    below = loss <= (1 - drop) * C0
    escaped = bool(below.any())
    esc = int(np.argmax(below)) if escaped else loss.size - 1
    rate = np.abs(np.diff(loss)) / np.diff(steps)
    pre = float(rate[: max(1, esc // 2)].mean())
    post = float(rate[max(0, esc - 2): min(rate.size, esc + 2)].max())
    plateau = escaped and esc >= 4 and pre <= post / plateau_factor
    return {"escaped": escaped, "esc": esc, "pre_rate": pre, "esc_rate": post, "rate_ratio": pre / post if post > 0
            else float("inf"), "plateau_then_escape": bool(plateau), "drop": float((C0 - loss.min()) / C0)}


def second_escape(loss, steps, C0: float, esc: int, *, settle: float = 100.0, drop: float = 0.02,
                  factor: float = 10.0) -> dict:
    """A second plateau and a second drop after the first escape at log ``esc``.

    Second plateau: the first log k1 > esc + 1 from which the rate stays ≤ (first-escape rate)/``settle`` for
    3 consecutive intervals. Second drop: a later log k2 where the loss is ≥ ``drop``·C0 below loss[k1]
    while the largest rate in (k1, k2] is ≥ ``factor`` × the mean plateau rate over [k1, k1 + 3)."""
    import numpy as np

    loss, steps = np.asarray(loss, float), np.asarray(steps, float)
    rate = np.abs(np.diff(loss)) / np.diff(steps)
    esc_rate = float(rate[max(0, esc - 2): min(rate.size, esc + 2)].max())
    k1 = None
    for k in range(esc + 2, rate.size - 2):
        if (rate[k:k + 3] <= esc_rate / settle).all():
            k1 = k
            break
    out = {"second_plateau": k1 is not None, "k1": k1, "k2": None, "second_drop": False}
    if k1 is None:
        return out
    plateau_rate = float(rate[k1:k1 + 3].mean())
    after = np.nonzero(loss[k1 + 1:] <= loss[k1] - drop * C0)[0]
    if after.size:
        k2 = int(k1 + 1 + after[0])
        out.update(k2=k2, second_drop=bool(rate[k1:k2].max() >= factor * plateau_rate),
                   plateau_rate=plateau_rate, drop_rate=float(rate[k1:k2].max()))
    return out
