"""Kou, Chen & Gu (NeurIPS 2023): implicit bias of GD for two-layer (leaky) ReLU nets on
nearly-orthogonal data.

- :mod:`.setup` — shared configuration, data/initialization, hypothesis report and the
  coefficient-space runner (both halves of the paper's checks build on it).
- further modules hold paper quantities used by individual checks.
"""
