"""`topkspec directml setup --bundle FILE`: a portable bundle (directml.bundle.make) unpacked into the cache
and made the stack the targets run on; a plain setup forgets it again."""
from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from topkspec.directml.windows import environment as env
from topkspec.directml_tools.setup.check import step_check, step_check_ep
from topkspec.directml_tools.setup.shell import Log, SetupError


def step_bundle(log: Log, file: str) -> Path:
    """Unpacks a portable bundle (`topkspec directml bundle`) into the cache and makes it the
    stack the targets run on: its Wine, Xvfb, DirectML.dll and workers, the host's Vulkan driver."""
    import tarfile

    log.section(f"the bundle {file}")
    try:
        with tarfile.open(file, "r:*") as archive:
            names = archive.getnames()
            top = {name.split("/", 1)[0] for name in names}
            if len(top) != 1 or f"{next(iter(top))}/run" not in names:
                raise SetupError(f"{file} is not a topkspec DirectML bundle (one folder with a run script)")
            unpacked = env.cache_dir() / "bundle" / "unpacking"
            shutil.rmtree(unpacked, ignore_errors=True)
            archive.extractall(unpacked, filter="data")
    except (OSError, tarfile.TarError) as exc:
        raise SetupError(f"cannot read {file}: {exc}") from None
    inner = unpacked / next(iter(top))
    bundle_id = (inner / "bundle-id").read_text().strip() if (inner / "bundle-id").is_file() else "unknown"
    folder = env.cache_dir() / "bundle" / bundle_id
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(inner, folder)
    shutil.rmtree(unpacked, ignore_errors=True)
    state = env.load_state()
    state["bundle"] = str(folder)
    env.save_state(state)
    log(f"unpacked into {folder}; the targets run from it (TOPKSPEC_DIRECTML_BUNDLE=DIR names another)")
    return folder


def forget_bundle() -> None:
    """A setup of the installed stack replaces a bundle setup chose before."""
    state = env.load_state()
    if state.pop("bundle", None):
        env.save_state(state)


def setup_from_bundle(log: Log, file: str, adapter: str | None) -> int:
    """`topkspec directml setup --bundle FILE`: unpack it, then check it as setup checks its own stack."""
    if not sys.platform.startswith("linux"):
        log.stream.write("topkspec directml setup: failed: the bundle runs on Linux\n")
        return 1
    try:
        folder = step_bundle(log, file)
        step_check(log, adapter)
        if any((folder / sub / "onnxruntime.dll").is_file() for sub in ("directml", "ort")):
            step_check_ep(log)
    except SetupError as exc:
        log.stream.write(f"topkspec directml setup: failed: {exc}\n")
        return 1
    log.stream.write(f"topkspec directml setup: done in {time.monotonic() - log.started:.0f} s; the directml "
                     f"target runs from the bundle\n")
    return 0
