"""Errors raised by the harness. Bad input fails loudly (ValueError subclasses); a claim that the
measurement contradicts raises :class:`ClaimViolation`."""


class DivergenceError(ValueError):
    """A simulation produced NaN/inf or blew up; its numbers must not reach a check."""


class UnknownClaimError(ValueError):
    """A claim ID that no loaded claim registry holds."""


class RegistryError(ValueError):
    """A claim registry (``claims.toml``) that is missing, unreadable or malformed."""


class ClaimViolation(AssertionError):
    """The measurement contradicts the claim (as printed, or as encoded).

    Expected failures are declared ``pytest.mark.xfail(strict=True, raises=ClaimViolation, reason=...)``:
    only this exception counts as the paper being wrong. A crash, a failed control or a failed
    precondition (plain ``assert``) in the same test stays a test failure instead of passing as a finding.
    """


def assert_claim(ok, message: str) -> None:
    """Raise :class:`ClaimViolation` with ``message`` unless ``ok`` is true."""
    if not bool(ok):
        raise ClaimViolation(message)
