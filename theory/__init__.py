"""theory — check deep-learning theory claims numerically, and report how tight they are.

Core: :mod:`theory.device` (device/dtype policy), :mod:`theory.sim` (batched models,
GD, Jacobian norms, spectra), :mod:`theory.records` (Measurement records),
:mod:`theory.claims` (the catalog), :mod:`theory.stats` (tests and fits). Paper
modules under :mod:`theory.papers` encode statements on top of the core.
"""
from . import claims, device, records, seeding  # noqa: F401
from .errors import ClaimViolation, DivergenceError, RegistryError, UnknownClaimError, assert_claim  # noqa: F401
from .records import Measurement, verdict_for  # noqa: F401

__version__ = "0.1.0"
