"""Building the workers from source: topk_worker.exe (worker.c, on DirectML.dll) and
topk_ort_worker.exe (ort_worker.c, on ONNX Runtime's onnxruntime.dll), both including
worker_io.h, with mingw-w64 or Zig's cc. Each build lands in the cache folder under a hash of
its source, the header and the compiler, and state.json records it. Standard library only."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from topkspec.directml.cache import (WORKER_EXE, WORKER_SOURCE, cache_dir, first_output_line,
                                             load_state, save_state)

WORKER_IO = WORKER_SOURCE.parent / "worker_io.h"  # included by both workers
# The programs setup builds: (source, executable, libraries), by their key in state.json.
PROGRAMS = {
    "worker": (WORKER_SOURCE, WORKER_EXE, ("-ld3d12", "-ldxgi")),
    "ort_worker": (WORKER_SOURCE.parent / "ort_worker.c", "topk_ort_worker.exe", ()),
}


def find_compiler() -> tuple[list[str] | None, str]:
    """(command prefix that compiles C for x86_64 Windows, its name); (None, what is missing)."""
    mingw = shutil.which("x86_64-w64-mingw32-gcc")
    if mingw:
        return [mingw], "mingw-w64 " + first_output_line([mingw, "-dumpversion"])
    try:
        import importlib.util

        if importlib.util.find_spec("ziglang") is not None:
            return [sys.executable, "-m", "ziglang", "cc", "-target", "x86_64-windows-gnu"], "zig cc (ziglang)"
    except (ImportError, ValueError):
        pass
    return None, ("no compiler for the worker: install mingw-w64 (x86_64-w64-mingw32-gcc) or "
                  "`pip install ziglang`, or run `topkspec directml setup`")


def source_digest(program: str = "worker") -> str:
    """A hash of a worker's source and the header it includes."""
    digest = hashlib.sha256(PROGRAMS[program][0].read_bytes())
    digest.update(WORKER_IO.read_bytes())
    return digest.hexdigest()[:16]


def worker_hash(compiler_name: str, program: str = "worker") -> str:
    return hashlib.sha256((source_digest(program) + compiler_name).encode()).hexdigest()[:16]


def built_worker(program: str = "worker") -> Path | None:
    """The worker built from this source, when there is one (any compiler)."""
    state = load_state()
    path = state.get(program)
    if path and os.path.isfile(path) and state.get(f"{program}_source") == source_digest(program):
        return Path(path)
    return None


def build_worker(log=None, program: str = "worker") -> Path:
    """Compiles a worker's source into the cache (once per source and compiler) and records it."""
    source, exe_name, libraries = PROGRAMS[program]
    command, name = find_compiler()
    if command is None:
        raise RuntimeError(name)
    folder = cache_dir() / "worker" / worker_hash(name, program)
    exe = folder / exe_name
    if not exe.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        if log:
            log(f"building {exe_name} with {name}: {exe}")
        tmp = folder / (exe_name + ".tmp.exe")
        out = subprocess.run(command + ["-O1", "-o", str(tmp), str(source), *libraries],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"building {exe_name} with {name} failed:\n{out.stderr.strip()}")
        os.replace(tmp, exe)
    elif log:
        log(f"{exe_name} already built with {name}: {exe}")
    state = load_state()
    state.update({program: str(exe), f"{program}_source": source_digest(program), "compiler": name})
    save_state(state)
    return exe


def missing_worker(program: str = "worker") -> str:
    command, why = find_compiler()
    name = PROGRAMS[program][1]
    return f"{name} is not built for this source: run `topkspec directml setup`" + ("" if command else f" ({why})")
