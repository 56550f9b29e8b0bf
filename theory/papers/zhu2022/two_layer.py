"""Appendix D (catalog ``zhu2022/def-D`` … ``zhu2022/thm-3``): two-layer nets, both layers trained.

f(x) = (1/α) Σ_r a_r φ(w_r ᵀx), a_r(0) ~ N(0, β₂²), w_r(0) ~ N(0, β₁² I_d), ‖x_i‖ = 1,
𝓛 = ½ Σ_i (f(x_i) − y_i)² (a sum). As a DeepMLP: dims [d, m, 1], stds [β₁, β₂], alpha = 1/α;
the core's squared loss is a mean, so GD with core rate n·η is GD on the sum with rate η and
physical time t = η k. H (first layer) and G (second layer) are the per-layer tangent kernels
(:func:`theory.sim.ntk.layer_kernels`).
"""
from __future__ import annotations

import math

import torch

from theory.sim.models import DeepMLP
from theory.sim.ntk import row_angles


def build(E: int, d: int, m: int, *, alpha: float, beta1: float, beta2: float, generator=None,
          dtype=torch.float64, device=None) -> DeepMLP:
    """E two-layer nets of Eq. (16) (scalar output)."""
    if not alpha > 0:
        raise ValueError(f"output scale alpha must be positive, got {alpha!r}")
    return DeepMLP.init(E, [d, m, 1], stds=[beta1, beta2], alpha=1.0 / alpha, generator=generator,
                        dtype=dtype, device=device)


def K_matrix(X: torch.Tensor) -> torch.Tensor:
    """K_ij = x_iᵀx_j (π − θ_ij)/(2π): H^∞ = (m β₂²/α²) K (closed form of the Appendix-D expectation)."""
    return (X @ X.T) * (math.pi - row_angles(X, X)) / (2 * math.pi)


def kappa0(X: torch.Tensor) -> float:
    """κ₀ = λ_min(K); λ₀ = m β₂² κ₀ / α²."""
    return float(torch.linalg.eigvalsh(K_matrix(X))[0])


def lambda0(X: torch.Tensor, m: int, alpha: float, beta2: float) -> float:
    return m * beta2 ** 2 * kappa0(X) / alpha ** 2


def R_w(lam0: float, alpha: float, n: int, m: int, beta1: float, beta2: float, Ra: float) -> float:
    """R_w = α² λ₀ √(2π) β₁ / (32 n³ m (R_a(R_a + √(8/π)β₂) + β₂²)) (legible in the OCR)."""
    return alpha ** 2 * lam0 * math.sqrt(2 * math.pi) * beta1 / (
        32 * n ** 3 * m * (Ra * (Ra + math.sqrt(8 / math.pi) * beta2) + beta2 ** 2))


def R_a_legible(lam0: float, alpha: float, n: int, m: int) -> float:
    """The legible part of R_a, α√(λ₀/(8nm)); the rest is illegible, so R_a is a free radius."""
    return alpha * math.sqrt(lam0 / (8 * n * m))


def R_a_readings(lam0: float, alpha: float, n: int, m: int, beta2: float) -> dict:
    """Readings of the illegible R_a of Appendix D (OCR: "R_a = α … √λ₀ … √(2/π)β₂ over n√(8nm)"), name → value:

    - ``"fragment"``: α√(λ₀/(8nm)) (:func:`R_a_legible`; it leaves out the n the OCR prints before √(8nm): recorded as a
      reading by Lemma 8's check only);
    - ``"fragment with 1/n"``: (α/n)√(λ₀/(8nm)) = √A with A = α²λ₀/(8n³m) (the reading the Appendix-D checks use);
    - ``"closing"``: √(A + (2/π)β₂²) − √(2/π)β₂, the largest R_a with R_a(R_a + √(8/π)β₂) ≤ A, i.e. the radius at which
      the (19) term of Lemma 8's proof, n³(m/α²)R_a(R_a + √(8/π)β₂), is λ₀/8, as R_w makes the (20) term λ₀/8.

    "closing" ≤ "fragment with 1/n" always. At "fragment with 1/n" the (19) term is (1 + √(8/π)β₂/√A)·λ₀/8 (≫ λ₀/8 when
    √A ≪ β₂: the proof does not close there); only "closing" makes it λ₀/8. R_w decreases in R_a, so a box covering every reading up to
    "fragment with 1/n" needs that R_a and the R_w of the smallest reading ("closing"): Lemma 8's conclusion is monotone
    in the output-weight radius at fixed patterns, and the patterns that can flip only grow with R_w."""
    A = alpha ** 2 * lam0 / (8 * n ** 3 * m)
    c = math.sqrt(2 / math.pi) * beta2
    return {"fragment": R_a_legible(lam0, alpha, n, m), "fragment with 1/n": math.sqrt(A),
            "closing": A / (math.sqrt(A + c * c) + c)}  # = √(A + c²) − c without the cancellation


def Rp_w(t, lam0: float, alpha: float, n: int, beta2: float, Ra, r0: float):
    """R'_w(t) = 2√n/(αλ₀) (√n β₂ + R_a) ‖y − f(0)‖ (1 − e^{−λ₀t/2})  (Lemma 9, Eq. 22)."""
    t = torch.as_tensor(t, dtype=torch.float64)
    return 2 * math.sqrt(n) / (alpha * lam0) * (math.sqrt(n) * beta2 + Ra) * r0 * (-torch.expm1(-lam0 * t / 2))


def Rp_a(t, lam0: float, alpha: float, n: int, m: int, beta1: float, Rw, r0: float):
    """R'_a(t) = 2√n/(αλ₀) (3β₁√(log(m n²)) + R_w) ‖y − f(0)‖ (1 − e^{−λ₀t/2})  (Lemma 10, Eq. 23)."""
    t = torch.as_tensor(t, dtype=torch.float64)
    return (2 * math.sqrt(n) / (alpha * lam0) * (3 * beta1 * math.sqrt(math.log(m * n * n)) + Rw) * r0
            * (-torch.expm1(-lam0 * t / 2)))


def t_cross(R: float, lam0: float, coef: float) -> float:
    """Solve coef·(1 − e^{−λ₀t/2}) = R: t = −(2/λ₀) log(1 − R/coef) (+∞ if R ≥ coef)."""
    if R >= coef:
        return math.inf
    return -2 / lam0 * math.log1p(-R / coef)  # log1p/expm1: accurate for the tiny t of Appendix D


def t1(lam0, alpha, n, beta2, Ra, Rw, r0) -> float:
    """t₁: R'_w(t₁) = R_w."""
    return t_cross(Rw, lam0, 2 * math.sqrt(n) / (alpha * lam0) * (math.sqrt(n) * beta2 + Ra) * r0)


def t2(lam0, alpha, n, m, beta1, Ra, Rw, r0) -> float:
    """t₂: R'_a(t₂) = R_a."""
    return t_cross(Ra, lam0, 2 * math.sqrt(n) / (alpha * lam0) * (3 * beta1 * math.sqrt(math.log(m * n * n)) + Rw) * r0)


def eq24_bound(a: torch.Tensor, W: torch.Tensor, alpha: float, eps: float) -> torch.Tensor:
    """(ε/α) Σ_r |a_r| ‖w_r‖ per member; a (E, m), W (E, m, d)."""
    return eps / alpha * (a.abs() * W.norm(dim=-1)).sum(-1)


def eq25_bound(eps, m, alpha, n, d, beta1, beta2, Rpa, Rpw) -> float:
    """(εm/α)(R'_a + √(2/π) n β₂)(R'_w + 4β₁√d + 2β₁√(log n))  (Eq. 25)."""
    return eps * m / alpha * (Rpa + math.sqrt(2 / math.pi) * n * beta2) * (
        Rpw + 4 * beta1 * math.sqrt(d) + 2 * beta1 * math.sqrt(math.log(n)))


# ---------------------------------------------------------------------------------------------------------------------
# Hypothesis events of the Appendix-D proofs (per ensemble member): a run counts as inside a lemma only on every event
# its proof invokes. Each returns boolean tensors (True: the event holds) and the figure that decides it.

def lemma7_event(H0: torch.Tensor, X: torch.Tensor, m: int, alpha: float, beta2: float) -> dict:
    """Event of Lemma 7 (its display; Lemma 8's last step "by Eq. (17)" and Lemma 11's base case use it):
    ‖H(0) − H^∞‖₂ ≤ λ₀/4 and λ_min(H(0)) ≥ 3λ₀/4. H0 (E, n, n). Returns ``ok`` (E,), ``dev`` = ‖H(0) − H^∞‖₂/λ₀ and
    ``lmin`` = λ_min(H(0))/λ₀."""
    lam0 = lambda0(X, m, alpha, beta2)
    Hinf = m * beta2 ** 2 / alpha ** 2 * K_matrix(X)
    dev = torch.linalg.matrix_norm(H0 - Hinf, 2) / lam0
    lmin = torch.linalg.eigvalsh(H0)[..., 0] / lam0
    return {"ok": (dev <= 0.25) & (lmin >= 0.75), "dev": dev, "lmin": lmin}


def lemma9_event(a0: torch.Tensor, n: int, beta2: float) -> dict:
    """Event of Lemma 9's proof: |a_r(0)| ≤ √n β₂ for every r (a0 (E, m)). ``ok`` (E,), ``ratio`` = max_r |a_r(0)|/(√n β₂)."""
    ratio = a0.abs().amax(-1) / (math.sqrt(n) * beta2)
    return {"ok": ratio <= 1, "ratio": ratio}


def lemma10_event(W0: torch.Tensor, X: torch.Tensor, beta1: float) -> dict:
    """Event of Lemma 10's proof: max_{i,r} |w_r(0)ᵀx_i| ≤ 3β₁√(log(m n²)) (W0 (E, m, d)). ``ok`` (E,), ``ratio``."""
    m, n = W0.shape[-2], X.shape[0]
    ratio = (W0 @ X.T).abs().amax((-1, -2)) / (3 * beta1 * math.sqrt(math.log(m * n * n)))
    return {"ok": ratio <= 1, "ratio": ratio}


def thm3_init_events(a0: torch.Tensor, W0: torch.Tensor, n: int, beta1: float, beta2: float) -> dict:
    """Per-neuron events of the proof of Theorem 3 (Eq. 25), for every r: |a_r(0)| ≤ √(2/π) n β₂ (Markov) and
    ‖w_r(0)‖ ≤ 4β₁√d + 2β₁√(log n) (√d: the dimension of w_r; the OCR reads √m, a weaker event). ``ok_a``, ``ok_w`` (E,)."""
    d = W0.shape[-1]
    ra = a0.abs().amax(-1) / (math.sqrt(2 / math.pi) * n * beta2)
    rw = W0.norm(dim=-1).amax(-1) / (4 * beta1 * math.sqrt(d) + 2 * beta1 * math.sqrt(math.log(n)))
    return {"ok_a": ra <= 1, "ok_w": rw <= 1, "ratio_a": ra, "ratio_w": rw}


def lemma8_markov_event(X: torch.Tensor, W0: torch.Tensor, a0: torch.Tensor, a: torch.Tensor, H: torch.Tensor,
                        alpha: float, beta1: float, beta2: float, Ra: float, Rw: float) -> dict:
    """Markov events of Lemma 8's proof at each recorded time, with the lemma's radii R_a, R_w: for every entry (i, j),
    |H̃_ij(t) − H_ij(0)| ≤ n (m/α²) R_a(R_a + √(8/π)β₂) (Eq. 19 times n) and |H_ij(t) − H̃_ij(t)| ≤
    n (4 R_w m/(α²√(2π)β₁)) (R_a(R_a + √(8/π)β₂) + β₂²) (Eq. 20 times n), where H̃(t) has a(t) with the patterns of w(0).
    W0 (E, m, d), a0 (E, m), a (T, E, m), H (T, E, n, n). Returns ``ok`` (T, E), the worst ratios ``r19``, ``r20`` and the
    entrywise bounds ``b19``, ``b20``."""
    n, m = X.shape[0], W0.shape[-2]
    P0 = (W0 @ X.T > 0).to(X.dtype)  # (E, m, n): patterns at init (ReLU derivative 0 at 0, as the autograd kernels)
    XX = X @ X.T
    Ht = torch.einsum("tem,emi,emj->teij", a ** 2, P0, P0) * XX / alpha ** 2
    H0 = torch.einsum("em,emi,emj->eij", a0 ** 2, P0, P0) * XX / alpha ** 2
    c = math.sqrt(8 / math.pi) * beta2
    b19 = n * m / alpha ** 2 * Ra * (Ra + c)
    b20 = n * 4 * Rw * m / (alpha ** 2 * math.sqrt(2 * math.pi) * beta1) * (Ra * (Ra + c) + beta2 ** 2)
    r19 = (Ht - H0).abs().amax((-1, -2)) / b19
    r20 = (H - Ht).abs().amax((-1, -2)) / b20
    return {"ok": (r19 <= 1) & (r20 <= 1), "r19": r19, "r20": r20, "b19": b19, "b20": b20}


def event_report(events: dict, unknown: dict | None = None) -> dict:
    """A per-member hypothesis report from named events (name → bool tensor (E,), True where it holds) and events that
    cannot be computed from the run (name → reason). A member is "inside" only if every event holds and none is
    unknown; "outside" if some event fails; otherwise "unknown"."""
    unknown = dict(unknown or {})
    ev = {k: [bool(x) for x in torch.as_tensor(v).reshape(-1).tolist()] for k, v in events.items()}
    E = len(next(iter(ev.values()))) if ev else 0
    if any(len(v) != E for v in ev.values()):
        raise ValueError(f"events must all have one value per member, got lengths { {k: len(v) for k, v in ev.items()} }")
    fail = [[k for k, v in ev.items() if not v[e]] for e in range(E)]
    status = ["outside" if f else ("unknown" if unknown else "inside") for f in fail]
    reasons = [f"{k}: fails in {sum(not x for x in v)}/{E} members" for k, v in ev.items() if not all(v)]
    return {"events": ev, "unknown events": unknown, "status": status, "inside": [s == "inside" for s in status],
            "members inside": f"{status.count('inside')}/{E}", "outside_reasons": reasons}
