"""Planted targets whose failures depend on the process they run in, not on the case alone:
a call that poisons the process so that a later, innocent call fails, and a process that fails
whatever it is asked while a fresh one never does. Named by file path
(`tests/stateful_targets.py:poisoned_by_float16`), like tests/planted_bugs.py."""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import planted_bugs  # noqa: E402

_POISONED = False  # set by the poisoning call; a fresh process starts without it


def _flip_after_poison(x, axis, k, largest):
    """The smallest instead of the largest (and the reverse) once poisoned; right before."""
    return planted_bugs.CORRECT(x, axis=axis, k=k, largest=not largest if _POISONED else largest)


def poisoned_by_float16(x, axis=-1, k=1, largest=True):
    """Right on every call by itself; but a float16 call switches the process (as a kernel
    that sets the FTZ/DAZ flags does), and every call after it returns the wrong end."""
    global _POISONED
    result = _flip_after_poison(x, axis, k, largest)
    if np.asarray(x).dtype == np.float16:
        _POISONED = True
    return result


def aborts_after_float16(x, axis=-1, k=1, largest=True):
    """Right on every call by itself; but a float16 call corrupts the process (as a heap
    overrun does), and the next float32 call after it aborts."""
    global _POISONED
    dtype = np.asarray(x).dtype
    if _POISONED and dtype == np.float32:
        os.abort()
    if dtype == np.float16:
        _POISONED = True
    return planted_bugs.CORRECT(x, axis=axis, k=k, largest=largest)


def fails_in_first_process(x, axis=-1, k=1, largest=True):
    """Returns the wrong end in the first process that calls it (the file named by
    TOPKSPEC_TEST_FIRST_PROCESS does not exist yet when it first calls), right in every other:
    a failure that no fresh process reproduces, whatever calls it replays."""
    global _POISONED
    if _POISONED is False:
        marker = os.environ["TOPKSPEC_TEST_FIRST_PROCESS"]
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            _POISONED = True
        except FileExistsError:
            _POISONED = None  # another process was first
    return _flip_after_poison(x, axis, k, largest)
