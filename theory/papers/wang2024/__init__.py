"""Wang, Min & Ruan (NeurIPS 2024): co-correlation, Dirichlet energy and GD dynamics of MLPs.

- :mod:`.cocorrelation` — Def. 3.2 / 4.2 / 4.3, Thm 4.5 statistics (population and Algorithm 1),
  per-sample Jacobian norms of the paper's models and of a deeper composition.
- :mod:`.adversarial` — Def. 3.1 / Thm 4.1: exact robust risk of the linear model, L2 PGD.
- :mod:`.dynamics` — Lemma B.1 / C.1 increments, Thm 5.3 / 5.5 rates and bound terms.
- :mod:`.concentration` — Lemma B.2, Lemma C.2, Eq. (110) bounds.
- :mod:`.power` — Algorithm 2 (power iteration) batched over samples, with its history.
- :mod:`.properties` — Properties 1–2: batched linear-model runs via (F1), separability, w*, trajectory shape.
- :mod:`.halves` — Fig. 2 stand-in: ϱ between the two non-linear halves of a deep MLP.
- :mod:`.figures` — width × q training grids of Figs. 1, 3, 4, 6 (robust accuracy, Dirichlet energy, Δϱ trends).
"""
