"""The part of a target that runs its calls in one Wine worker (the DirectML worker, or ONNX
Runtime's), shared by the directml and onnxruntime-directml targets."""
from __future__ import annotations

from topkspec.directml.client.worker_process import kill_on_exit


class WineWorkerOwner:
    """What a target that runs its calls in one Wine worker shares: the stack found lazily, the
    worker started on first use (and again after a crash), its time limit. A subclass says how
    to find its stack (`_find_stack`) and make its worker (`_new_worker`)."""

    _stack = None
    _worker = None
    timeout: float

    def _find_stack(self):
        raise NotImplementedError

    def _new_worker(self):
        raise NotImplementedError

    @property
    def stack(self):
        if self._stack is None:
            self._stack = self._find_stack()
        return self._stack

    def set_timeout(self, timeout: float) -> None:
        """The time a call may take before it counts as a hang (the runner's --timeout)."""
        self.timeout = timeout
        if self._worker is not None:
            self._worker.timeout = timeout

    def _worker_started(self):
        if self._worker is None:
            if self.stack.missing:
                raise RuntimeError("; ".join(self.stack.missing))
            self._worker = self._new_worker()
            kill_on_exit(self._worker)
        self._worker.start()
        return self._worker
