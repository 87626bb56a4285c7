"""A target of DirectML's stack (directml, onnxruntime-directml) for a test, or a skip saying why
it cannot run here; when the target is required (required_targets: CI names it in
TOPKSPEC_REQUIRE_TARGETS) a failure instead, so a broken setup cannot pass."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import required_targets  # noqa: E402


def need(target):
    """`target` when it is available, else a skip (or, when required, a failure) naming why."""
    ok, why = target.available()
    if not ok:
        target.close()
        if target.name in required_targets.required():
            pytest.fail(f"the {target.name} target is required here ({required_targets.VARIABLE}) but unavailable: {why}")
        pytest.skip(f"the {target.name} target is unavailable: {why}")
    return target
