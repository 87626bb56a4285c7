"""Where a portable DirectML bundle (directml_tools.bundle.make) is and what it carries: the stack reads these
when the targets run from a bundle instead of an installed Wine."""
from __future__ import annotations

import os
from pathlib import Path

from topkspec.directml.worker.build import source_digest
from topkspec.directml.cache import load_state


def bundle_dir() -> Path | None:
    """The unpacked bundle a run uses: $TOPKSPEC_DIRECTML_BUNDLE, else the one setup unpacked."""
    given = os.environ.get("TOPKSPEC_DIRECTML_BUNDLE")
    if given:
        return Path(given).resolve()
    path = load_state().get("bundle")
    return Path(path) if path else None


def bundle_versions(folder: Path) -> dict:
    """The bundle's versions.txt: {"directml", "wine", "vkd3d", "worker_source", ...}."""
    try:
        text = (folder / "versions.txt").read_text()
    except OSError:
        return {}
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def bundle_program(folder: Path, exe: str, source_key: str, program: str) -> tuple[Path | None, str]:
    """(a worker the bundle carries, "") when it was built from this checkout's source, else
    (None, why). `program` names the source in build.PROGRAMS."""
    path = next((p for p in (folder / "directml" / exe, folder / "ort" / exe) if p.is_file()), None)
    if path is None:
        return None, f"the bundle {folder} has no {exe}"
    carried = bundle_versions(folder).get(source_key)
    if carried != source_digest(program):
        return None, (f"the bundle's {exe} was built from another {program}.c ({carried}; this checkout: "
                      f"{source_digest(program)}): make the bundle again from this checkout")
    return path, ""


# -- everything together ----------------------------------------------------------------------
