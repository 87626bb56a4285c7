"""The paddle target (paddle.topk on the CPU): exact results where Paddle is right, its
refusals as Rejected, each deviation its known list declares shown to be real, and repro.py
programs that run in Paddle's own API."""
import os
import subprocess
import sys

import numpy as np
import pytest
from slow import slow

from topkspec import reference_topk
from topkspec.spec import Case, dtypes

import importlib.util  # noqa: E402

if importlib.util.find_spec("paddle") is None:
    pytest.skip("needs paddlepaddle (pip install paddlepaddle)", allow_module_level=True)
from topkspec.targets.runtimes.paddle import import_paddle  # noqa: E402

import_paddle()  # through the adapter: other test modules may have loaded TensorFlow, which plain import crashes
from topkspec.known import load_known  # noqa: E402
from topkspec.targets.base import Rejected  # noqa: E402
from topkspec.targets.runtimes.paddle import PaddleTarget, to_paddle, to_numpy_values  # noqa: E402
from target_checks import bits, recorded_report, standalone_repro  # noqa: E402

# Types paddle.topk has a CPU kernel for (PD_REGISTER_KERNEL in phi/kernels/cpu/top_k_kernel.cc).
RUNS = ["float32", "float16", "float64", "int32", "int64"]
NO_KERNEL = ["int8", "int16", "uint8", "uint32", "uint64", "bfloat16"]


@pytest.fixture(scope="module")
def paddle_target():
    return PaddleTarget()


def onnx_case(dtype, shape, axis, k, largest=True, sorted_=True):
    return Case("onnx:24", "TopK", dtype, shape, axis, k, largest=largest, sorted=sorted_, index_dtype="int64")


def assert_exact(target, case, x):
    values, indices = target.run(case, x)
    want_values, want_indices = reference_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)
    assert values.dtype == want_values.dtype, f"values dtype: expected {want_values.dtype}, got {values.dtype}"
    assert indices.dtype == np.int64, f"indices dtype: expected int64, got {indices.dtype}"
    assert np.array_equal(bits(values), bits(want_values)), \
        f"{case.dtype} values: expected {want_values.tolist()}, got {values.tolist()}"
    assert np.array_equal(indices, want_indices), \
        f"{case.dtype} indices: expected {want_indices.tolist()}, got {indices.tolist()}"


@pytest.mark.parametrize("dtype", RUNS)
@pytest.mark.parametrize("largest", [True, False])
def test_distinct_values_match_the_reference_on_every_axis(paddle_target, dtype, largest):
    rng = np.random.default_rng(3)
    x = rng.permutation(np.arange(-30, 30)).reshape(3, 4, 5).astype(dtypes.numpy_dtype(dtype))
    for axis, k in ((0, 2), (1, 3), (-1, 5), (-2, 1)):
        assert paddle_target.supports(onnx_case(dtype, x.shape, axis, k, largest)) is None
        assert_exact(paddle_target, onnx_case(dtype, x.shape, axis, k, largest), x)


def test_extremes_and_non_finite_values_come_back_exact(paddle_target):
    x = np.array([np.inf, -np.inf, 0.5, -2.0, 1e-45, np.finfo(np.float32).max], np.float32)
    for largest in (True, False):
        assert_exact(paddle_target, onnx_case("float32", (6,), 0, 6, largest), x)
    info = np.iinfo(np.int64)
    y = np.array([info.max, info.min, 0, -1, 1], np.int64)
    for largest in (True, False):
        assert_exact(paddle_target, onnx_case("int64", (5,), 0, 5, largest), y)


def test_ties_select_the_right_values_when_k_takes_them_all(paddle_target):
    """With K = n every tied element is selected: the values are exact, the indices a permutation."""
    x = np.array([[2, 2, 1, 2], [5, 5, 5, 5]], np.float32)
    for largest in (True, False):
        values, indices = paddle_target.run(onnx_case("float32", (2, 4), 1, 4, largest), x)
        want_values, _ = reference_topk(x, axis=1, k=4, largest=largest)
        assert np.array_equal(values, want_values), f"values: expected {want_values.tolist()}, got {values.tolist()}"
        assert np.array_equal(np.sort(indices, axis=1), np.tile(np.arange(4), (2, 1))), indices.tolist()


def test_dml_cases_run_sorted_and_top_k_selects_the_largest(paddle_target):
    x = np.array([[[[1, 4, 2, 3]]]], np.float32)
    smallest = Case("dml:5.0", "TOP_K1", "float32", (1, 1, 1, 4), 3, 2, largest=False, index_dtype="int64")
    assert_exact(paddle_target, smallest, x)
    top_k = Case("dml:3.1", "TOP_K", "float32", (1, 1, 1, 4), 3, 2, largest=False, index_dtype="int64")
    values, _ = paddle_target.run(top_k, x)
    assert values.tolist() == [[[[4, 3]]]], f"DML_TOP_K selects the largest: got {values.tolist()}"


@pytest.mark.parametrize("changes", [{"k": 6}, {"k": 0}, {"axis": 2}, {"axis": -3}],
                         ids=["k above the size", "k = 0", "axis = rank", "axis below -rank"])
def test_invalid_k_and_axis_are_rejected(paddle_target, changes):
    case = onnx_case("float32", (2, 5), -1, 2)
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    paddle_target.run(case, x)
    with pytest.raises(Rejected, match="paddle: ValueError"):
        paddle_target.run(case.with_(**changes), x)


@pytest.mark.parametrize("dtype", NO_KERNEL)
def test_a_type_without_a_kernel_is_rejected_and_declared_known(paddle_target, dtype):
    with pytest.raises(Rejected, match=f"no kernel for {dtype}"):
        paddle_target.supports(onnx_case(dtype, (3,), 0, 1))
    known = [e for e in load_known(None, "paddle") if e.dtype == dtype]
    assert known and known[0].rule == "out.valid_accepted" and known[0].url, f"no known entry for {dtype}"


def test_uint16_cannot_be_expressed(paddle_target):
    reason = paddle_target.supports(onnx_case("uint16", (3,), 0, 1))
    assert reason and "paddle.uint16" in reason and "bfloat16" in reason, reason


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "uint32", "uint64"])
def test_conversions_keep_the_bits(dtype):
    """The adapter's own conversion: NaN payloads, -0.0, subnormals and the integer extremes survive."""
    if dtypes.is_float(dtype):
        width = dtypes.itemsize(dtype) * 8
        raw = np.array([0x7FC1, 0x8000, 0x0001, 0x7F80, 0xFF80, 0x3F80], dtype=f"u{width // 8}")
        x = raw.view(dtypes.numpy_dtype(dtype))
    else:
        info = np.iinfo(dtype)
        x = np.array([info.max, info.min, 1, info.max - 1], dtype=dtype)
    tensor = to_paddle(x)
    back = to_numpy_values(tensor.numpy(), dtype)
    assert back.dtype == x.dtype, f"{dtype}: came back as {back.dtype}"
    assert np.array_equal(bits(back), bits(x)), f"{dtype}: bits {bits(x).tolist()} came back as {bits(back).tolist()}"


# -- the deviations of the known list are real -------------------------------------------------

ZEROS = np.zeros(4, np.float32)


def test_known_tie_order_is_real(paddle_target):
    _, indices = paddle_target.run(onnx_case("float32", (4,), 0, 4), ZEROS)
    assert indices.tolist() != [0, 1, 2, 3], "paddle now keeps ties in index order: retire out.ties.index_order"


def test_known_kth_place_is_real(paddle_target):
    _, indices = paddle_target.run(onnx_case("float32", (4,), 0, 1), ZEROS)
    assert indices.tolist() != [0], "paddle now keeps the lowest tied index: retire out.ties.kth_place"


def test_known_signed_zero_tie_order_is_real(paddle_target):
    x = np.array([0.0, -0.0, -0.0, 0.0], np.float32)
    _, indices = paddle_target.run(onnx_case("float32", (4,), 0, 1), x)
    assert indices.tolist() != [0], "paddle now keeps zeros in index order: retire out.ties.signed_zero"


def test_known_prefix_break_is_real(paddle_target):
    x = np.zeros(7, np.float32)
    _, all_seven = paddle_target.run(onnx_case("float32", (7,), 0, 7), x)
    _, one = paddle_target.run(onnx_case("float32", (7,), 0, 1), x)
    assert one.tolist() != all_seven[:1].tolist(), "K=1 is now the prefix of K=7: retire out.prefix"


def test_every_known_entry_is_exercised_here():
    rules = {e.rule for e in load_known(None, "paddle") if e.dtype is None}
    assert rules == {"out.ties.index_order", "out.ties.kth_place", "out.ties.signed_zero", "out.prefix"}, rules
    assert {e.dtype for e in load_known(None, "paddle") if e.dtype} == set(NO_KERNEL)


# -- repro.py ------------------------------------------------------------------------------------

def write_repro(tmp_path, case, x, *, rule="out.exact", failure_class=None, calls=None, name="r"):
    folder = recorded_report(tmp_path, "paddle", case, x, rule=rule, failure_class=failure_class, calls=calls,
                             name=name)
    assert "paddle.topk(" in standalone_repro(folder)
    return subprocess.run([sys.executable, os.path.join(folder, "repro.py")], capture_output=True, text=True,
                          timeout=120)


@slow
def test_the_tie_order_repro_fails_and_a_right_case_passes(tmp_path):
    done = write_repro(tmp_path, onnx_case("float32", (4,), 0, 4), ZEROS, rule="out.ties.index_order", name="ties")
    assert done.returncode == 1, f"expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    assert "expected: values" in done.stdout and "actual:   values" in done.stdout, done.stdout
    case = Case("dml:5.0", "TOP_K1", "float32", (2, 3), 0, 1, largest=False, index_dtype="int64")
    done = write_repro(tmp_path, case, np.array([[3, 1, 2], [0, 5, 4]], np.float32), name="right")
    assert done.returncode == 0, f"expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


def test_the_bfloat16_refusal_repro_fails_with_paddles_error(tmp_path):
    from topkspec.properties import failures

    x = np.array([1.0, 2.0], dtype=dtypes.numpy_dtype("bfloat16"))
    done = write_repro(tmp_path, onnx_case("bfloat16", (2,), 0, 1), x, rule="out.valid_accepted",
                       failure_class=failures.REJECTS_VALID, name="bf16")
    assert done.returncode == 1, f"expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    assert "bfloat16" in done.stderr and "not registered" in done.stderr, done.stderr

