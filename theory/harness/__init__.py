"""Run context (device, profile, seeds) and the pytest plugin that writes records."""
from .context import RunContext  # noqa: F401
