"""The run the bundle's file list is read from: the worker, its X server and (with the EP) ONNX
Runtime's worker, each under `strace -f`, on a fresh Wine session.

Fresh matters: the first process of a Wine session starts wineboot, services, explorer and the
device drivers, and those load DLLs the worker never names. So the trace runs on a prefix of its
own (a copy of the bundle's prefix template, which makes it a check of that template too),
whose wineserver starts and ends with the trace.
"""
from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from pathlib import Path

from topkspec.directml.client.worker_process import worker_environment
from topkspec.directml.windows.environment import DirectMLStack, to_windows_path, wine_binary

STRACE = ["strace", "-f", "-qq", "-e", "trace=%file,execve"]


class TraceError(RuntimeError):
    """The traced run did not do what the bundle needs (the message says what)."""


def strace_command(log_file: Path) -> list[str]:
    if shutil.which("strace") is None:
        raise TraceError("strace not found: the bundle's file list is read from a traced run "
                         "(Debian/Ubuntu: apt-get install strace)")
    return STRACE + ["-o", str(log_file)]


def scratch_prefix(template: Path, folder: Path, pe_dir: Path) -> Path:
    """A prefix made from the template the way the bundle's run script makes one, with every
    PE file of the system's Wine linked into system32 (the trace tells which are loaded)."""
    prefix = folder / "prefix"
    shutil.copytree(template, prefix, symlinks=True)
    (prefix / "dosdevices").mkdir(exist_ok=True)
    os.symlink("../drive_c", prefix / "dosdevices" / "c:")
    os.symlink("/", prefix / "dosdevices" / "z:")
    system32 = prefix / "drive_c" / "windows" / "system32"
    (system32 / "drivers").mkdir(parents=True, exist_ok=True)
    for entry in pe_dir.iterdir():
        target = system32 / "drivers" / entry.name if entry.suffix == ".sys" else system32 / entry.name
        os.symlink(entry, target)
    return prefix


def start_traced_xvfb(log_file: Path, xkb_dir: str) -> tuple[subprocess.Popen, str]:
    """Xvfb as the bundle runs it (no GLX, the keymap from xkb_dir), under strace; its display."""
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            strace_command(log_file) + ["Xvfb", "-displayfd", str(write_end), "-nolisten", "tcp", "-extension", "GLX",
                                        "-xkbdir", xkb_dir, "-screen", "0", "640x480x24"],
            pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True)
    finally:
        os.close(write_end)
    number = b""
    deadline = time.monotonic() + 30
    while not number.endswith(b"\n") and time.monotonic() < deadline:
        ready, _, _ = select.select([read_end], [], [], 1.0)
        if ready:
            chunk = os.read(read_end, 64)
            if not chunk:
                break
            number += chunk
    os.close(read_end)
    if not number.strip():
        process.kill()
        raise TraceError("Xvfb did not start under strace: " + process.communicate()[1].decode(errors="replace")[-400:])
    return process, ":" + number.decode().strip()


def stop(process: subprocess.Popen) -> None:
    """Ends a traced program and strace with it (they share a process group of their own)."""
    import signal

    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        process.kill()
        process.wait(10)


def traced_environment(stack: DirectMLStack, prefix: Path, display: str) -> dict:
    env = worker_environment(stack, display)
    env.update(WINEPREFIX=str(prefix), WINEDEBUG="-all")
    return env


def end_session(env: dict) -> None:
    """Ends the trace's Wine session (wineserver and the services it started)."""
    server = shutil.which("wineserver") or "wineserver"
    subprocess.run([server, "-k"], env=env, capture_output=True, timeout=60)
    subprocess.run([server, "-w"], env=env, capture_output=True, timeout=60)


def trace_replay(stack: DirectMLStack, env: dict, cases: Path, log_file: Path, *, dll: Path, worker: Path) -> str:
    """The worker's replay of a folder of cases, traced; its output (it must have made its device)."""
    command = strace_command(log_file) + [wine_binary() or "wine", str(worker), "--dll", to_windows_path(dll),
                                          "--metacommand-workaround", "--replay", to_windows_path(cases)]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1) or "device: " not in done.stdout:
        raise TraceError(f"the traced worker did not replay its cases (exit {done.returncode}): "
                         f"{(done.stdout + done.stderr)[-600:]}")
    return done.stdout


def trace_ep(env: dict, log_file: Path) -> str:
    """ONNX Runtime's worker on the DirectML EP, traced, running one TopK; ONNX Runtime's version."""
    import numpy as np

    from topkspec.spec import Case
    from topkspec.targets.runtimes.directml_ep import WineOrtTarget
    from topkspec.directml.client.ep_worker import OrtWorker

    class TracedOrtWorker(OrtWorker):
        """The EP's worker under strace, in the trace's environment (prefix, display)."""

        def __init__(self, stack, **kwargs):
            super().__init__(stack, **kwargs)
            self.display = None  # the trace's display is in env

        def command(self):
            return strace_command(log_file) + super().command()

        def environment(self, display):
            return env

    class TracedEpTarget(WineOrtTarget):
        def _new_worker(self):
            return TracedOrtWorker(self.stack, provider=self.worker_provider, timeout=self.timeout)

    target = TracedEpTarget()
    try:
        x = np.array([[1, 3, 2, 3]], np.float32)
        values, indices = target.run(Case("onnx:11", "TopK", "float32", (1, 4), 1, 2, index_dtype="int64"), x)
        if values.tolist() != [[3.0, 3.0]] or indices.tolist() != [[1, 3]]:
            raise TraceError(f"the traced DirectML EP returned {values.tolist()} / {indices.tolist()}")
        return target.info.get("onnxruntime") or "?"
    finally:
        target.close()
