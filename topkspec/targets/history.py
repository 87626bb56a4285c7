"""The calls a target's process has served, kept so a failure that needs earlier calls (one
that set some state in the process: a corrupted heap, a switched floating-point mode) can be
replayed with them.

A CallHistory holds (number, case, x) for each call, numbered from 0 over the history's whole
life, its input copied (the caller may reuse the array). It is bounded: past `max_calls`
calls or `max_bytes` of inputs, the oldest calls are dropped (counted in `dropped`); what
it holds is then the last calls before a failure, which is where a state-setting call most
often is, and a failure that needs a dropped call does not reproduce from it.
"""
from __future__ import annotations

from collections import deque

import numpy as np

MAX_CALLS = 1000
MAX_BYTES = 32 * 1024 * 1024


class CallHistory:
    """The calls made since the process began (see the module text)."""

    def __init__(self, *, max_calls: int = MAX_CALLS, max_bytes: int = MAX_BYTES):
        self.max_calls, self.max_bytes = max_calls, max_bytes
        self._calls: deque = deque()
        self._bytes = 0
        self.count = 0  # calls recorded over the history's life (the next call's number)
        self.dropped = 0  # of those, the oldest ones no longer held (bound reached or forgotten)

    def record(self, case, x) -> None:
        x = None if x is None else np.array(x, copy=True)
        self._calls.append((self.count, case, x))
        self.count += 1
        self._bytes += 0 if x is None else x.nbytes
        while self._calls and (len(self._calls) > self.max_calls or self._bytes > self.max_bytes):
            _, _, old = self._calls.popleft()
            self._bytes -= 0 if old is None else old.nbytes
            self.dropped += 1

    def forget(self) -> None:
        """A new process: what the last one served no longer bears on its calls."""
        self.dropped += len(self._calls)
        self._calls.clear()
        self._bytes = 0

    def before(self, number: int) -> list:
        """[(case, x)] of the calls held that were made before call `number`, oldest first."""
        return [(case, x) for n, case, x in self._calls if n < number]

    def __len__(self) -> int:
        return len(self._calls)
