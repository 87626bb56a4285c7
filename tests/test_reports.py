"""Bug reports: the side-by-side table, the relation a repro checks, and repro.py for ONNX Runtime."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from topkspec import failures
from topkspec.failures import Violation
from topkspec.reports import relation_of, side_by_side, write_report
from topkspec.runner import Failure, RunResult
from topkspec.spec import Case


def _failure(case, x, outputs, violation, target="onnxruntime", calls=None):
    return Failure(target=target, group="valid", violation=violation, case=case, x=x,
                   calls=calls or [(case, x)], outputs=outputs)


def _result(profile):
    return RunResult(target="onnxruntime", version="test", profile=profile, settings_profile="ci",
                     seed=3, max_examples=10)


def _repro(folder):
    return subprocess.run([sys.executable, os.path.join(folder, "repro.py")], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("failure_class, rule, relation", [
    (failures.CRASH, "out.valid_accepted", "crash"),
    (failures.HANG, "out.valid_accepted", "hang"),
    (failures.REJECTS_VALID, "out.valid_accepted", "accept"),
    (failures.ACCEPTS_INVALID, "out.invalid_rejected", "reject"),
    (failures.NONDETERMINISTIC, "out.deterministic", "deterministic"),
    (failures.WRONG_RESULT, "out.prefix", "prefix"),
    (failures.WRONG_RESULT, "out.axis_moves", "axis_moves"),
    (failures.WRONG_RESULT, "out.ties.index_order", "result"),
])
def test_each_failure_kind_has_its_repro_relation(failure_class, rule, relation):
    case = Case("dml:5.0", "TOP_K1", "float32", (2,), 0, 1)
    failure = _failure(case, np.zeros(2, np.float32), [None], Violation(rule, "m", failure_class=failure_class))
    assert relation_of(failure) == relation, f"{failure_class}/{rule}: expected {relation}, got {relation_of(failure)}"


def test_the_table_marks_only_the_differing_positions():
    case = Case("dml:5.0", "TOP_K1", "float32", (2, 3), 1, 2)
    expected = (np.array([[3, 2], [9, 8]], np.float32), np.array([[0, 1], [2, 1]], np.uint32))
    actual = (np.array([[3, 2], [9, 8]], np.float32), np.array([[0, 1], [2, 0]], np.uint32))
    table = side_by_side(case, "expected", expected, "actual", actual)
    rows = [line for line in table.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 2, f"only sequence 1 differs, so only its rows are shown:\n{table}"
    assert rows[1].endswith("**≠** |") and not rows[0].endswith("**≠** |"), f"marks:\n{table}"
    assert "-0.0" in side_by_side(case.with_(shape=(1, 2), k=1), "e", (np.array([[-0.0]], np.float32),
                                  np.array([[0]], np.uint32)), "a", (np.array([[0.0]], np.float32),
                                                                     np.array([[1]], np.uint32))), \
        "a negative zero must show its sign"


def test_onnxruntime_repro_builds_the_model_inline_and_checks_the_result(tmp_path):
    # A wrong result recorded for a case ONNX Runtime computes right: the repro must say fixed (0).
    case = Case("onnx:11", "TopK", "float32", (2, 3), -1, 2, index_dtype="int64")
    x = np.array([[1, 5, 5], [2, 0, 7]], np.float32)
    wrong = (np.array([[5, 5], [7, 2]], np.float32), np.array([[2, 1], [2, 0]], np.int64))
    violation = Violation("out.ties.index_order", "ties out of order", expected=1, actual=2)
    folder = write_report(_failure(case, x, [wrong], violation), _result("onnx:11"), str(tmp_path),
                          target_spec="onnxruntime")
    source = open(os.path.join(folder, "repro.py")).read()
    assert "import onnxruntime" in source and "topkspec" not in source.split('"""', 2)[2], \
        "the ONNX Runtime repro must be standalone (numpy, onnx, onnxruntime)"
    done = _repro(folder)
    assert done.returncode == 0, f"ONNX Runtime is right here: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"
    report = open(os.path.join(folder, "report.md")).read()
    assert "| 0 | 0 | 5.0 | 1 | 5.0 | 2 | **≠** |" in report, f"side-by-side table:\n{report}"
    assert "ONNX TopK operator, versions 11, 10 and 1 (`001_" in report, f"sources by title:\n{report}"


def test_onnxruntime_repro_reproduces_k_zero_being_accepted(tmp_path):
    # ONNX Runtime's CPU provider returns an empty result for K=0, which onnx.k.positive forbids.
    case = Case("onnx:11", "TopK", "float32", (3,), 0, 0, index_dtype="int64")
    violation = Violation(("out.invalid_rejected", "onnx.k.positive"), "K=0 accepted",
                          failure_class=failures.ACCEPTS_INVALID)
    failure = _failure(case, np.arange(3, dtype=np.float32), [None], violation)
    folder = write_report(failure, _result("onnx:11"), str(tmp_path), target_spec="onnxruntime")
    done = _repro(folder)
    assert done.returncode == 1, f"expected exit 1 (K=0 accepted), got {done.returncode}\n{done.stdout}{done.stderr}"
    data = json.load(open(os.path.join(folder, "case.json")))
    assert data["calls"][0]["k"] == 0 and data["relation"] == "reject", f"case.json: {data}"
    assert os.path.basename(folder).startswith("01-onnx-k-positive"), f"folder name: {folder}"


def test_bfloat16_inputs_survive_the_npz(tmp_path):
    import ml_dtypes

    case = Case("onnx:24", "TopK", "bfloat16", (3,), 0, 1, index_dtype="int64")
    x = np.array([1.5, -2, 3], dtype=ml_dtypes.bfloat16)
    violation = Violation("out.valid_accepted", "refused", failure_class=failures.REJECTS_VALID)
    folder = write_report(_failure(case, x, [None], violation, target="reference"), _result("onnx:24"),
                          str(tmp_path), target_spec="reference")
    stored = np.load(os.path.join(folder, "inputs.npz"))["x0"].view(ml_dtypes.bfloat16)
    assert stored.tolist() == x.tolist(), f"x0: expected {x.tolist()}, got {stored.tolist()}"
    done = _repro(folder)
    assert done.returncode == 0, f"the reference accepts bfloat16: expected exit 0, got {done.returncode}\n{done.stderr}"


def test_a_nan_policy_repro_reproduces_and_passes_once_fixed(tmp_path):
    from topkspec.runner import RunConfig, run_fuzz

    planted = os.path.join(os.path.dirname(os.path.abspath(__file__)), "planted_bugs.py")
    result = run_fuzz(RunConfig(target=f"{planted}:nan_breaks_order", max_examples=60, seed=0,
                                settings_profile="ci", groups=("nan",), report_dir=str(tmp_path)))
    rules = [f.rule for f in result.failures]
    assert rules == ["out.nan.unspecified"], f"failures: expected out.nan.unspecified, got {rules}"
    folder = result.failures[0].report_dir
    done = _repro(folder)
    assert done.returncode == 1, f"against the bug: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    source = open(os.path.join(folder, "repro.py")).read()
    with open(os.path.join(folder, "repro.py"), "w") as handle:
        handle.write(source.replace(":nan_breaks_order", ":CORRECT"))
    done = _repro(folder)
    assert done.returncode == 0, f"against the fix: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"
