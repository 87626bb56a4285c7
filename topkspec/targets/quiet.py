"""Keeping runtimes' own logging out of a run's output.

Runtimes log on their own: TensorFlow's C++ INFO lines and its Python warnings (a campaign
traces one tf.function per signature, which TensorFlow's tracing counter calls "retracing"),
TFLite's delegate notices, a Rust panic's whole backtrace. In a run these are noise between
the progress lines, the matrix and the summary, so adapters turn them down as they load a
runtime: an environment variable the runtime reads is given a quiet default (a value the user
set stays), a Python logger is raised to ERROR, a one-time native notice goes to /dev/null.

`TOPKSPEC_RUNTIME_LOGS=keep` leaves every runtime's logging as the user set it: no variable,
logger or stream is touched. Worker processes inherit the variable.
"""
from __future__ import annotations

import contextlib
import logging
import os

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
