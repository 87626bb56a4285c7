"""What DirectML was observed to do where it and the documents differ. Standard library only.

observations.json beside this file is written by `topkspec directml compare --observations
topkspec/spec/observations.json` (the fixed descriptor set through CreateOperator):
per rule, which DirectML version, on which adapter and feature level, did what with which
descriptors. The spec's rules read it (`Rule.observations`, and "observations" in the export).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

PATH = Path(__file__).resolve().parent / "observations.json"


@functools.lru_cache(maxsize=None)
def load() -> dict:
    try:
        return json.loads(PATH.read_text())
    except (OSError, ValueError):
        return {"rules": {}}


def observations_for(rule_id: str) -> list[dict]:
    """The observations recorded for a rule (a fresh copy; empty when there are none)."""
    return json.loads(json.dumps(load().get("rules", {}).get(rule_id, [])))
