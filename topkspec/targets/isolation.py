"""Running a target in a worker process, so a crash or a hang in native code cannot end the run.

`IsolatedTarget(spec)` is a Target whose `supports` and `run` calls go to a reused worker
process that built the target from `spec` (a name or import string, or a picklable Target).
With `wait=False` it returns as soon as the worker is started, and the first use waits for it:
the caller goes on with its own start-up while the worker imports the runtime.
When the worker dies during a call (a segfault, an abort, an exit) the call raises
`TargetCrashed`; when it does not answer within `timeout` seconds it is killed and the call
raises `TargetHung`. Either way the next call starts a fresh worker.

The worker is started with multiprocessing's "spawn" method, the only one Windows has, on
every platform, and the two talk over a multiprocessing Pipe, whose `poll(timeout)` works on
Windows pipes as on POSIX ones (select() does not: on Windows it takes sockets only). A crash
is the worker ending before it answers, whatever its exit status: a negative one (a POSIX
signal), an NTSTATUS such as 0xC0000005 (a Windows access violation) or any other. The
worker ignores Ctrl-C: the run that started it decides when to stop, and stops it.
"""
from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
import time

from topkspec.errors import TargetCrashed, TargetHung, describe_exit
from topkspec.targets.history import CallHistory
from topkspec.targets.wire import SharedBlock, Wire
from topkspec.targets.base import AdapterError, Rejected, Target
from topkspec.targets.refusal import InternalError
from topkspec.targets.worker_side import worker_main as _worker_main
from topkspec.targets.registry import TargetError

DEFAULT_TIMEOUT = 5.0  # seconds per call; a TopK on the suite's small tensors takes milliseconds
START_TIMEOUT = 120.0  # importing a runtime in a fresh process can take a while
_POLL_SLICE = 0.25  # wait in slices, so Ctrl-C is noticed on every platform

class _ctrl_c_ignored:
    """Ignore Ctrl-C while a worker starts: on POSIX the new process inherits the ignored
    signal, so a Ctrl-C during its start-up (before _worker_main runs) prints no traceback
    there. Only the main thread may change signal handlers; elsewhere this does nothing."""

    def __enter__(self):
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def _reported(field: str) -> property:
    """A read-only attribute of an IsolatedTarget taken from what its worker reported."""
    return property(lambda self: self._info[field])


class IsolatedTarget(Target):
    """A target run in a worker process; see the module text."""

    native = True

    def __init__(self, spec, *, timeout: float = DEFAULT_TIMEOUT, wait: bool = True):
        self.spec = spec
        self.timeout = timeout
        self.restarts = 0  # workers started after the first (one per crash or hang)
        self._process = None
        self._conn = None
        self._about = None  # what the worker reported on starting
        self._starting = False  # a worker was started and has not reported yet
        self._support_answers = {}  # supports() by the target's support_fields: a reason, None or Rejected
        self._pending = None  # waits for the answer to the request sent last, until it is taken
        self._block = SharedBlock()  # kept across workers, closed with the target
        self.history = CallHistory()  # the runs the current worker served (see _remember)
        self._history_worker = None  # the worker process that history belongs to
        try:
            self._launch()
            if wait:
                self._handshake()
        except BaseException:
            self._stop(kill=True)
            self._block.close()
            raise

    # -- the worker's lifetime --------------------------------------------------------------

    def _answer(self, timeout: float):
        """The worker's reply; None when it sent none within `timeout` seconds; raises
        EOFError when it ended without answering."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self._conn.poll(max(0.0, min(_POLL_SLICE, deadline - time.monotonic()))):
                    return self._conn.recv()
            except (EOFError, OSError):  # POSIX: EOF; Windows: a broken pipe
                raise EOFError("the worker ended without answering") from None
            if not self._process.is_alive() and not self._conn.poll(0):
                raise EOFError("the worker ended without answering")
            if time.monotonic() >= deadline:
                return None

    def _exit_status(self) -> str:
        self._process.join(5)
        return describe_exit(self._process.exitcode)

    def _launch(self) -> None:
        """Start a worker; `_handshake` waits for it to report."""
        context = multiprocessing.get_context("spawn")
        conn, child = context.Pipe()
        process = context.Process(target=_worker_main, args=(child, self.spec, self._block.name),
                                  daemon=True, name="topkspec-worker")
        try:
            with _ctrl_c_ignored():  # inherited by the new process until it ignores Ctrl-C itself
                process.start()  # raises when the spec cannot be sent (a lambda, say): nothing started
        except BaseException:
            conn.close()
            raise
        finally:
            child.close()  # so the worker's end closing is seen here as EOF
        self._process, self._conn = process, Wire(conn, self._block.memory, half=0)
        self._starting = True

    def _handshake(self) -> None:
        """Wait for the worker started last to report what it built; a worker that fails to
        start is stopped, and raises TargetCrashed, TargetHung or TargetError (the spec names
        nothing the worker can build)."""
        status, payload = self._answer_or_stop(
            START_TIMEOUT, crashed=lambda status: f"worker for {self.spec!r} {status} while starting",
            hung=f"worker for {self.spec!r} did not start within {START_TIMEOUT:.0f}s")
        if status != "ok":
            self._stop(kill=True)
            raise TargetError(f"cannot build target {self.spec!r} in the worker: {payload}")
        self._starting = False  # only once its report is off the pipe (a Ctrl-C may cut the wait short)
        if self._about is not None:
            self.restarts += 1
        self._about = payload

    def _start(self) -> None:
        self._launch()
        self._handshake()

    @property
    def _info(self) -> dict:
        """What the worker reported on starting (waited for here when it has not yet)."""
        if self._starting:
            self._handshake()
        return self._about

    def _stop(self, kill: bool = False) -> None:
        process, conn = self._process, self._conn
        kill = kill or self._starting  # a worker still importing its runtime has nothing to finish
        self._process = self._conn = self._pending = None
        self._starting = False
        if process is None:
            return
        if not kill and process.is_alive():
            try:
                conn.send(("stop", ()))
            except (OSError, ValueError):
                pass
            process.join(2)
        if process.is_alive():
            process.kill()
        process.join(5)
        conn.close()

    def _request(self, method: str, *args):
        """Send `method(*args)` to the worker; return a function that waits for its answer."""
        if self._pending is not None:  # an answer nobody waited for: off the pipe first
            try:
                self._pending()
            except Exception:
                pass
        if self._process is None:
            self._start()
        elif self._starting:
            self._handshake()
        try:
            self._conn.send((method, args))
        except (OSError, ValueError):
            pass  # the worker is gone: waiting for its answer says so

        def wait():
            if self._pending is not wait:
                raise RuntimeError("each answer is waited for once")
            # Interrupted before the answer arrives (Ctrl-C), the wait stays pending, so the
            # next request takes this answer off the pipe instead of taking it for its own.
            status, payload = self._receive()
            self._pending = None
            return self._payload(status, payload)

        self._pending = wait
        return wait

    def _receive(self) -> tuple:
        """The worker's (status, payload); a worker that dies or does not answer in time is
        stopped (nothing is pending then) and raises TargetCrashed or TargetHung."""
        return self._answer_or_stop(self.timeout, crashed=lambda status: f"{self.name}: worker process {status}",
                                    hung=f"{self.name}: no answer within {self.timeout:g}s; worker killed")

    def _answer_or_stop(self, timeout: float, *, crashed, hung: str) -> tuple:
        """The worker's reply within `timeout`; a worker that dies (TargetCrashed with the
        message `crashed(exit status)`) or does not answer (TargetHung, `hung`) is stopped."""
        try:
            reply = self._answer(timeout)
        except EOFError:
            status = self._exit_status()
            self._stop(kill=True)
            raise TargetCrashed(crashed(status)) from None
        if reply is None:
            self._stop(kill=True)
            raise TargetHung(hung)
        return reply

    @staticmethod
    def _payload(status: str, payload):
        if status == "rejected":
            raise Rejected(payload)
        if status == "internal-error":
            raise InternalError(payload)
        if status == "adapter-error":
            raise AdapterError(payload)
        return payload

    def _call(self, method: str, *args):
        return self._request(method, *args)()

    # -- the Target interface ---------------------------------------------------------------

    # What describes the target, as its worker reported it on starting.
    name = _reported("name")
    validates = _reported("validates")
    validates_tables = _reported("validates_tables")
    index_dtype = _reported("index_dtype")
    default_profile = _reported("default_profile")
    smallest_by_key = _reported("smallest_by_key")
    k_forms = _reported("k_forms")
    graph_contexts = _reported("graph_contexts")

    @property
    def contract(self):
        from topkspec.spec.contracts import Contract
        return Contract.from_dict(self._info["contract"])

    def version(self) -> str:
        return self._info["version"]

    def supports(self, case):
        fields = self._info["support_fields"]
        if fields is None:  # the answer may hang on anything in the case: kept for this case alone
            key = ("case", case)
            if len(self._support_answers) > 4096:
                self._support_answers.clear()
        else:
            key = tuple(getattr(case, name) for name in fields)
        if key not in self._support_answers:
            try:
                self._support_answers[key] = self._call("supports", case)
            except Rejected as exc:  # a refusal is an answer too: a runtime with no kernel for a
                self._support_answers[key] = exc  # type would otherwise be asked on every example
        answer = self._support_answers[key]
        if isinstance(answer, Rejected):
            raise type(answer)(str(answer))  # an InternalError stays one
        return answer

    def run(self, case, x):
        return self.submit(case, x)()

    def submit(self, case, x):
        wait = self._request("run", case, x)
        self._remember(case, x)
        return wait

    def submit_many(self, calls):
        """Send the runs `calls` [(case, x)] to the worker in one request; return a function
        that waits for their answers: {index in calls: (history number, wait)}, each wait
        giving the call's result or raising as `run` would. Each call has the time limit of
        one. A call that crashes or hangs the worker is the only one answered then (its wait
        raises TargetCrashed or TargetHung; the worker is stopped): those after it never ran,
        and those before it lost their answers with the worker, to be asked again."""
        self._request("run_many", list(calls))
        process = self._process

        def wait():
            if self._pending is not wait:
                raise RuntimeError("each answer is waited for once")
            try:
                return self._answers(calls, process)
            finally:
                if self._pending is wait:
                    self._pending = None
        self._pending = wait
        return wait

    def _answers(self, calls, process) -> dict:
        """The answers of a run_many request (see submit_many) from the worker `process`."""
        begun = -1  # the call the worker said it began last
        while True:
            try:
                status, payload = self._receive()
            except (TargetCrashed, TargetHung) as exc:
                if begun < 0:
                    raise
                for case, x in calls[:begun + 1]:  # what the worker that ended ran
                    self._remember_in(process, case, x)

                def fatal(failed=exc):
                    raise type(failed)(str(failed))
                return {begun: (self.history.count - 1, fatal)}
            if status != "begin":
                break
            begun = payload
        for case, x in calls:
            self._remember_in(process, case, x)
        first = self.history.count - len(calls)
        return {number: (first + number, lambda answer=answer: self._payload(*answer))
                for number, answer in enumerate(self._payload(status, payload))}

    # -- the worker's history: what it ran, for replaying a failure with its earlier calls --

    def _remember(self, case, x) -> None:
        """Record a run sent to the worker; a new worker starts a new history."""
        self._remember_in(self._process, case, x)

    def _remember_in(self, process, case, x) -> None:
        """Record a run `process` served; another worker than the last starts a new history."""
        if self._history_worker is not process:
            self.history.forget()
            self._history_worker = process
        self.history.record(case, x)

    def close(self) -> None:
        self._stop()
        self._block.close()


if __name__ == "__main__":
    sys.exit("topkspec.targets.isolation starts its workers itself (multiprocessing, spawn)")
