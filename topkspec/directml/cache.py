"""The cache folder that `topkspec directml setup` fills (the layout: environment.py) and its
state.json, what setup chose; the worker's source and name. Standard library only: the bottom of
the DirectML stack, which windows/environment.py, worker/build.py and windows/bundle_stack.py all read."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent  # the DirectML stack's package
WORKER_SOURCE = HERE / "worker" / "worker.c"
WORKER_EXE = "topk_worker.exe"
IS_WINDOWS = os.name == "nt"


def cache_dir() -> Path:
    given = os.environ.get("TOPKSPEC_DIRECTML_CACHE")
    if given:
        return Path(given)
    if IS_WINDOWS:
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return Path(base) / "topkspec" / "directml"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "topkspec" / "directml"


def state_path() -> Path:
    return cache_dir() / "state.json"


def load_state() -> dict:
    try:
        return json.loads(state_path().read_text())
    except (OSError, ValueError):
        return {}


def save_state(state: dict) -> None:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def first_output_line(command) -> str:
    """The first line a command prints (stdout, else stderr); "?" when it cannot run."""
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "?"
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else "?"
