"""A user's function gets every invalid argument as drawn: an invalid axis stays invalid, in
the run and in repro.py, so refusing it is a pass and only accepting it is a finding. A valid
negative ONNX axis is lowered to 0..rank-1 (DirectML semantics, rule lower.axis)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from topkspec.fuzz import RunConfig, run_fuzz
from topkspec.spec import Case
from topkspec.targets.base import CallableTarget

PLANTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "planted_bugs.py")


def test_a_plain_function_gets_a_valid_axis_lowered_and_an_invalid_one_as_drawn():
    seen = []

    def topk(x, *, axis, k, largest):
        seen.append(axis)
        raise ValueError("refused")

    target = CallableTarget(topk)
    for axis in (-2, -1, 1, -5):  # invalid, valid negative (lowered to 0), invalid positive and negative
        with pytest.raises(Exception):
            target.run(Case("onnx:11", "TopK", "float32", (1,), axis, 1, index_dtype="int64"),
                       np.zeros(1, np.float32))
    assert seen == [-2, 0, 1, -5]


def _axis_failures(target, profile="onnx:11", seed=1):
    result = run_fuzz(RunConfig(target=target, profile=profile, max_examples=60, seed=seed, settings="ci",
                                groups=("invalid",), report_dir=None, isolate=False))
    return [f for f in result.failures if f.rule == "onnx.axis.range"], result


def test_a_function_that_refuses_an_invalid_axis_is_not_blamed_for_it():
    failures, result = _axis_failures(f"{PLANTED}:CORRECT")
    assert not failures and result.ok, [f.violation.message for f in result.failures]


def test_a_function_that_normalises_an_invalid_axis_is_reported_and_its_repro_holds_the_drawn_axis(tmp_path):
    result = run_fuzz(RunConfig(target=f"{PLANTED}:wraps_the_axis", profile="onnx:11", max_examples=60, seed=1,
                                settings="ci", groups=("invalid",), report_dir=str(tmp_path), isolate=False))
    failures = [f for f in result.failures if f.rule == "onnx.axis.range"]
    assert failures, [f.violation.message for f in result.failures]
    folder = failures[0].report_dir
    repro = os.path.join(folder, "repro.py")
    source = open(repro).read()
    assert "axis=axis + x.ndim if -x.ndim <= axis < 0 else axis," in source, source
    done = subprocess.run([sys.executable, repro], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    fixed = os.path.join(folder, "fixed.py")
    with open(fixed, "w") as handle:
        handle.write(source.replace("module.wraps_the_axis", "module.CORRECT"))
    done = subprocess.run([sys.executable, fixed], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("fixed: refused"), done.stdout + done.stderr
