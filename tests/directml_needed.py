"""The directml target for a test, or a skip saying why it cannot run here; when directml is
required (required_targets: CI names it in TOPKSPEC_REQUIRE_TARGETS) a failure instead, so a
broken setup cannot pass."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import required_targets  # noqa: E402

REQUIRED = "directml" in required_targets.required()


def need(target):
    """`target` when it is available, else a skip (or, when required, a failure) naming why."""
    ok, why = target.available()
    if not ok:
        target.close()
        if REQUIRED:
            pytest.fail(f"the directml target is required here ({required_targets.VARIABLE}) but unavailable: {why}")
        pytest.skip(f"the directml target is unavailable: {why}")
    return target
