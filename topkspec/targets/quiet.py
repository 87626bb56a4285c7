"""Keeping runtimes' own logging out of a run's output.

Runtimes log on their own: TensorFlow's C++ INFO lines and its Python warnings (a campaign
traces one tf.function per signature, which TensorFlow's tracing counter calls "retracing"),
TFLite's delegate notices, a Rust panic's whole backtrace. In a run these are noise between
the progress lines, the matrix and the summary, so adapters turn them down as they load a
runtime: an environment variable the runtime reads is given a quiet default (a value the user
set stays), a Python logger is raised to ERROR, a one-time native notice goes to /dev/null.

The hook: a target's `quiet` attribute, a callable that returns a context manager (a Target
method `quiet(self)`, a `Quieting`, or CallableTarget's `quiet=`). The run enters it around each
call it makes of the target, in the worker process where the target runs in one (`quieted`).
A `Quieting` says it as data: variables given a quiet default before the runtime loads (the
first call, or `load()` from the adapter's own loader), Python loggers shown errors only, Python
warnings ignored and stderr silenced around each call. The built-in adapters declare theirs the
same way.

`TOPKSPEC_RUNTIME_LOGS=keep` leaves every runtime's logging as the user set it: no variable,
logger or stream is touched, and no hook is entered. Worker processes inherit the variable.
"""
from __future__ import annotations

import contextlib
import logging
import os
import warnings

RUNTIME_LOGS_ENV = "TOPKSPEC_RUNTIME_LOGS"


def keep_runtime_logs() -> bool:
    """True when the user asked for runtimes' logging as they set it."""
    return os.environ.get(RUNTIME_LOGS_ENV, "").strip().lower() == "keep"


def quiet_environment(*, replace: bool = False, **defaults: str) -> None:
    """Each variable set to its quiet value unless the user set it (`replace`: even then),
    and none when the user keeps runtime logs. Call it before the runtime loads: most read
    their variables once."""
    if keep_runtime_logs():
        return
    for name, value in defaults.items():
        if replace:
            os.environ[name] = value
        else:
            os.environ.setdefault(name, value)


def quiet_logger(name: str) -> None:
    """The Python logger `name` shows errors only (unless the user keeps runtime logs)."""
    if not keep_runtime_logs():
        logging.getLogger(name).setLevel(logging.ERROR)


@contextlib.contextmanager
def stderr_silenced():
    """File descriptor 2 to /dev/null for a while (native code writes there directly)."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def stderr_captured():
    """File descriptor 2 to a scratch file for a while; yields a list that then holds what was
    written there (a compiler's diagnostics, say), as text. With runtime logs kept, nothing is
    redirected and the list stays empty."""
    import tempfile

    captured: list = []
    if keep_runtime_logs():
        yield captured
        return
    with tempfile.TemporaryFile() as scratch:
        saved = os.dup(2)
        os.dup2(scratch.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            scratch.seek(0)
            captured.append(scratch.read().decode("utf-8", "replace"))


def native_notices_silenced():
    """stderr_silenced() around a call whose native notices are noise, unless the user keeps
    runtime logs (then nothing is redirected)."""
    return contextlib.nullcontext() if keep_runtime_logs() else stderr_silenced()


class Quieting:
    """How a runtime is quieted, as data (see the module text): `environment` {variable: quiet
    value} (`replace`: even over the user's), `loggers` shown errors only, `warnings` (regular
    expressions of their messages) ignored around each call, and stderr silenced around each
    call when `stderr`. Calling it gives the context manager the run enters around a call."""

    def __init__(self, *, environment=None, replace: bool = False, loggers=(), warnings=(), stderr: bool = False):
        self.environment, self.replace = dict(environment or {}), replace
        self.loggers, self.warnings, self.stderr = tuple(loggers), tuple(warnings), stderr
        self._loaded = False

    def load(self) -> None:
        """The variables given their quiet defaults and the loggers raised to errors (an adapter
        calls it before importing its runtime, and again after where the import resets a logger);
        the variables once, so a value changed since stays."""
        if keep_runtime_logs():
            return
        if not self._loaded:
            self._loaded = True
            quiet_environment(replace=self.replace, **self.environment)
        for name in self.loggers:
            quiet_logger(name)

    @contextlib.contextmanager
    def __call__(self):
        self.load()
        with contextlib.ExitStack() as stack:
            if not keep_runtime_logs():
                if self.warnings:
                    stack.enter_context(warnings.catch_warnings())
                    for message in self.warnings:
                        warnings.filterwarnings("ignore", message=message)
                if self.stderr:
                    stack.enter_context(stderr_silenced())
            yield

    def __repr__(self) -> str:
        return (f"Quieting(environment={self.environment!r}, loggers={self.loggers!r}, "
                f"warnings={self.warnings!r}, stderr={self.stderr!r})")


def quieted(target):
    """The context a call of `target` runs in: its `quiet` hook's, or none (a target without
    one, a target in a worker process, whose worker enters it, or runtime logs kept)."""
    hook = getattr(target, "quiet", None)
    if hook is None or not callable(hook) or keep_runtime_logs():
        return contextlib.nullcontext()
    return hook()
