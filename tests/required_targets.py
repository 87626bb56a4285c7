"""The targets a test run must have, so that a runtime that stops installing or importing fails
the run instead of turning its tests into skips.

TOPKSPEC_REQUIRE_TARGETS names them, comma-separated (CI sets it in .ci/run); the older
TOPKSPEC_REQUIRE_DIRECTML=1 adds directml and onnxruntime-directml. Without either, nothing is required (a developer's
machine runs what it has)."""
from __future__ import annotations

import os

VARIABLE = "TOPKSPEC_REQUIRE_TARGETS"


def required(environ=os.environ) -> list[str]:
    """The names of the required targets, in the order given, without repeats."""
    names = [name.strip() for name in environ.get(VARIABLE, "").split(",") if name.strip()]
    if environ.get("TOPKSPEC_REQUIRE_DIRECTML") == "1":
        names += ["directml", "onnxruntime-directml"]
    return list(dict.fromkeys(names))


def unavailable(names, make) -> list[str]:
    """'name: why' for each of `names` that `make(name)` cannot give as an available target
    (make raises for a name that is no target)."""
    missing = []
    for name in names:
        try:
            target = make(name)
        except Exception as exc:  # an unknown name, or a plugin that fails to load
            missing.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        try:
            ok, why = target.available()
        finally:
            target.close()
        if not ok:
            missing.append(f"{name}: {why}")
    return missing
