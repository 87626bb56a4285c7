"""Running a target in a worker process, so a crash or a hang in native code cannot end the run.

`IsolatedTarget(spec)` is a Target whose `supports` and `run` calls go to a reused worker
process (a `python -m topkspec.isolation` subprocess speaking pickles over
pipes) that built the target from `spec` (a name or import string,
or a picklable Target). When the worker dies during a call (a segfault, an abort) the call raises
`TargetCrashed`; when it does not answer within `timeout` seconds it is killed and the call raises
`TargetHung`. Either way the next call starts a fresh worker.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys

from topkspec.targets.base import Rejected, Target

DEFAULT_TIMEOUT = 5.0  # seconds per call; a TopK on the suite's small tensors takes milliseconds
START_TIMEOUT = 120.0  # importing a runtime in a fresh process can take a while


class TargetCrashed(Exception):
    """The worker process died during a call (its exit code or signal is in the message)."""


class TargetHung(Exception):
    """The worker did not answer within the time limit and was killed."""


def _build(spec):
    if isinstance(spec, Target):
        return spec
    from topkspec.targets.registry import get_target
    return get_target(spec)


def _send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read_exact(stream, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError("the other end closed the pipe")
        data += chunk
    return data


def _receive(stream):
    (size,) = struct.unpack("<Q", _read_exact(stream, 8))
    return pickle.loads(_read_exact(stream, size))


def _worker_main() -> None:
    """Serve requests (method, args) from stdin until told to stop; answer (status, payload).

    The protocol keeps the process's original stdout; fd 1 is pointed at stderr so whatever
    the target prints cannot corrupt it."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    try:
        target = _build(_receive(requests))
        _send(replies, ("ok", {"name": target.name, "version": target.version(),
                               "validates": target.validates,
                               "validates_tables": target.validates_tables, "index_dtype": target.index_dtype,
                               "default_profile": target.default_profile}))
    except Exception as exc:
        _send(replies, ("error", f"{type(exc).__name__}: {exc}"))
        return
    while True:
        try:
            method, args = _receive(requests)
        except EOFError:
            return
        if method == "stop":
            target.close()
            return
        try:
            _send(replies, ("ok", getattr(target, method)(*args)))
        except Rejected as exc:
            _send(replies, ("rejected", str(exc)))
        except Exception as exc:  # the target failed in Python: a refusal of the input
            _send(replies, ("rejected", f"{type(exc).__name__}: {exc}"))


def describe_exit(code) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


class IsolatedTarget(Target):
    """A target run in a worker process; see the module text."""

    native = True

    def __init__(self, spec, *, timeout: float = DEFAULT_TIMEOUT):
        self.spec = spec
        self.timeout = timeout
        self.restarts = 0  # workers started after the first (one per crash or hang)
        self._process = None
        self._info = None
        self._start()

    # -- the worker's lifetime --------------------------------------------------------------

    def _ready(self, timeout: float) -> bool:
        readable, _, _ = select.select([self._process.stdout], [], [], timeout)
        return bool(readable)

    def _start(self) -> None:
        self._process = subprocess.Popen([sys.executable, "-m", "topkspec.isolation"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            _send(self._process.stdin, self.spec)
        except OSError:
            pass  # it died at once: the read below reports it
        if not self._ready(START_TIMEOUT):
            self._stop(kill=True)
            raise TargetHung(f"worker for {self.spec!r} did not start within {START_TIMEOUT:.0f}s")
        try:
            status, payload = _receive(self._process.stdout)
        except EOFError:
            code = self._process.wait(5)
            self._stop(kill=True)
            raise TargetCrashed(f"worker for {self.spec!r} {describe_exit(code)} while starting") from None
        if status != "ok":
            self._stop(kill=True)
            raise ValueError(f"cannot build target {self.spec!r} in the worker: {payload}")
        if self._info is not None:
            self.restarts += 1
        self._info = payload

    def _stop(self, kill: bool = False) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if not kill and process.poll() is None:
            try:
                _send(process.stdin, ("stop", ()))
                process.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if process.poll() is None:
            process.kill()
        process.wait(5)
        process.stdin.close()
        process.stdout.close()

    def _call(self, method: str, *args):
        if self._process is None:
            self._start()
        try:
            _send(self._process.stdin, (method, args))
        except OSError:
            pass  # the worker is gone: the read below sees it
        if not self._ready(self.timeout):
            self._stop(kill=True)
            raise TargetHung(f"{self.name}: no answer within {self.timeout:g}s; worker killed")
        try:
            status, payload = _receive(self._process.stdout)
        except EOFError:
            code = self._process.wait(5)
            self._stop(kill=True)
            raise TargetCrashed(f"{self.name}: worker process {describe_exit(code)}") from None
        if status == "rejected":
            raise Rejected(payload)
        return payload

    # -- the Target interface ---------------------------------------------------------------

    @property
    def name(self):
        return self._info["name"]

    @property
    def validates(self):
        return self._info["validates"]

    @property
    def validates_tables(self):
        return self._info["validates_tables"]

    @property
    def index_dtype(self):
        return self._info["index_dtype"]

    @property
    def default_profile(self):
        return self._info["default_profile"]

    def version(self) -> str:
        return self._info["version"]

    def supports(self, case):
        return self._call("supports", case)

    def run(self, case, x):
        return self._call("run", case, x)

    def close(self) -> None:
        self._stop()



if __name__ == "__main__":
    _worker_main()
