"""Zhu, Liu, Chrysos & Cevher (NeurIPS 2022), "Robustness in deep learning: the good (width),
the bad (depth), and the ugly (initialization)" — appendix only (OCR).

Modules (claim IDs ``zhu2022/...`` of the registry ``claims.toml`` beside this file):

- :mod:`.schemes` — Eq. (2) initialisations (LeCun, He, NTK, free β), γ = β√(m/2) (``eq-2``).
- :mod:`.perturbation` — perturbation stability P(f, ε) (``def-1``): ball sampling, its exact
  moments, Jacobian-vector products, the Lemma-5 / Theorem-1 initialisation term.
- :mod:`.masked` — the masked-Gaussian laws of Lemmas 1–2.
- :mod:`.lazy` — the Lemma-4 deviation shape (``lem-4``, ``thm-1``).
- :mod:`.nonlazy` — the Appendix-C chain (``eq-balance``, ``thm-2``).
- :mod:`.two_layer` — Appendix D kernels, radii and bounds (``def-D`` … ``thm-3``).
"""
