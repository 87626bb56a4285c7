"""Ctrl-C during a run: noted as well as raised, so the run stops even where the interrupt
cannot stop it (see CtrlC)."""
from __future__ import annotations


class CtrlC:
    """Notes a Ctrl-C as well as raising KeyboardInterrupt, so the run stops even where the
    interrupt cannot stop it: Hypothesis may fold an interrupt that lands while it replays a
    failure into an error of its own (a flaky failure), and Python drops an exception raised
    in a garbage-collector callback or a finalizer, printing it as unraisable. The run checks
    `pressed` before every example, and an interrupt Python drops is not printed. Installed in
    the main thread only (elsewhere it does nothing)."""

    def __init__(self):
        self.pressed = False
        self.previous = None
        self.previous_hook = None

    def _handler(self, signum, frame):
        self.pressed = True
        raise KeyboardInterrupt

    def _unraisable(self, unraisable):
        if self.pressed and isinstance(unraisable.exc_value, KeyboardInterrupt):
            return  # ours, dropped where Python could not raise it: the next example stops the run
        self.previous_hook(unraisable)

    def __enter__(self):
        import signal
        import sys
        import threading

        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handler)
            if self.previous is signal.SIG_IGN:  # Ctrl-C is off here (a background job): keep it off
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                self.previous = None
            else:
                self.previous_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(self, *exc):
        import signal
        import sys

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            sys.unraisablehook = self.previous_hook
