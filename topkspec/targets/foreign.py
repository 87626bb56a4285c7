"""A target's runtime in another Python environment: its own interpreter, its own packages.

Some runtimes cannot share the suite's environment (jittor pins numpy below 2, which the
suite's ml_dtypes does not take), and two versions of one runtime cannot share any. Such a
target keeps its logic here (what it supports, its contract, its repro writer) and runs only
the runtime's calls in a worker under the other interpreter: foreign_worker.py, a standalone
script that needs numpy and the runtime, nothing of the suite, and loads a kernel file from
topkspec/targets/runtimes/kernels/ that calls the runtime. Cases never cross, only plain data and
arrays (foreign_worker.py describes the frames).

Which interpreter, first found:
1. `TOPKSPEC_<NAME>_PYTHON` (NAME upper-cased, every other character an underscore:
   TOPKSPEC_JITTOR_PYTHON, TOPKSPEC_ONNXRUNTIME_1_31_PYTHON): an interpreter or a virtual
   environment's folder;
2. the environment `topkspec env setup NAME` made: `<environments>/NAME`, where
   <environments> is $TOPKSPEC_ENVS, else $XDG_CACHE_HOME/topkspec/envs, else ~/.cache/topkspec/envs.

The worker is the isolation, as for the `directml` target: when it dies the call raises
TargetCrashed, when it does not answer in time it is killed and the call raises TargetHung,
and the next call starts a fresh one.
"""
from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

from topkspec.targets.base import AdapterError, Rejected, Target
from topkspec.errors import TargetCrashed, TargetHung, describe_exit
from topkspec.targets.isolation import DEFAULT_TIMEOUT, START_TIMEOUT

HERE = Path(__file__).resolve().parent
WORKER_SCRIPT = HERE / "foreign_worker.py"
KERNELS = HERE / "runtimes" / "kernels"


def environments_dir() -> Path:
    given = os.environ.get("TOPKSPEC_ENVS")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "topkspec" / "envs"


def python_variable(name: str) -> str:
    """The variable that names the interpreter for environment `name`."""
    return "TOPKSPEC_" + re.sub(r"[^A-Z0-9]", "_", name.upper()) + "_PYTHON"


def interpreter_in(path: str | os.PathLike) -> Path:
    """The interpreter a path names: itself, or a virtual environment folder's python."""
    path = Path(path)
    if path.is_dir():
        for inside in ("bin/python", "Scripts/python.exe"):
            if (path / inside).exists():
                return path / inside
    return path


def find_python(name: str) -> tuple[Path | None, str]:
    """(the interpreter for environment `name`, where it came from), or (None, what to do)."""
    variable = python_variable(name)
    given = os.environ.get(variable)
    if given:
        python = interpreter_in(given)
        if not python.is_file():
            return None, f"{variable}={given} names no interpreter"
        return python, variable
    python = interpreter_in(environments_dir() / name)
    if python.is_file():
        return python, f"topkspec env setup {name}"
    return None, f"run `topkspec env setup {name}` (or set {variable} to an interpreter or a virtual environment)"


# -- the worker process ----------------------------------------------------------------------------

def worker_command(python: Path, kernel: Path) -> list[str]:
    """What starts a worker: the other interpreter, isolated from the user's site and the
    suite's PYTHONPATH (-I), running the standalone script on the kernel file."""
    return [str(python), "-I", str(WORKER_SCRIPT), str(kernel)]


def launch_foreign_worker(python: Path, kernel: Path, env: dict | None = None) -> subprocess.Popen:
    """Start a worker under `python` (see worker_command). What the runtime prints (jittor's
    compiler, for one) stays out of the run's output unless TOPKSPEC_RUNTIME_LOGS=keep."""
    from topkspec.targets.quiet import keep_runtime_logs

    return subprocess.Popen(worker_command(python, kernel), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=None if keep_runtime_logs() else subprocess.DEVNULL, env=env,
                            start_new_session=os.name != "nt")


def _encode(obj):
    import numpy as np

    from topkspec.spec import dtypes

    if isinstance(obj, np.ndarray):
        obj = np.ascontiguousarray(obj)
        name = dtypes.name_of(obj.dtype) if obj.dtype.kind == "V" or obj.dtype.name == "bfloat16" else obj.dtype.str
        return ("ndarray", name, list(obj.shape), obj.tobytes())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_encode(item) for item in obj)
    if isinstance(obj, dict):
        return {key: _encode(value) for key, value in obj.items()}
    return obj


def _decode(obj):
    import numpy as np

    from topkspec.spec import dtypes

    if isinstance(obj, tuple) and len(obj) == 4 and obj[0] == "ndarray":
        _, name, shape, data = obj
        dtype = dtypes.numpy_dtype("bfloat16") if name == "bfloat16" else np.dtype(name)
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_decode(item) for item in obj)
    if isinstance(obj, dict):
        return {key: _decode(value) for key, value in obj.items()}
    return obj


class ForeignWorker:
    """One worker process under another interpreter; `call` sends a request and waits."""

    def __init__(self, python: Path, kernel: Path, *, label: str, timeout: float = DEFAULT_TIMEOUT,
                 start_timeout: float = START_TIMEOUT, env: dict | None = None):
        self.python, self.kernel, self.label, self.timeout = python, kernel, label, timeout
        self.start_timeout = start_timeout
        self.env = env
        self._process = None
        self._frames: queue.Queue | None = None
        self.info: dict = {}
        self.starts = 0

    def _read_frames(self, process, frames: queue.Queue) -> None:
        import pickle
        import struct

        stream = process.stdout
        while True:
            head = stream.read(4)
            if len(head) < 4:
                frames.put(None)
                return
            size, = struct.unpack("<I", head)
            frames.put(pickle.loads(stream.read(size)))

    def _next(self, timeout: float, doing: str):
        try:
            frame = self._frames.get(timeout=timeout)
        except queue.Empty:
            self.close(kill=True)
            raise TargetHung(f"{self.label}: no answer within {timeout:g}s while {doing}; worker killed") from None
        if frame is None:
            process = self._process
            process.wait(5)
            self.close(kill=True)
            raise TargetCrashed(f"{self.label}: the worker {describe_exit(process.returncode)} while {doing}")
        return _decode(frame)

    def start(self) -> dict:
        if self._process is not None:
            return self.info
        self._process = launch_foreign_worker(self.python, self.kernel, self.env)
        self._frames = queue.Queue()
        threading.Thread(target=self._read_frames, args=(self._process, self._frames), daemon=True).start()
        status, payload = self._next(self.start_timeout, "starting")
        if status != "ready":
            self.close(kill=True)
            raise Rejected(f"{self.label}: the runtime does not start under {self.python}: {payload}")
        self.starts += 1
        self.info = payload
        return payload

    def call(self, method: str, *args):
        import pickle
        import struct

        self.start()
        data = pickle.dumps(_encode((method, args)), protocol=4)
        try:
            self._process.stdin.write(struct.pack("<I", len(data)) + data)
            self._process.stdin.flush()
        except OSError:
            pass  # the worker is gone: waiting for its answer says so
        status, payload = self._next(self.timeout, f"running {method}")
        if status == "rejected":  # a runtime's message may run to pages: its first line
            raise Rejected(f"{self.label}: {next((line for line in payload.splitlines() if line.strip()), payload)}")
        if status == "adapter-error":
            raise AdapterError(f"{self.label} kernel {self.kernel.name}: {payload}")
        return payload

    def close(self, kill: bool = False) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if not kill and process.poll() is None:
                data = __import__("pickle").dumps(("stop", ()), protocol=4)
                process.stdin.write(len(data).to_bytes(4, "little") + data)
                process.stdin.flush()
                process.wait(2)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if process.poll() is None:
            process.kill()
            process.wait(5)
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass


class ForeignTarget(Target):
    """A target whose runtime runs in another Python environment (`environment`), through the
    kernel file `kernel` (a name under topkspec/targets/runtimes/kernels/)."""

    native = True
    isolates_itself = True  # the worker is the isolation
    environment: str = ""
    kernel: str = ""
    start_timeout: float = START_TIMEOUT

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT):
        self.timeout = max(timeout, self.min_timeout)  # a runtime that compiles per shape needs it
        self._worker: ForeignWorker | None = None

    def set_timeout(self, timeout: float) -> None:
        self.timeout = timeout
        if self._worker is not None:
            self._worker.timeout = timeout

    def worker_environment(self) -> dict | None:
        """The worker's environment variables (None: this process's)."""
        return None

    def worker(self) -> ForeignWorker:
        if self._worker is None:
            python, where = find_python(self.environment)
            if python is None:
                raise Rejected(f"{self.name}: no Python environment: {where}")
            self._worker = ForeignWorker(python, KERNELS / self.kernel, label=self.name, timeout=self.timeout,
                                         start_timeout=self.start_timeout, env=self.worker_environment())
        return self._worker

    def call(self, method: str, *args):
        return self.worker().call(method, *args)

    def available(self):
        python, where = find_python(self.environment)
        if python is None:
            return False, where
        try:
            self.worker().start()
        except (Rejected, TargetCrashed, TargetHung, OSError) as exc:
            return False, f"{exc} (interpreter {python}, from {where}; run `topkspec env setup {self.environment}`)"
        return True, ""

    def runtime_version(self) -> str | None:
        """The kernel's version() in the worker, or None when no worker starts."""
        if find_python(self.environment)[0] is None:
            return None
        try:
            return self.worker().start()["version"]
        except (Rejected, TargetCrashed, TargetHung, OSError):
            return None

    def version(self) -> str:
        found = self.runtime_version()
        if found is None:
            return f"not set up (topkspec env setup {self.environment})"
        info = self._worker.info
        return f"{found} (Python {info['python']}, numpy {info['numpy']}, in {info['executable']})"

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None


if __name__ == "__main__":
    sys.exit("topkspec.targets.foreign starts its workers itself")
