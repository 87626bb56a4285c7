"""The Target interface every runtime adapter and user plug-in implements."""
from __future__ import annotations

from typing import Callable


class Target:
    """A TopK implementation the suite drives.

    `run(case, x)` returns `(values, indices)` as numpy arrays, or raises to reject the
    input. Everything else describes the target so a run can plan around it.
    """

    name: str = "target"
    #: profile the target is judged by when the user gives none ("onnx:11", "dml:5.0").
    default_profile: str = "dml:5.0"
    #: True when the target rejects invalid descriptors, so rejection checks apply to it.
    validates: bool = False
    #: True when the target runs native code that may crash or hang (run it isolated).
    native: bool = False

    def version(self) -> str:
        """The runtime's version string."""
        return "unknown"

    def available(self) -> tuple[bool, str]:
        """(True, "") when it can run here, else (False, what it needs)."""
        return True, ""

    def supports(self, case) -> str | None:
        """None when the target implements this case, else the reason it does not
        (reported as `unsupported`, never as a failure)."""
        return None

    def run(self, case, x):
        raise NotImplementedError

    def close(self) -> None:
        """Release sessions and devices."""


class CallableTarget(Target):
    """Wraps a plain `topk(x, *, axis, k, largest) -> (values, indices)` function.

    The function has DirectML semantics (sorted output) and raises to reject an input.
    """

    validates = True

    def __init__(self, fn: Callable, name: str | None = None, default_profile: str = "dml:5.0"):
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", repr(fn))
        self.default_profile = default_profile

    def version(self) -> str:
        module = getattr(self.fn, "__module__", None) or "?"
        return f"callable {module}"

    def supports(self, case):
        if not case.sorted:
            return None  # sorted output is a valid answer to an unsorted request
        return None

    def run(self, case, x):
        return self.fn(x, axis=case.norm_axis, k=case.k, largest=case.largest)
