"""`topkspec env setup NAME`: a Python environment of its own for a target whose runtime cannot
share the suite's (topkspec.targets.foreign says where it lives and how a worker uses it).

NAME is `jittor` (jittor 1.3.11.0, which brings numpy below 2) or `onnxruntime@X.Y` (that
version of onnxruntime). Setting up makes a virtual environment under the environments folder
with the interpreter that runs topkspec (or `--python`), installs the packages with pip, and
starts the target's worker once, which for jittor compiles and caches its core.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time

from topkspec.errors import UsageError
from topkspec.targets.foreign import environments_dir, interpreter_in

PACKAGES = {"jittor": ["jittor==1.3.11.0"]}


def packages_for(name: str) -> list[str]:
    if name in PACKAGES:
        return PACKAGES[name]
    found = re.fullmatch(r"onnxruntime@(\d+\.\d+)(\.\d+)?", name)
    if found:
        return [f"onnxruntime=={found.group(1)}{found.group(2) or '.*'}"]
    raise UsageError(f"topkspec env setup: no environment {name!r}: give jittor or onnxruntime@X.Y (onnxruntime@1.31)")


def setup_environment(name: str, *, python: str | None = None, out=sys.stdout) -> int:
    """Make (or complete) the environment `name` and check its target starts; 0 when it does."""
    packages = packages_for(name)
    folder = environments_dir() / name
    started = time.monotonic()
    if not interpreter_in(folder).is_file():
        print(f"making {folder} with {python or sys.executable}", file=out)
        subprocess.run([python or sys.executable, "-m", "venv", str(folder)], check=True)
    print(f"installing {' '.join(packages)}", file=out)
    done = subprocess.run([str(interpreter_in(folder)), "-m", "pip", "install", "--quiet", *packages])
    if done.returncode:
        print(f"topkspec env setup: pip install {' '.join(packages)} failed (exit {done.returncode})", file=out)
        return 1
    from topkspec.targets.registry import get_target

    target = get_target(name)
    try:
        print(f"starting the {name} worker (jittor compiles its core the first time: minutes)"
              if name == "jittor" else f"starting the {name} worker", file=out)
        usable, why = target.available()
        if not usable and name == "jittor":  # a first build of its utilities asks for a second start
            target.close()
            usable, why = target.available()
        print(f"{name}: {target.version() if usable else why} ({time.monotonic() - started:.0f} s)", file=out)
    finally:
        target.close()
    return 0 if usable else 1
