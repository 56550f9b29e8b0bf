"""Simulation core shared by all papers: models, training, Jacobians, spectra."""
from . import activations, jacobian, losses, models, spectra, train  # noqa: F401
from .models import DeepMLP, TwoClassNet, TwoLayerNet  # noqa: F401
