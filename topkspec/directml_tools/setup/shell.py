"""What the setup steps share: the error a step that cannot be done raises, the log of the
steps, and running a command with its output kept for the error."""
from __future__ import annotations

import subprocess
import sys
import time


class SetupError(RuntimeError):
    """A step that cannot be done here; the message says what to do."""


class Log:
    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.step = 0
        self.started = time.monotonic()

    def section(self, text: str) -> None:
        self.step += 1
        self.stream.write(f"[{self.step}] {text}\n")
        self.stream.flush()

    def __call__(self, text: str) -> None:
        self.stream.write(f"    {text}\n")
        self.stream.flush()


def _run(command, log: Log, *, env_vars=None, check=True, quiet=False, timeout=None) -> subprocess.CompletedProcess:
    if not quiet:
        log("$ " + " ".join(str(c) for c in command))
    out = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env_vars, timeout=timeout)
    if check and out.returncode != 0:
        tail = "\n".join((out.stderr or out.stdout).strip().splitlines()[-15:])
        raise SetupError(f"{' '.join(str(c) for c in command[:3])} ... failed (exit {out.returncode}):\n{tail}")
    return out


