"""What DirectML was observed to do where it and the documents differ. Standard library only.

observations.json beside this file is written by `topkspec directml compare --observations
topkspec/spec/observations.json` (the fixed descriptor set through CreateOperator):
per rule, which DirectML version, on which adapter and feature level, did what with which
descriptors. The spec's rules read it (`Rule.observations`, and "observations" in the export).

`PATH` is that file as a pathlib.Path; it is made on first use, and the module reads the file
through os.path, so that the export (made by the first spec.validate) does not load pathlib.
"""
from __future__ import annotations

import functools
import json
import os

_PATH = os.path.join(os.path.dirname(os.path.realpath(__file__)), "observations.json")


def __getattr__(name):
    if name == "PATH":
        from pathlib import Path

        globals()["PATH"] = path = Path(_PATH)
        return path
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=None)
def load() -> dict:
    try:
        # PATH once made (or set by a caller), as Path.read_text() read it: the locale's encoding
        with open(globals().get("PATH", _PATH)) as file:
            return json.loads(file.read())
    except (OSError, ValueError):
        return {"rules": {}}


def observations_for(rule_id: str) -> list[dict]:
    """The observations recorded for a rule (a fresh copy; empty when there are none)."""
    recorded = load().get("rules", {}).get(rule_id, [])
    if type(recorded) is list and not recorded:
        return []  # what the copy below gives, for the many rules without observations
    return json.loads(json.dumps(recorded))
