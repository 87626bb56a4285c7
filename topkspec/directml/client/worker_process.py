"""The worker process: started, spoken to, and killed when it dies or hangs.

`Worker(stack)` starts topk_worker.exe (natively on Windows; under Wine on Linux, with an Xvfb
display shared by the runs on the cache's Wine prefix, the prefix and the lavapipe setup chose) and reads its "ready"
frame. `call()` sends one request and waits for its reply: when the process exits instead, it
raises `TargetCrashed`; when no reply comes within the time limit, it kills the process and
raises `TargetHung`. Either way the next call starts a fresh worker.
"""
from __future__ import annotations

import json
import os
import queue
import struct
import subprocess
import tempfile
import threading
import time

from topkspec.errors import TargetCrashed, TargetHung, describe_exit
from topkspec.directml.worker import protocol
from topkspec.directml.windows.display import Display, WorkerStartError
from topkspec.directml.windows.environment import IS_WINDOWS, DirectMLStack, needs_lane_workaround, prefix_dir, \
    to_windows_path

START_TIMEOUT = 90.0  # a cold Wine start (the prefix's services, the Vulkan driver) takes seconds
# The first execution of a descriptor compiles DirectML's shaders and Vulkan pipelines; it may
# take this long before it counts as a hang.
COMPILE_TIMEOUT = 30.0


def worker_environment(stack: DirectMLStack, display: str | None = None) -> dict:
    """The environment the worker runs in: under Wine, the prefix, the Vulkan driver and the display."""
    env = dict(os.environ)
    if stack.under_wine:
        env.update(WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=", VKD3D_CONFIG="virtual_heaps", WINEARCH="win64")
        if display:
            env["DISPLAY"] = display
        if stack.bundle is not None:  # the bundle's run script sets its prefix; the driver is the host's
            return env
        env["WINEPREFIX"] = str(prefix_dir())
        if stack.icd:
            env["VK_ICD_FILENAMES"] = stack.icd
        if stack.mesa_lib:
            env["LD_LIBRARY_PATH"] = stack.mesa_lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def wine_command(stack: DirectMLStack) -> list[str]:
    """What runs a Windows program under Wine: the installed Wine, or the bundle's run script."""
    from topkspec.directml.windows.environment import wine_binary

    if stack.bundle is not None:
        return [str(stack.bundle / "run"), "wine"]
    return [wine_binary() or "wine"]


def xvfb_command(stack: DirectMLStack) -> list[str]:
    """What starts the X server: the installed Xvfb, or the bundle's."""
    return [str(stack.bundle / "run"), "xvfb"] if stack.bundle is not None else ["Xvfb"]


def worker_command(stack: DirectMLStack, adapter: str = "auto", min_level: int = 0x1000) -> list[str]:
    """The command line that starts the worker."""
    args = [str(stack.worker), "--dll", to_windows_path(stack.dll), "--adapter", adapter,
            "--min-level", hex(min_level)]
    if needs_lane_workaround(stack.dll_version):
        args.append("--lane-workaround")
    if stack.under_wine:  # newer vkd3d stubs EnumerateMetaCommands (E_NOTIMPL): answered as "none"
        args.append("--metacommand-workaround")
    if stack.under_wine:
        return wine_command(stack) + args
    return args


def _die_with_parent() -> None:
    """In the child before exec (Linux): end when the process that started it ends, so no Xvfb
    or worker outlives a suite that was killed."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except Exception:
        pass


def run_replay(stack: DirectMLStack, folder: str, *, adapter: str = "auto", timeout: float = 600.0):
    """The worker in its own replay mode (`--replay DIR`): it reads the corpus's DirectML JSON
    cases itself and prints a verdict line for each and a summary. Returns (exit code, output)."""
    display = Display(xvfb_command(stack)).start() if stack.under_wine else None
    command = worker_command(stack, adapter) + ["--replay", to_windows_path(os.path.abspath(folder))]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                          env=worker_environment(stack, display))
    return done.returncode, done.stdout


class Worker:
    """One worker process at a time; see the module text. A subclass names another program
    (`command`) and its requests; starting, waiting, crash and hang handling are shared."""

    label = "directml"  # names the target in crash and hang messages

    def __init__(self, stack: DirectMLStack, *, adapter: str = "auto", timeout: float = 5.0,
                 min_level: int = 0x1000):
        self.stack = stack
        self.adapter = adapter
        self.timeout = timeout
        self.min_level = min_level
        self.display = Display(xvfb_command(stack)) if stack.under_wine else None
        self.process = None
        self.info: dict | None = None  # the ready frame's JSON
        self.starts = 0  # processes started (a restart after each crash or hang)
        self.start_seconds = 0.0
        self._replies: queue.Queue | None = None
        self._stderr = None
        self._executed: dict = {}  # descriptors executed by this process (their shaders are built)

    def command(self) -> list[str]:
        """The command line that starts this worker."""
        return worker_command(self.stack, self.adapter, self.min_level)

    def environment(self, display: str | None) -> dict:
        """The environment this worker runs in."""
        return worker_environment(self.stack, display)

    # -- lifetime ---------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> dict:
        if self.alive:
            return self.info
        self._reap()
        started = time.monotonic()
        display = self.display.start() if self.display is not None else None
        self._stderr = tempfile.TemporaryFile()
        kwargs = {}
        if IS_WINDOWS:
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0)
        else:
            kwargs.update(start_new_session=True, preexec_fn=_die_with_parent)
        self.process = subprocess.Popen(self.command(),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                        env=self.environment(display), **kwargs)
        self.starts += 1
        self._executed = {}
        self._replies = queue.Queue()
        threading.Thread(target=self._read_replies, args=(self.process.stdout, self._replies),
                         daemon=True).start()
        status, stage, payload = self._wait(START_TIMEOUT, "starting")
        self.start_seconds = time.monotonic() - started
        try:
            self.info = json.loads(payload.decode("utf-8", "replace"))
        except ValueError:
            self.info = {"failed": "ready frame", "raw": payload[:200].decode("utf-8", "replace")}
        if protocol.failed(status):
            step = self.info.get("failed") or protocol.STAGES.get(stage, "?")
            self.stop()
            error = self.info.get("error")
            raise WorkerStartError(f"{step} failed: {protocol.hresult_name(status)}" + (f": {error}" if error else ""))
        return self.info

    @staticmethod
    def _read_replies(stream, replies: queue.Queue) -> None:
        """Reads reply frames into the queue; None marks the end of the stream."""
        try:
            while True:
                head = stream.read(4)
                if len(head) < 4:
                    break
                (size,) = struct.unpack("<I", head)
                body = stream.read(size)
                if len(body) < size:
                    break
                replies.put(body)
        except (OSError, ValueError):
            pass
        replies.put(None)

    def _stderr_tail(self, limit: int = 600) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - limit))
            text = self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return " ".join(text.split())

    def _wait(self, timeout: float, doing: str):
        try:
            body = self._replies.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise TargetHung(f"{self.label}: the worker did not answer within {timeout:g}s while {doing}; "
                             f"worker killed") from None
        if body is None:
            try:
                code = self.process.wait(10)
            except subprocess.TimeoutExpired:
                code = None
            tail = self._stderr_tail()
            self.kill()
            raise TargetCrashed(f"{self.label}: the worker {describe_exit(code)} while {doing}"
                                + (f" (stderr: {tail})" if tail else ""))
        return protocol.parse_reply(body)

    def kill(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                process.kill()
            except OSError:
                pass
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def _reap(self) -> None:
        if self.process is not None:
            self.kill()

    def stop(self) -> None:
        """Asks the worker to quit, then makes sure it is gone."""
        if self.alive:
            try:
                self.process.stdin.write(protocol.request(protocol.CMD_QUIT))
                self.process.stdin.flush()
                self.process.wait(5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def close(self) -> None:
        self.stop()
        if self.display is not None:
            self.display.stop()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- requests ---------------------------------------------------------------------------

    def call(self, command: int, payload: bytes = b"", *, timeout: float | None = None, doing: str = "working"):
        """(status, stage, payload) of one request; raises TargetCrashed or TargetHung."""
        self.start()
        try:
            self.process.stdin.write(protocol.request(command, payload))
            self.process.stdin.flush()
        except (OSError, ValueError):
            pass  # it is gone: the wait below reports how
        return self._wait(self.timeout if timeout is None else timeout, doing)

    def create(self, descriptor: bytes) -> tuple[int, float]:
        """(HRESULT of CreateOperator, microseconds)."""
        status, _, payload = self.call(protocol.CMD_CREATE, descriptor, doing="creating an operator")
        micros = struct.unpack_from("<d", payload)[0] if len(payload) >= 8 else 0.0
        return status, micros

    def execute(self, descriptor: bytes, data: bytes, *, layout: bytes | None = None):
        """(status, stage, values bytes, indices bytes, timings). layout: the call's layout
        (protocol.layout_fields), sent as EXECUTE_LAYOUT; then `data` is the whole input buffer
        and the outputs come back as whole buffers."""
        key = descriptor + (layout or b"")
        first = key not in self._executed
        timeout = max(self.timeout, COMPILE_TIMEOUT) if first else self.timeout
        command = protocol.CMD_EXECUTE if layout is None else protocol.CMD_EXECUTE_LAYOUT
        status, stage, payload = self.call(command, protocol.execute_payload(key, data),
                                           timeout=timeout, doing="executing" + (" (first time: compiling)" if first else ""))
        if protocol.failed(status):
            return status, stage, b"", b"", (0.0, 0.0, 0.0)
        if len(self._executed) > 40:  # the worker keeps 48 compiled operators
            self._executed.pop(next(iter(self._executed)))
        self._executed[key] = True
        values, indices, timings = protocol.parse_outputs(payload)
        return status, stage, values, indices, timings


def kill_on_exit(worker: Worker) -> None:
    """Registers a last-chance cleanup (atexit) so no worker or Xvfb outlives the suite."""
    import atexit
    import weakref

    ref = weakref.ref(worker)

    def cleanup():
        w = ref()
        if w is not None:
            w.close()

    atexit.register(cleanup)


__all__ = ["Worker", "WorkerStartError", "TargetCrashed", "TargetHung", "worker_command", "worker_environment",
           "wine_command", "xvfb_command",
           "START_TIMEOUT", "COMPILE_TIMEOUT"]

