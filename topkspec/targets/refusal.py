"""A refusal, or the library failing inside its own code?

A Python runtime refuses an input with the error its API documents, or a clear ValueError or
TypeError naming the argument. An AttributeError, IndexError, KeyError (and their kin below)
raised from the library's own frames (`'tuple' object has no attribute 'ndim'` deep inside a
reduction) declines nothing on purpose: it is a bug in the library, and so is the ValueError or
TypeError Python itself raises when the library's code unpacks the wrong number of values. Such an error reaches the
run as `InternalError`, a Rejected (so an invalid case it stops is still not computed) that a
valid case reports as its own failure class, "internal error", not as a refusal.

An error raised in the adapter's own code (the file defining a plain function, a Target
subclass's module, or topkspec itself) is not the library's: it stays what it was.
"""
from __future__ import annotations

import os
import re
import traceback

from topkspec.targets.base import Rejected, describe_error

#: Errors no Python API documents as its way of refusing an input.
INTERNAL_ERRORS = (AttributeError, IndexError, KeyError, NameError, ZeroDivisionError, UnboundLocalError,
                   RecursionError)

#: What Python itself says when code unpacks the wrong number of values: raised as ValueError or
#: TypeError, yet no library's way of refusing an input (`too many values to unpack`).
_UNPACKING = re.compile(r"^(too many values to unpack|not enough values to unpack|cannot unpack non-iterable)")

_TOPKSPEC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class InternalError(Rejected):
    """The runtime's own code failed on the input (see the module text): no result, and no
    refusal either."""


def _adapter_files(target) -> set:
    """The files of the target's own code: a plain function's file, its classes' modules."""
    import inspect

    files = set()
    owners = [getattr(target, "fn", None)] + [cls for cls in type(target).__mro__ if cls is not object]
    for owner in owners:
        if owner is None:
            continue
        try:
            files.add(os.path.abspath(inspect.getfile(owner)))
        except (TypeError, OSError):
            continue
    return files


def _library_error(exc: BaseException):
    """The internal error behind a refusal (the refusal itself, or what it was raised from)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, INTERNAL_ERRORS) or (isinstance(exc, (ValueError, TypeError))
                                                and _UNPACKING.match(str(exc))):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def internal_error(target, exc: BaseException):
    """An InternalError for a refusal `exc` that is the library failing in its own code, else
    None; `exc` itself when it is one already (judged in a worker process)."""
    if isinstance(exc, InternalError):
        return exc
    cause = _library_error(exc)
    if cause is None:
        return None
    frames = traceback.extract_tb(cause.__traceback__)
    if not frames:
        return None
    innermost = os.path.abspath(frames[-1].filename)
    if innermost in _adapter_files(target) or innermost.startswith(_TOPKSPEC + os.sep):
        return None  # the adapter's own code: not the library's
    return InternalError(f"{getattr(target, 'name', 'the target')} failed inside its own code: {describe_error(cause)}")


def as_judged(target, exc: Rejected) -> Rejected:
    """The refusal as the run judges it: an InternalError when the library failed, else `exc`."""
    return internal_error(target, exc) or exc
