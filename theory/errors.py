"""Errors raised by the harness. All subclass ValueError so bad input fails loudly."""


class DivergenceError(ValueError):
    """A simulation produced NaN/inf or blew up; its numbers must not reach a check."""


class UnknownClaimError(ValueError):
    """A claim ID that is not in the catalog under ../shared/claims."""
