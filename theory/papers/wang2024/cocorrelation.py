"""Co-correlation statistics (Wang et al. Def. 3.2, Def. 4.2 Eq. 9, Def. 4.3 Eqs. 12–14, Thm 4.5 Eq. 15,
Algorithm 1) from per-sample Jacobian norms A = ‖J_φ(ϕ(x))‖, B = ‖J_ϕ(x)‖, C = ‖J_{φ∘ϕ}(x)‖.

Per-sample norms come from the core engine: closed forms for the two-layer models
(:func:`theory.sim.jacobian.two_layer_hidden_opnorm_exact`, :func:`two_layer_output_grad_norm`) and
:func:`theory.sim.jacobian.opnorm` for general maps. Every statistic is batched over leading axes
(the sample axis is the last one).
"""
from __future__ import annotations

import torch

from theory.device import tensor
from theory.sim import jacobian as jac


def _check(A, B, C):
    # lists and floats become float64 on the CPU (torch's default dtype would round them to float32)
    A, B, C = (t if isinstance(t, torch.Tensor) else tensor(t, device="cpu") for t in (A, B, C))
    if not (A.shape == B.shape == C.shape) or A.shape[-1] < 2:
        raise ValueError(f"A, B, C must share a shape with ≥2 samples on the last axis, got "
                         f"{tuple(A.shape)}, {tuple(B.shape)}, {tuple(C.shape)}")
    if bool((A < 0).any() | (B < 0).any() | (C < 0).any()):
        raise ValueError("Jacobian norms must be non-negative")
    return A, B, C


def population(A, B, C, *, ddof: int = 0) -> dict:
    """All factors of Thm 4.5 under the empirical measure (``ddof=1``: the N−1 variance instead).

    Returns S_f, S_outer (𝔖(φ)), S_inner (𝔖(ϕ)), varrho (Eq. 9, RMS form), rho (Eq. 12), mu, var,
    rel_factor = (1+var/μ²)^{1/2}, rhs = ϱ·rel_factor·ρ·𝔖(φ)𝔖(ϕ), rel_err = lhs/rhs − 1.
    """
    A, B, C = _check(A, B, C)
    P = A * B
    N = A.shape[-1]
    S_f = C.pow(2).mean(-1).sqrt()
    S_o, S_i = A.pow(2).mean(-1).sqrt(), B.pow(2).mean(-1).sqrt()
    rmsP = P.pow(2).mean(-1).sqrt()
    if bool((rmsP <= 0).any()):
        raise ValueError("E[(AB)^2] = 0 (all units dead?): co-correlation undefined")
    mu = P.mean(-1)
    var = (P - mu.unsqueeze(-1)).pow(2).sum(-1) / (N - ddof)
    varrho = S_f / rmsP
    rho = mu / (S_o * S_i)
    rel = (1 + var / mu ** 2).sqrt()
    rhs = varrho * rel * rho * S_o * S_i
    return dict(S_f=S_f, S_outer=S_o, S_inner=S_i, varrho=varrho, rho=rho, mu=mu, var=var,
                rel_factor=rel, rhs=rhs, rel_err=S_f / rhs - 1)


def algorithm1(A, B, C) -> dict:
    """Algorithm 1 as printed: ϱ̂ = mean C / mean AB, ρ̂, μ̂, σ̂ (N−1 standard deviation)."""
    A, B, C = _check(A, B, C)
    P = A * B
    mu = P.mean(-1)
    return dict(varrho=C.mean(-1) / mu, rho=mu / (A.pow(2).mean(-1).sqrt() * B.pow(2).mean(-1).sqrt()),
                mu=mu, sigma=P.std(-1, unbiased=True))


def decomposition_with_alg1(A, B, C) -> dict:
    """Thm 4.5's right-hand side with Algorithm 1's estimators plugged in (ϱ̂, ρ̂, μ̂, σ̂²) and its error."""
    pop = population(A, B, C)
    al = algorithm1(A, B, C)
    rhs = al["varrho"] * (1 + al["sigma"] ** 2 / al["mu"] ** 2).sqrt() * al["rho"] * pop["S_outer"] * pop["S_inner"]
    return dict(rhs=rhs, rel_err=pop["S_f"] / rhs - 1, varrho_alg1=al["varrho"], varrho_def=pop["varrho"])


# ---- per-sample Jacobian norms of the paper's models ---------------------------------------------

def linear_norms(W: torch.Tensor, a: torch.Tensor, N: int):
    """f = aᵀW x: A = ‖a‖, B = ‖W‖₂, C = ‖Wᵀa‖ (constant in x), each repeated N times. W (E,m,d), a (E,m)."""
    A = a.norm(dim=-1)
    B = torch.linalg.eigvalsh(W.transpose(-1, -2) @ W)[..., -1].clamp_min(0).sqrt()
    C = (a.unsqueeze(-1) * W).sum(-2).norm(dim=-1)
    return tuple(t.unsqueeze(-1).expand(*t.shape, N) for t in (A, B, C))


def mlp_norms(W: torch.Tensor, a: torch.Tensor, X: torch.Tensor, act):
    """f = aᵀσ(Wx): A = ‖a‖ (φ = aᵀ· is linear), B = ‖D(x)W‖₂ (Gram form of the core's closed form, checked
    against it in `def-3.2`), C = ‖WᵀD(x)a‖ (core closed form). (E, N) each."""
    B = mlp_hidden_opnorm_gram(W, X, act)
    C = torch.stack([jac.two_layer_output_grad_norm(W[e], a[e], X, act) for e in range(W.shape[0])])
    A = a.norm(dim=-1, keepdim=True).expand_as(B)
    return A, B, C


GRAM_BUDGET = 2 ** 28  # bytes of transient per chunk in mlp_hidden_opnorm_gram (256 MiB)


def mlp_hidden_opnorm_gram(W: torch.Tensor, X: torch.Tensor, act, *, budget_bytes: float = GRAM_BUDGET) -> torch.Tensor:
    """‖D(x)W‖₂ via the d×d Gram (D(x)W)ᵀ(D(x)W) (or the m×m Gram D(x)WWᵀD(x) when m < d; eigvalsh): same closed
    form as the SVD one (checked against it in `def-3.2`), cheaper than an SVD per point.

    W (E, m, d), X (N, d) → (E, N). The per-point factor D(x)W is (m, d), so all points at once would hold
    E·N·m·d numbers (28 GB at E = 56, N = 120, m = 8192, d = 64: the full-profile Fig. 3 grid ran out of a 24 GiB
    CPU's memory this way); points, and members if one point of all members is too large, are taken in chunks
    whose transient stays within ``budget_bytes``. Float64 keeps the square-root of λ_max accurate to ~1e-15
    relative for well-scaled W (λ_max is the largest eigenvalue, no cancellation).
    """
    E, (m, d), N = W.shape[0], W.shape[-2:], X.shape[0]
    per_point = W.element_size() * (2 * m * m if m < d else m * d + d * d)  # one point of one member
    ce = max(1, min(E, int(budget_bytes // per_point)))
    cn = max(1, min(N, int(budget_bytes // (per_point * ce))))
    K = W @ W.transpose(-1, -2) if m < d else None  # (E, m, m)
    out = torch.empty(E, N, dtype=W.dtype, device=W.device)
    for e in range(0, E, ce):
        We = W[e:e + ce]
        for i in range(0, N, cn):
            D = act.slope(X[i:i + cn] @ We.transpose(-1, -2))  # (ce, cn, m)
            if m < d:  # same spectrum from the m×m Gram D(x)WWᵀD(x): cost m² instead of m·d² per point
                G = K[e:e + ce].unsqueeze(1) * D.unsqueeze(-1) * D.unsqueeze(-2)
            else:
                A = D.unsqueeze(-1) * We.unsqueeze(1)  # D(x)W: (ce, cn, m, d)
                G = A.transpose(-1, -2) @ A
            out[e:e + ce, i:i + cn] = torch.linalg.eigvalsh(G)[..., -1].clamp_min(0).sqrt()
    return out


def mlp_varrho(W: torch.Tensor, a: torch.Tensor, X: torch.Tensor, act) -> torch.Tensor:
    """ϱ_{a,σ∘W} = (E‖WᵀDa‖² / E‖DW‖₂²)^{1/2} (‖a‖=1 under Assumption 5.1), batched over E."""
    D = act.slope(X @ W.transpose(-1, -2))
    C2 = ((D * a.unsqueeze(1)) @ W).pow(2).sum(-1).mean(-1)
    B2 = mlp_hidden_opnorm_gram(W, X, act).pow(2).mean(-1)
    return (C2 / B2).sqrt() / a.norm(dim=-1)


def linear_varrho(W: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """ϱ_{a,W} = ‖Wᵀa‖ / (‖a‖‖W‖₂) (Eq. 11 with W₂ = aᵀ), batched over E."""
    s1 = torch.linalg.eigvalsh(W.transpose(-1, -2) @ W)[..., -1].clamp_min(0).sqrt()
    return (a.unsqueeze(-1) * W).sum(-2).norm(dim=-1) / (a.norm(dim=-1) * s1)


# ---- a deeper composition with a non-linear outer map --------------------------------------------

def three_module(W1, W2, W3, act):
    """ϕ(x) = σ(W₁x) (inner), φ(z) = W₃σ(W₂z) (outer, non-linear): returns (inner, outer, composite) maps."""
    inner = lambda x: act(W1 @ x)
    outer = lambda z: W3 @ act(W2 @ z)
    return inner, outer, lambda x: outer(inner(x))


def composition_norms(inner, outer, X, *, method: str = "exact"):
    """A, B, C per sample for φ∘ϕ through :func:`theory.sim.jacobian.opnorm` (batched, no Python loop)."""
    with torch.no_grad():
        Z = torch.func.vmap(inner)(X)
    A = jac.opnorm(outer, Z, method=method)
    B = jac.opnorm(inner, X, method=method)
    C = jac.opnorm(lambda x: outer(inner(x)), X, method=method)
    return A, B, C
