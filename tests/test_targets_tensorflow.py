"""The tensorflow target (tf.math.top_k on the CPU): exact results against the reference in both
directions (the smallest form through the adapter's integer key), on a non-last axis and with
ties; TensorFlow's refusals as Rejected; each deviation of its known list; and repro.py
programs in TensorFlow's own API."""
import os
import runpy
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("tensorflow")

from topkspec.known import load_known  # noqa: E402
from topkspec.spec import Case, dtypes  # noqa: E402
from topkspec.targets.base import Rejected  # noqa: E402
from topkspec.targets.runtimes.tensorflow import TensorFlowTarget  # noqa: E402
from target_checks import assert_exact as check, recorded_report, standalone_repro  # noqa: E402

SUBNORMALS = "findings/tensorflow-subnormals-compared-as-zero/report.md"
K1_NAN = "findings/tensorflow-k1-nan-returns-element-0/report.md"
TINY = {"float32": 1.401298464324817e-45, "float64": 5e-324, "bfloat16": 9.2e-41, "float16": 6e-08}


@pytest.fixture(scope="module")
def tf_target():
    made = TensorFlowTarget()
    yield made
    made.close()


def adversarial(dtype: str) -> np.ndarray:
    """3 x 8: extremes, zeros of both signs, infinities, subnormals (floats) and heavy ties."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = [info.min, info.max, 0, 1, info.min + 1, info.max - 1, 1, 0]
    else:
        pool = [0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, TINY[dtype], -TINY[dtype], 1.0, 0.0]
    rng = np.random.default_rng(len(dtype))
    return np.array(rng.choice(np.array(pool, dtype=object), size=(3, 8)).tolist(), dtype=dt)


@pytest.mark.parametrize("dtype", dtypes.ALL_VALUE_TYPES)
def test_smallest_form_matches_reference_bit_for_bit(tf_target, dtype):
    x = adversarial(dtype)  # subnormals included: the integer key is immune to denormals-are-zero
    for axis, k in ((1, 8), (0, 2), (-1, 3)):
        check(tf_target, Case("onnx:24", "TopK", dtype, x.shape, axis, k, largest=False, index_dtype="int64"), x)


@pytest.mark.parametrize("dtype", dtypes.ALL_VALUE_TYPES)
def test_largest_form_matches_reference_without_subnormals(tf_target, dtype):
    x = adversarial(dtype)
    if x.dtype.kind not in "iu" and dtype != "float16":  # see the known list: denormals-are-zero
        magnitude = np.abs(x.astype(np.float64))
        subnormal = (magnitude > 0) & (magnitude < float(ml_dtypes.finfo(x.dtype).tiny))
        x = np.where(subnormal, np.ones_like(x) * 2, x).astype(x.dtype)
    for axis, k in ((1, 8), (0, 3), (-2, 1)):
        check(tf_target, Case("onnx:24", "TopK", dtype, x.shape, axis, k, largest=True, index_dtype="int64"), x)


def test_ties_come_in_index_order_on_a_middle_axis_and_dml_runs_sorted(tf_target):
    x = np.array([[[3, 1], [3, 2], [1, 2], [3, 2]]], dtype=np.float32)  # 1 x 4 x 2, axis 1
    for largest in (True, False):
        check(tf_target, Case("dml:5.0", "TOP_K1", "float32", x.shape, 1, 3, largest=largest,
                              index_dtype="uint32"), x)
    zeros = np.array([0.0, -0.0, 1.0, 0.0, -0.0], dtype=np.float32)
    values, indices = tf_target.run(Case("onnx:11", "TopK", "float32", (5,), 0, 4, largest=False,
                                         index_dtype="int64"), zeros)
    assert indices.tolist() == [0, 1, 3, 4] and np.signbit(values).tolist() == [False, True, False, True]


def test_unsorted_form_selects_the_same_set(tf_target):
    x = np.array([1, 5, 2, 7, 3, 9, 0], dtype=np.int32)
    case = Case("onnx:24", "TopK", "int32", x.shape, 0, 4, sorted=False, index_dtype="int64")
    values, indices = tf_target.run(case, x)
    assert sorted(indices.tolist()) == [1, 3, 4, 5] and np.array_equal(values, x[indices])


@pytest.mark.parametrize("axis, k", [(2, 1), (-3, 1), (0, 4), (1, 4)])
def test_refusals_are_rejected(tf_target, axis, k):
    x = np.zeros((2, 3), np.float32)
    for largest in (True, False):
        with pytest.raises(Rejected, match="tensorflow: "):
            tf_target.run(Case("onnx:24", "TopK", "float32", x.shape, axis, k, largest=largest,
                               index_dtype="int64"), x)


def test_every_type_is_supported_and_a_refused_probe_is_rejected(tf_target, monkeypatch):
    for dtype in dtypes.ALL_VALUE_TYPES:
        for largest in (True, False):
            assert tf_target.supports(Case("onnx:24", "TopK", dtype, (3,), 0, 1, largest=largest,
                                           index_dtype="int64")) is None
    fresh = TensorFlowTarget()

    def refuse(*args):
        raise Rejected("tensorflow: NotFoundError: no kernel")

    monkeypatch.setattr(fresh, "top_k", refuse)
    with pytest.raises(Rejected, match="no CPU kernel for int16 .the smallest-K key of float16"):
        fresh.supports(Case("onnx:24", "TopK", "float16", (3,), 0, 1, largest=False, index_dtype="int64"))


# -- the known list ---------------------------------------------------------------------------

@pytest.mark.parametrize("profile, op, rule", [("onnx:24", "TopK", "onnx.k.positive"),
                                              ("dml:5.0", "TOP_K1", "dml.k.positive")])
def test_known_k_zero_is_accepted(tf_target, profile, op, rule):
    entry = next(e for e in load_known(None, "tensorflow") if e.rule == rule)
    assert entry.url and entry.failure_class == "accepts an invalid one"
    values, indices = tf_target.run(Case(profile, op, "float32", (2,), 0, 0, index_dtype="int64"),
                                    np.array([1, 2], np.float32))
    assert values.shape == indices.shape == (0,)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_known_subnormals_compare_as_zero_when_selecting_the_largest(tf_target, dtype):
    entries = [e for e in load_known(None, "tensorflow") if e.dtype == dtype and e.url == SUBNORMALS]
    assert len(entries) == 1 and entries[0].rule == "out.*"
    x = np.array([0.0, TINY[dtype]], dtype=dtypes.numpy_dtype(dtype))
    case = Case("onnx:24", "TopK", dtype, (2,), 0, 1, index_dtype="int64")
    _, indices = tf_target.run(case, x)
    assert indices.tolist() == [0], "the subnormal should lose to 0 while TensorFlow flushes it"
    _, indices = tf_target.run(case.with_(largest=False), x)  # the integer key: exact
    assert indices.tolist() == [0]
    _, indices = tf_target.run(case.with_(largest=False), -x)
    assert indices.tolist() == [1], "the smallest form sees the negative subnormal below -0.0"


def test_float16_subnormals_compare_right(tf_target):
    x = np.array([0.0, TINY["float16"]], np.float16)
    _, indices = tf_target.run(Case("onnx:24", "TopK", "float16", (2,), 0, 1, index_dtype="int64"), x)
    assert indices.tolist() == [1]


@pytest.mark.xfail(strict=True, reason="tf.math.top_k with k=1 (an Eigen max, then the first element equal "
                                       "to it) returns element 0 when the max is NaN: a NaN not in front "
                                       "hides the largest non-NaN value (not reported upstream)")
def test_k1_with_nan_returns_the_largest_non_nan_or_a_nan(tf_target):
    x = np.array([1.0, 2.0, np.nan], np.float32)
    values, indices = tf_target.run(Case("onnx:24", "TopK", "float32", (3,), 0, 1, index_dtype="int64"), x)
    assert indices.tolist() in ([1], [2]), f"got {values.tolist()} at {indices.tolist()}"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
def test_k1_with_nan_is_declared_with_its_finding(tf_target, dtype):
    """A k = 1 result with NaN is filed under out.values.select: each float type's entry for it,
    for K = 1 alone, comes ahead of the subnormal entries' out.*, which would match it first; at
    another K the subnormal entries keep their failures."""
    known = load_known(None, "tensorflow")
    version = tf_target.version()
    filed = known.match("out.values.select", "wrong result", dtype, "onnx:24", version, k=1)
    assert filed is not None and filed.url == K1_NAN, filed
    other = known.match("out.values.select", "wrong result", dtype, "onnx:24", version, k=2)
    if dtype == "float16":  # no subnormal entry; the sort path's NaN failures are #119359's
        assert other is None, other
        nan = known.match("out.nan.unspecified", "wrong result", dtype, "onnx:24", version, k=4)
        assert nan is not None and nan.url.endswith("/issues/119359"), nan
    else:
        assert other is not None and other.url == SUBNORMALS, other
    order = known.match("out.order", "wrong result", dtype, "onnx:24", version, k=1)
    assert order is None or order.url == SUBNORMALS, order


# -- repro.py ---------------------------------------------------------------------------------

def report(tmp_path, case, x, name, rule="out.exact"):
    folder = recorded_report(tmp_path, "tensorflow", case, x, rule=rule, name=name)
    source = standalone_repro(folder)
    assert "tf.math.top_k(" in source, source
    return folder, source


def run_in_process(folder):
    """repro.py's exit status, run here (tensorflow is imported already)."""
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        runpy.run_path("repro.py", run_name="__main__")
        return 0
    except SystemExit as exc:
        return 0 if exc.code in (None, 0) else 1
    finally:
        os.chdir(cwd)


def test_repros_run_in_tensorflow_own_api(tmp_path):
    flushed = Case("onnx:24", "TopK", "float32", (2,), 0, 1, index_dtype="int64")
    bug, _ = report(tmp_path, flushed, np.array([0.0, TINY["float32"]], np.float32), "bug")
    run = subprocess.Popen([sys.executable, "repro.py"], cwd=bug, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)  # a fresh interpreter: standalone; meanwhile the others run here
    smallest = Case("dml:5.0", "TOP_K1", "int8", (2, 3), 0, 1, largest=False, index_dtype="uint32")
    right, source = report(tmp_path, smallest, np.array([[3, -128, 5], [-128, 2, 5]], np.int8), "int8")
    assert "return ~x" in source and "bits" not in source, source
    assert run_in_process(right) == 0, f"smallest int8: expected exit 0\n{source}"
    floats = Case("onnx:24", "TopK", "bfloat16", (6,), -1, 4, largest=False, index_dtype="int64")
    x = np.array([1.0, -0.0, np.inf, 0.0, -np.inf, -1.0], dtype=dtypes.numpy_dtype("bfloat16"))
    right, source = report(tmp_path, floats, x, "bfloat16")
    assert "smallest_first(x)" in source and "bits" in source, source
    assert run_in_process(right) == 0, f"smallest bfloat16: expected exit 0\n{source}"
    unsorted = Case("onnx:24", "TopK", "uint64", (5,), 0, 3, sorted=False, index_dtype="int64")
    right, source = report(tmp_path, unsorted, np.array([2**64 - 1, 0, 7, 2**63, 7], np.uint64), "unsorted")
    assert "sorted=False" in source, source
    assert run_in_process(right) == 0, f"unsorted uint64: expected exit 0\n{source}"
    out, err = run.communicate(timeout=300)
    assert run.returncode == 1, f"a flushed subnormal: expected exit 1, got {run.returncode}\n{out}{err}"
    assert "expected: values" in out, out
