"""Every mistake a user can fix has one root, `ProbeError`; its message says what to change.

The command line and the playground catch `ProbeError` (and `models.types.BackendError`, the
root of what a provider or model reports) and nothing broader: anything else is a bug, shown to
the user as an internal error and logged with its traceback.
"""

from __future__ import annotations


class ProbeError(Exception):
    """Something the user asked cannot be done as asked; the message says what to change."""


class UsageError(ProbeError):
    """A mistake in a command's options or a form's fields."""


class BenchmarkError(ProbeError):
    """A benchmark cannot be built as asked (unknown id, missing or malformed data, bad parameter)."""


class UnknownBenchmark(BenchmarkError):
    pass


class InputRejected(ProbeError):
    """A file or text from the user is refused (too large, not an image, malformed record ...)."""


class PerturbationError(ProbeError):
    """An unknown perturbation, or one that does not apply to an item."""


class RunError(ProbeError):
    """A run cannot start as asked; nothing was sent."""


class LimitExceeded(ProbeError):
    """A request goes past a bound or a budget (public mode, or the operator's settings)."""


class NameRejected(ProbeError):
    """A person's name cannot be used; the message says what is allowed."""
