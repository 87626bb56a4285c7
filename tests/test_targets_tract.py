"""The `tract` target: exact results against the reference, tract's own refusals as Rejected,
the shipped known list (an out-of-range axis aborts the process: shown in a worker), and repro
programs in tract's own API that run.

Nothing here hands tract a sequence holding NaN in this process: a long one aborts it (the
repro tests below show that bug in a child process)."""
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tract")
from topkspec import reference_topk  # noqa: E402
from topkspec.known import load_known  # noqa: E402
from topkspec.properties import failures  # noqa: E402
from topkspec.spec import Case, dtypes  # noqa: E402
from topkspec.targets.base import Rejected  # noqa: E402
from topkspec.targets.runtimes.tract import TractTarget  # noqa: E402
from target_checks import recorded_report, standalone_repro  # noqa: E402


@pytest.fixture(scope="module")
def target():
    made = TractTarget()
    ok, reason = made.available()
    if not ok:
        pytest.skip(reason)
    yield made
    made.close()


def check_exact(target, case, x):
    """The target's result equals the reference bit for bit, with int64 indices."""
    assert target.supports(case) is None, target.supports(case)
    values, indices = target.run(case, x)
    want_values, want_indices = reference_topk(x, axis=case.norm_axis, k=case.k,
                                               largest=case.largest if case.op != "TOP_K" else True)
    assert values.dtype == want_values.dtype, f"values dtype: expected {want_values.dtype}, got {values.dtype}"
    assert indices.dtype == np.int64, f"indices dtype: expected int64, got {indices.dtype}"
    bits = f"u{want_values.dtype.itemsize}"
    assert np.array_equal(values.view(bits), want_values.view(bits)), \
        f"values: expected {want_values.tolist()}, got {values.tolist()}"
    assert np.array_equal(indices, want_indices), f"indices: expected {want_indices.tolist()}, got {indices.tolist()}"


TIES = np.array([[1, -0.0, 0.0, 1, 2, 0.0], [5, 5, 5, -1, 5, 5]], dtype=np.float32)


@pytest.mark.parametrize("largest", [True, False])
def test_ties_and_signed_zeros_come_in_index_order(target, largest):
    check_exact(target, Case("onnx:24", "TopK", "float32", (2, 6), -1, 5, largest=largest, index_dtype="int64"),
                TIES)


@pytest.mark.parametrize("largest", [True, False])
def test_a_non_last_axis(target, largest):
    x = np.random.default_rng(3).integers(-4, 4, size=(5, 3, 4)).astype(np.float64)
    check_exact(target, Case("onnx:24", "TopK", "float64", (5, 3, 4), 0, 3, largest=largest, index_dtype="int64"), x)
    check_exact(target, Case("onnx:11", "TopK", "float64", (5, 3, 4), -2, 2, largest=largest, index_dtype="int64"), x)


@pytest.mark.parametrize("dtype", ["float16", "int8", "int64", "uint16", "uint64"])
def test_extremes_of_each_kind_of_type(target, dtype):
    if dtypes.is_float(dtype):
        x = np.array([np.inf, -np.inf, 0.5, -2.0, 65504.0, 0.0], dtype=dtype)
    else:
        info = np.iinfo(dtype)
        x = np.array([info.max, info.min, 0, 1, info.max - 1, info.min + 1], dtype=dtype)
    for largest in (True, False):
        check_exact(target, Case("onnx:24", "TopK", dtype, (6,), 0, 6, largest=largest, index_dtype="int64"), x)


def test_sorted_0_comes_back_sorted_and_directml_cases_run_lowered(target):
    x = np.array([[3, 1, 3, 2], [0, 7, 7, 1]], dtype=np.int32)
    check_exact(target, Case("onnx:11", "TopK", "int32", (2, 4), 1, 3, sorted=False, index_dtype="int64"), x)
    check_exact(target, Case("dml:5.0", "TOP_K1", "int32", (2, 4), 1, 2, largest=False, index_dtype="int64"), x)
    check_exact(target, Case("dml:3.1", "TOP_K", "int32", (2, 4), 1, 2, largest=False, index_dtype="int64"), x)


def test_newest_opset_it_loads_is_its_profile(target):
    assert target.default_profile == "onnx:24"
    assert target.version().startswith("tract 0.") and target.version().endswith("(CPU)")


def test_tracts_own_refusal_is_rejected(target):
    case = Case("onnx:24", "TopK", "float32", (3,), 0, -1, index_dtype="int64")
    with pytest.raises(Rejected, match="tract: TractError"):
        target.run(case, np.array([3, 1, 2], dtype=np.float32))


def test_bfloat16_is_unsupported(target):
    bf16 = Case("onnx:24", "TopK", "bfloat16", (3,), 0, 1, index_dtype="int64")
    assert "no bfloat16" in target.supports(bf16)


def test_it_validates_by_onnxs_contract():
    """ONNX's TopK refuses K and axes out of range: the invalid group holds tract to it."""
    assert TractTarget.validates


# Each shipped known entry, by (rule, profile), and a check that its deviation is real.
def _k_above_the_axis_size_padded(target):
    case = Case("onnx:24", "TopK", "float32", (3,), 0, 5, index_dtype="int64")
    values, indices = target.run(case, np.array([3, 1, 2], dtype=np.float32))
    assert values.tolist() == [3, 2, 1, 0, 0] and indices.tolist() == [0, 2, 1, 0, 0], (values, indices)


def _k_zero_empty(target):
    case = Case("onnx:24", "TopK", "float32", (3,), 0, 0, index_dtype="int64")
    values, _ = target.run(case, np.array([3, 1, 2], dtype=np.float32))
    assert values.shape == (0,)


def _axis_out_of_range_aborts(_target):
    """Handed as drawn: the worker process reports the abort as a crash."""
    from topkspec.targets.isolation import IsolatedTarget, TargetCrashed

    isolated = IsolatedTarget("tract", timeout=60)
    try:
        for axis in (1, -2):
            case = Case("onnx:24", "TopK", "float32", (3,), axis, 1, index_dtype="int64")
            assert isolated.supports(case) is None
            with pytest.raises(TargetCrashed):
                isolated.run(case, np.array([3, 1, 2], dtype=np.float32))
    finally:
        isolated.close()


def _nan_wrong_value(_target):
    """Shown in a child process by test_repro_shows_the_nan_order_bug below."""


def _nan_aborts(_target):
    """Shown in a child process by test_repro_shows_the_nan_abort below."""


def _topk1_refused(target):
    case = Case("onnx:1", "TopK", "float32", (3,), 0, 1, index_dtype="int64")
    with pytest.raises(Rejected, match="Wrong input number"):
        target.supports(case)
    with pytest.raises(Rejected, match="Wrong input number"):
        target.run(case, np.array([3, 1, 2], dtype=np.float32))


KNOWN_CHECKS = {("out.valid_accepted", "onnx:1"): _topk1_refused, ("onnx.k.max", None): _k_above_the_axis_size_padded,
                ("onnx.k.positive", None): _k_zero_empty, ("out.invalid_rejected", None): _axis_out_of_range_aborts,
                ("out.nan.unspecified", None): _nan_wrong_value, ("out.valid_accepted", None): _nan_aborts}


def test_every_known_entry_is_real(target):
    entries = load_known(None, "tract")
    assert entries, "tract ships a known list"
    for entry in entries:
        assert entry.reason and entry.url, entry
        check = KNOWN_CHECKS.get((entry.rule, entry.profile))
        assert check, f"no test shows {entry.describe()}"
        check(target)


# -- repro programs ------------------------------------------------------------------------------


def repro(tmp_path, case, x, *, rule="out.exact", failure_class=failures.WRONG_RESULT, name="r"):
    """Writes the report of a recorded failure and runs its repro.py: (exit code, output, source)."""
    folder = recorded_report(tmp_path, "tract", case, x, rule=rule, failure_class=failure_class, name=name)
    source = standalone_repro(folder)
    done = subprocess.run([sys.executable, os.path.join(folder, "repro.py")], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "RUST_BACKTRACE": "0"})
    return done.returncode, done.stdout + done.stderr, source


def test_repro_passes_where_tract_is_right(tmp_path):
    case = Case("onnx:24", "TopK", "float32", (2, 6), 1, 4, largest=False, index_dtype="int64")
    code, output, source = repro(tmp_path, case, TIES)
    assert "tract.onnx().load(path).into_model().into_runnable()" in source, source
    assert code == 0, f"tract is right here: expected exit 0, got {code}\n{output}"


def test_repro_shows_the_nan_order_bug(tmp_path):
    """x = [1, nan, 3], K = 1: the answer is NaN or 3 whatever NaN's place; tract returns 1."""
    case = Case("onnx:24", "TopK", "float32", (3,), 0, 1, index_dtype="int64")
    code, output, _ = repro(tmp_path, case, np.array([1, np.nan, 3], dtype=np.float32), rule="out.nan.unspecified")
    assert code == 1, f"expected exit 1 (the bug), got {code}: if tract now gets it right, update the report\n{output}"
    assert "expected the non-NaN values [3.0]" in output, output


def test_repro_shows_the_nan_abort(tmp_path):
    """21 values holding one NaN: Rust's sort panics on the comparator, the process aborts."""
    x = np.arange(21, dtype=np.float32)
    x[5] = np.nan
    case = Case("onnx:24", "TopK", "float32", (21,), 0, 1, index_dtype="int64")
    code, output, _ = repro(tmp_path, case, x, rule="out.valid_accepted", failure_class=failures.CRASH)
    assert code == 1 and "the process died" in output, f"expected the crash (exit 1), got {code}\n{output}"
