"""Data for checks and users: synthetic data with its statistics reported, and real data read locally.

``from theory import data`` gives the synthetic generators (:mod:`theory.data.synthetic`) by name, and
``data.real`` (:mod:`theory.data.real`): scikit-learn's bundled 8×8 digits and a local MNIST loader. Nothing is
downloaded at run time. All generators take a ``torch.Generator`` and return float64 tensors on the policy device
unless told otherwise.

>>> import torch
>>> from theory import data
>>> X, st = data.gram_controlled(n=4, d=50, p=0.01, generator=torch.Generator().manual_seed(0), device="cpu")
>>> X.shape, round(st.p, 6) <= 0.01
(torch.Size([4, 50]), True)
"""
from . import real, synthetic  # noqa: F401
from .synthetic import (DataStats, balanced_labels, gaussian_mixture, gaussian_rows, gram_controlled,  # noqa: F401
                        haar_orthonormal, kou_section6, orthonormal, stats, unit_circle_8, unit_sphere)

__all__ = ["DataStats", "balanced_labels", "gaussian_mixture", "gaussian_rows", "gram_controlled", "haar_orthonormal",
           "kou_section6", "orthonormal", "real", "stats", "synthetic", "unit_circle_8", "unit_sphere"]
