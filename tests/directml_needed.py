"""A target of DirectML's stack (directml, onnxruntime-directml) for a test, or a skip saying why it cannot run here; with
TOPKSPEC_REQUIRE_DIRECTML=1 (CI sets it) a failure instead, so a broken setup cannot pass."""
import os

import pytest

REQUIRED = os.environ.get("TOPKSPEC_REQUIRE_DIRECTML") == "1"


def need(target):
    """`target` when it is available, else a skip (or, when required, a failure) naming why."""
    ok, why = target.available()
    if not ok:
        target.close()
        if REQUIRED:
            pytest.fail(f"TOPKSPEC_REQUIRE_DIRECTML=1 but the {target.name} target is unavailable: {why}")
        pytest.skip(f"the {target.name} target is unavailable: {why}")
    return target
