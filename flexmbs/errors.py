"""Exception classes of flexmbs.

Every error raised on bad input derives from :class:`FlexmbsError`, and its message
names the offending field, body, joint or file and the value that came.
"""

from __future__ import annotations


class FlexmbsError(Exception):
    """Base class of every error flexmbs raises on purpose."""


class ShapeError(FlexmbsError, ValueError):
    """An array has the wrong shape or size."""


class ValidationError(FlexmbsError, ValueError):
    """A value is outside what the model accepts (non-finite, asymmetric, negative...)."""


class ModelError(FlexmbsError, ValueError):
    """A model is inconsistent (unknown names, bad references, over-constraint...)."""


class FieldError(ModelError):
    """One field of a declaration (a force, a body) has a bad value.

    ``str(error)`` names the element, the field and the value; ``field`` is the field's
    name and ``detail`` the message without the element's name (what a case-file reader
    puts after the case key it read the field from)."""

    def __init__(self, element: str, field: str, detail: str):
        super().__init__(f"{element}: {field} {detail}")
        self.element, self.field, self.detail = element, field, detail

    def __reduce__(self):  # pickled (a sweep's worker) with its three parts
        return FieldError, (self.element, self.field, self.detail)


class ReadError(FlexmbsError, OSError):
    """A file cannot be read or does not follow its documented format."""


class WriteError(FlexmbsError, OSError):
    """A file cannot be written (missing folder, no permission, unknown format)."""


class ConvergenceError(FlexmbsError, RuntimeError):
    """A numerical procedure did not converge."""


class UnitsWarning(UserWarning):
    """Declared units or magnitudes look implausible (see the message for why)."""


class AccuracyWarning(UserWarning):
    """A result is computed but its accuracy is doubtful (e.g. ill-conditioning)."""


class ModelWarning(UserWarning):
    """A model entry is accepted but looks unintended (the message says why)."""


def problem_report(problems: list[str], what: str = "model") -> str:
    """One message for every problem found in a check: its first line is the first
    problem whole (it names the entry, the key and the value), and the others follow
    one per line, so that a one-line error display still says what is wrong."""
    if not problems:
        raise ValueError("problem_report needs at least one problem")
    if len(problems) == 1:
        return problems[0]
    return (f"{problems[0]} (the {what} has {len(problems)} problems:\n  - "
            + "\n  - ".join(problems) + ")")
