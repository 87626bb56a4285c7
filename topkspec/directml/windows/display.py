"""The X display the DirectML worker runs on under Wine: one Xvfb shared by every run on the
cache's Wine prefix (see Display)."""
from __future__ import annotations

import json
import os
import subprocess
import time


class WorkerStartError(RuntimeError):
    """The worker started but could not make its device (the message says which step failed)."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True


class Display:
    """The X display the worker uses (Wine's DXGI needs one): one Xvfb shared by every run on
    this cache's Wine prefix, started on first use and left running.

    Shared because Wine ties a prefix's session (its explorer.exe desktop, which outlives the
    last process by seconds) to the display of the process that started it: a run that killed
    its own Xvfb would leave the next run, or a concurrent one, a session without a display
    (D3D12CreateDevice then fails with DXGI_ERROR_UNSUPPORTED). $TOPKSPEC_DIRECTML_DISPLAY
    names another display instead. `command` starts the X server (Xvfb, or a bundle's)."""

    def __init__(self, command: list[str] | None = None):
        self.name = None
        self.command = command or ["Xvfb"]

    @staticmethod
    def record_path():
        from topkspec.directml.windows.environment import cache_dir

        return cache_dir() / "display.json"

    @classmethod
    def running(cls) -> str | None:
        """The shared Xvfb's display when it is running."""
        try:
            info = json.loads(cls.record_path().read_text())
            pid, number = int(info["pid"]), int(info["display"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if _alive(pid) and os.path.exists(f"/tmp/.X11-unix/X{number}"):
            return f":{number}"
        return None

    def start(self) -> str:
        given = os.environ.get("TOPKSPEC_DIRECTML_DISPLAY")
        if given:
            self.name = given
            return given
        self.name = self.running()
        if self.name:
            return self.name
        import fcntl

        path = self.record_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.name = self.running()  # another run may have started it meanwhile
            if not self.name:
                self.name = self._launch(path, self.command)
        return self.name

    @staticmethod
    def _launch(path, command) -> str:
        import select

        read_end, write_end = os.pipe()
        try:
            process = subprocess.Popen(
                [*command, "-displayfd", str(write_end), "-nolisten", "tcp", "-screen", "0", "640x480x24"],
                pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True)
        finally:
            os.close(write_end)
        number = b""
        deadline = time.monotonic() + 30
        try:
            while not number.endswith(b"\n") and time.monotonic() < deadline:
                ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    break
                chunk = os.read(read_end, 64)
                if not chunk:
                    break
                number += chunk
        finally:
            os.close(read_end)
        if not number.strip():
            process.kill()
            raise WorkerStartError("Xvfb did not start (no display number within 30 s)")
        path.write_text(json.dumps({"pid": process.pid, "display": int(number.strip())}) + "\n")
        return ":" + number.decode().strip()

    def stop(self) -> None:
        """The shared display stays up for the next run."""
