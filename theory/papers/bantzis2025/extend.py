"""EXTEND: the depth-(L+k) construction of Prop. 3.2 / A.3 (``bantzis2025/prop-3.2``, ``prop-A.3``).

Given θ = (W_1..W_L) with L0(θ) < 0: a_i = ‖W_{L,·i}‖, b_i = ‖W_{L−1,i·}‖, S = Σ a_i b_i,
T_i = Tr[Gᵀ (W_{L,·i}/a_i) σ((W_{L−1,i·}/b_i) Zσ_{L−2})], i* = argmin T_i (neurons with a_i b_i = 0
skipped). Then L0(θ) = Σ a_i b_i T_i (neuron decomposition) and the deeper network
W̃_ℓ = W_ℓ (ℓ ≤ L−2), W̃_{L−1} = √S e_1 (W_{L−1,i*·}/b_{i*}), W̃_ℓ = e_1e_1ᵀ (ℓ = L..L+k−1),
W̃_{L+k} = √S (W_{L,·i*}/a_{i*}) e_1ᵀ has L0(θ̃) = S T_{i*} ≤ L0(θ) and ‖θ̃‖² ≤ ‖θ‖² + k;
θ' = λθ̃ with λ = √((L+k)/‖θ̃‖²) ≥ 1 lies on the sphere of the deeper net.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from . import localized as loc


@dataclass
class Decomposition:
    a: torch.Tensor   # (E, n) column norms of W_L
    b: torch.Tensor   # (E, n) row norms of W_{L-1}
    T: torch.Tensor   # (E, n) per-neuron normalized losses (+inf where a_i b_i = 0)
    H: torch.Tensor   # Zσ_{L−2} as (E, N, n_{L−2}) (X for L = 2)


def decompose(params, X, G) -> Decomposition:
    """Neuron decomposition of the last hidden layer (A.3 proof, step (i))."""
    Gm = loc.check_data(X, G)
    L = len(params)
    if L < 2:
        raise ValueError("EXTEND needs depth L >= 2 (it uses W_{L-1})")
    WL, WL1 = params[-1], params[-2]
    E = WL.shape[0]
    H = loc.layers(params, X)[1][L - 3] if L > 2 else X.expand(E, *X.shape)  # Zσ_{L−2} (ReLU applied)
    a = WL.norm(dim=1)            # (E, n)
    b = WL1.norm(dim=2)           # (E, n)
    ok = (a > 0) & (b > 0)
    u = WL1 / b.clamp_min(1e-300).unsqueeze(-1)            # (E, n, n_{L-2})
    v = WL / a.clamp_min(1e-300).unsqueeze(1)              # (E, o, n)
    act = torch.relu(H @ u.transpose(-1, -2))               # (E, N, n)
    T = torch.einsum("jo,ejn,eon->en", Gm, act, v)
    T = torch.where(ok, T, torch.full_like(T, float("inf")))
    return Decomposition(a, b, T, H)


@dataclass
class Extension:
    params: list            # θ' (on the sphere of radius² L+k)
    tilde: list             # θ̃ before rescaling
    tilde_sq_norm: torch.Tensor
    lam: torch.Tensor
    S: torch.Tensor
    i_star: torch.Tensor
    gain: torch.Tensor      # s(θ')/s(θ)


def extend(params, X, G, k: int, *, width: int | None = None, select: str = "min", rescale: bool = True) -> Extension:
    """Build EXTEND(θ, k). New hidden layers get ``width`` (default: the width of layer L−1).

    ``select="max"`` and ``rescale=False`` build deliberately wrong variants (for the checks
    that show the construction test can fail)."""
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    dec = decompose(params, X, G)
    L = len(params)
    E = params[0].shape[0]
    n_new = width or params[-2].shape[1]
    o = params[-1].shape[1]
    T = dec.T if select == "min" else torch.where(torch.isinf(dec.T), -dec.T, dec.T)
    i_star = T.argmin(1) if select == "min" else T.argmax(1)
    S = (dec.a * dec.b).sum(1)
    idx = torch.arange(E, device=params[0].device)
    u = params[-2][idx, i_star] / dec.b[idx, i_star].unsqueeze(-1)    # (E, n_{L-2})
    v = params[-1][idx, :, i_star] / dec.a[idx, i_star].unsqueeze(-1)  # (E, o)
    dt, dev = params[0].dtype, params[0].device
    sq = S.sqrt()
    WL1 = torch.zeros(E, n_new, params[-2].shape[2], dtype=dt, device=dev)
    WL1[:, 0] = sq.unsqueeze(-1) * u
    mids = []
    for _ in range(k):
        m = torch.zeros(E, n_new, n_new, dtype=dt, device=dev)
        m[:, 0, 0] = 1.0
        mids.append(m)
    WLk = torch.zeros(E, o, n_new, dtype=dt, device=dev)
    WLk[:, :, 0] = sq.unsqueeze(-1) * v
    tilde = [w.clone() for w in params[:-2]] + [WL1] + mids + [WLk]
    tn = loc.sq_norm(tilde)
    lam = torch.sqrt((L + k) / tn) if rescale else torch.ones_like(tn)
    new = loc.scale(tilde, lam)
    gain = loc.localized_loss(new, X, G) / loc.localized_loss(params, X, G)
    return Extension(new, tilde, tn, lam, S, i_star, gain)


def numerical_rank(M: torch.Tensor, rtol: float = 1e-10) -> torch.Tensor:
    """Number of singular values above rtol·s_1 (0 for a zero matrix), batched."""
    s = torch.linalg.svdvals(M)
    top = s[..., :1].clamp_min(1e-300)
    return ((s > rtol * top) & (s[..., :1] > 0)).sum(-1)
