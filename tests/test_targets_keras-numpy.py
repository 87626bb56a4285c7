"""The keras-numpy target (keras.ops.top_k on Keras's numpy backend): exact results against the
reference in both directions (the smallest form through the adapter's integer key), on a
non-last axis and unsorted; Keras's refusals as Rejected; each deviation of its known list; the
two it has that nobody reported (K above the axis size and K = 0 accepted); and repro.py
programs in Keras's own API, each run in a fresh interpreter with KERAS_BACKEND=numpy."""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from topkspec.targets.runtimes import keras as keras_target

try:  # keras with the numpy backend, unless this session imported it already (the adapter copes)
    keras_target._keras()
except ImportError:
    pass
pytest.importorskip("keras")

from topkspec import reference_topk  # noqa: E402
from topkspec.known import load_known, version_in  # noqa: E402
from topkspec.properties.combined import result_violations  # noqa: E402
from topkspec.spec import Case, dtypes  # noqa: E402
from topkspec.targets.base import Rejected  # noqa: E402
from topkspec.targets.runtimes.keras import KerasNumpyTarget  # noqa: E402
from target_checks import assert_exact, bits, recorded_report, standalone_repro  # noqa: E402

BF16 = ml_dtypes.bfloat16


@pytest.fixture(scope="module")
def target():
    made = KerasNumpyTarget()
    assert made.available() == (True, "")
    yield made
    made.close()


def distinct(dtype: str) -> np.ndarray:
    """3 x 8 distinct values: extremes, zero, infinities (floats), no ties (the ties are the
    known list's business)."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = list(dict.fromkeys([info.min, info.max, info.max - 1, info.min + 1] + list(range(2, 24))))
    else:
        pool = [-np.inf, np.inf, 0.0, -1.5, 1.5, 2.0, -2.0, 3.0, -3.0, 0.25, -0.25, 100.0, -100.0,
                6.0, -6.0, 7.0, -7.0, 8.0, -8.0, 9.0, -9.0, 10.0, -10.0, 0.5]
    rng = np.random.default_rng(len(dtype))
    return np.array(rng.permutation(np.array(pool, dtype=object))[:24].tolist(), dtype=dt).reshape(3, 8)


def check(target, case, x):
    if case.sorted:
        assert_exact(target, case, x)
        return
    values, indices = target.run(case, x)
    want_values, want_indices = reference_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)
    assert indices.dtype == np.int64, f"indices are {indices.dtype}, not int64"
    # any order: the same (index, value) pairs per sequence
    order = np.argsort(indices, axis=case.norm_axis)
    assert np.array_equal(np.take_along_axis(indices, order, axis=case.norm_axis), np.sort(want_indices, axis=case.norm_axis))
    assert np.array_equal(bits(values), bits(np.take_along_axis(x, indices, axis=case.norm_axis)))


@pytest.mark.parametrize("dtype", dtypes.ALL_VALUE_TYPES)
def test_both_directions_match_the_reference_bit_for_bit(target, dtype):
    x = distinct(dtype)
    for largest in (True, False):
        for axis, k in ((1, 8), (0, 2), (-1, 3)):
            check(target, Case("onnx:24", "TopK", dtype, x.shape, axis, k, largest=largest, index_dtype="int64"), x)


def test_a_middle_axis_unsorted_and_dml(target):
    x = np.random.default_rng(3).permutation(60).astype(np.float32).reshape(3, 5, 4)
    for largest in (True, False):
        check(target, Case("dml:5.0", "TOP_K1", "float32", x.shape, 1, 3, largest=largest, index_dtype="uint64"), x)
        check(target, Case("onnx:24", "TopK", "float32", x.shape, -2, 4, largest=largest, sorted=False,
                           index_dtype="int64"), x)
    u = np.array([2**64 - 1, 0, 7, 2**63, 6], np.uint64)
    check(target, Case("onnx:24", "TopK", "uint64", u.shape, 0, 3, sorted=False, index_dtype="int64"), u)


@pytest.mark.parametrize("axis, k, sorted_", [(2, 1, True), (-3, 1, True), (0, 3, False), (1, 6, False)])
def test_refusals_are_rejected(target, axis, k, sorted_):
    x = np.zeros((2, 5), np.float32)
    for largest in (True, False):
        with pytest.raises(Rejected, match="keras-numpy: "):
            target.run(Case("onnx:24", "TopK", "float32", x.shape, axis, k, largest=largest, sorted=sorted_,
                            index_dtype="int64"), x)


def test_every_type_is_supported_and_a_refused_probe_is_rejected(target, monkeypatch):
    for dtype in dtypes.ALL_VALUE_TYPES:
        for largest in (True, False):
            assert target.supports(Case("onnx:24", "TopK", dtype, (3,), 0, 1, largest=largest,
                                        index_dtype="int64")) is None

    def refuse(*args, **kwargs):
        raise Rejected("keras-numpy: TypeError: no sort")

    monkeypatch.setattr(keras_target, "keras_top_k", refuse)
    with pytest.raises(Rejected, match="refuses int16 .the smallest-K key of float16"):
        KerasNumpyTarget().supports(Case("onnx:24", "TopK", "float16", (3,), 0, 1, largest=False,
                                         index_dtype="int64"))


# -- the known list ---------------------------------------------------------------------------

def known(rule):
    entries = [e for e in load_known(None, "keras-numpy") if e.rule == rule]
    assert len(entries) == 1 and entries[0].url and entries[0].reason
    return entries[0]


@pytest.mark.parametrize("rule, x, k, largest, sorted_", [
    ("out.ties.index_order", [0.0, 0.0], 2, True, True),
    ("out.ties.index_order", [2.0, 1.0, 2.0, 1.0, 2.0], 2, False, True),  # the smallest form too
    ("out.ties.kth_place", [0.0, 0.0], 1, True, True),
    ("out.ties.kth_place", [1.0, 0.0, 1.0, 1.0, 0.0], 2, True, False),  # argpartition
    ("out.ties.signed_zero", [-0.0, 0.0], 2, True, True),
])
def test_known_tie_order(target, rule, x, k, largest, sorted_):
    entry = known(rule)
    x = np.array(x, np.float32)
    case = Case("onnx:24", "TopK", "float32", x.shape, 0, k, largest=largest, sorted=sorted_, index_dtype="int64")
    values, indices = target.run(case, x)
    broken = {r for v in result_violations(case, x, values, indices) for r in v.rules}
    if version_in(target.version(), entry.versions):
        assert rule in broken, f"{rule} should break on {target.version()}: got {indices.tolist()}"
    else:  # the fix (keras-team/keras#23367, is_stable=True) is in
        assert not broken, f"{target.version()}: {sorted(broken)} for {indices.tolist()}"


def test_known_k_above_the_axis_size_returns_the_whole_axis(target):
    """Keras's contract has k top values, so it validates; the numpy backend (sorted=True) takes K
    above the axis size and returns the whole axis (argsort sliced [..., :k])."""
    assert "findings/" in known("onnx.k.max").url and target.validates
    x = np.array([1, 2], np.float32)
    values, _ = target.run(Case("onnx:24", "TopK", "float32", (2,), 0, 3, index_dtype="int64"), x)
    assert values.tolist() == [2, 1], values
    with pytest.raises(Rejected):  # sorted=False: np.argpartition refuses it
        target.run(Case("onnx:24", "TopK", "float32", (2,), 0, 3, sorted=False, index_dtype="int64"), x)


def test_known_k_zero_is_taken(target):
    """Keras sets no lower bound for k: k = 0 sorted gives empty outputs (unsorted, the whole
    axis: argpartition(x, -0)[..., -0:], which the finding reports)."""
    known("onnx.k.positive")
    x = np.array([1, 2, 3], np.float32)
    values, _ = target.run(Case("onnx:24", "TopK", "float32", (3,), 0, 0, index_dtype="int64"), x)
    assert values.shape == (0,)
    values, _ = target.run(Case("onnx:24", "TopK", "float32", (3,), 0, 0, sorted=False, index_dtype="int64"), x)
    assert values.shape == (3,)


def test_known_bfloat16_nan_leaves_the_numbers_unsorted(target):
    known("out.nan.unspecified")
    x = np.array([3.0, np.nan, 1.0], BF16)
    case = Case("onnx:24", "TopK", "bfloat16", (3,), 0, 1, index_dtype="int64")
    values, indices = target.run(case, x)
    assert indices.tolist() == [2], f"ml_dtypes' compare should stop the sort at the NaN, got {indices.tolist()}"
    # no placement of NaN makes 1.0 the top 1 of [3, NaN, 1]: the K largest decides it, the NaN rule named
    assert [v.rules for v in result_violations(case, x, values, indices)] == [("out.values.select",
                                                                                "out.nan.unspecified")]
    as_float32 = case.with_(dtype="float32")
    _, indices = target.run(as_float32, x.astype(np.float32))  # numpy's own float sort places NaN last
    assert indices.tolist() == [1]
    _, indices = target.run(case.with_(largest=False), x)  # the integer key: unaffected
    assert indices.tolist() == [2]


# -- repro.py ---------------------------------------------------------------------------------

def report(tmp_path, case, x, name, rule="out.exact"):
    folder = recorded_report(tmp_path, "keras-numpy", case, x, rule=rule, name=name)
    source = standalone_repro(folder)
    assert "ops.top_k(" in source and 'os.environ["KERAS_BACKEND"] = "numpy"' in source, source
    return folder, source


def test_repros_run_in_keras_own_api(tmp_path, target):
    fixed = not version_in(target.version(), known("out.ties.kth_place").versions)
    programs = []  # (what, folder, expected exit): each in a fresh interpreter, where keras runs numpy
    tie = Case("onnx:24", "TopK", "float32", (2,), 0, 1, index_dtype="int64")
    folder, _ = report(tmp_path, tie, np.array([0.0, 0.0], np.float32), "tie", "out.ties.kth_place")
    programs.append(("a tie at the K-th place", folder, 0 if fixed else 1))
    smallest = Case("onnx:24", "TopK", "bfloat16", (6,), -1, 4, largest=False, index_dtype="int64")
    folder, source = report(tmp_path, smallest, np.array([1.0, -0.0, np.inf, 0.5, -np.inf, -1.0], BF16), "bfloat16")
    assert "smallest_first(x)" in source and "bits" in source, source
    programs.append(("the smallest bfloat16", folder, 0))
    unsorted = Case("onnx:24", "TopK", "int8", (2, 3), 0, 1, largest=False, sorted=False, index_dtype="int64")
    folder, source = report(tmp_path, unsorted, np.array([[3, -128, 5], [-127, 2, 4]], np.int8), "int8")
    assert "return ~x" in source and "bits" not in source and "sorted=False" in source, source
    programs.append(("the smallest int8, unsorted", folder, 0))
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    runs = [(what, want, subprocess.Popen([sys.executable, "repro.py"], cwd=folder, env=env, text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            for what, folder, want in programs]
    for what, want, run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == want, f"{what}: expected exit {want}, got {run.returncode}\n{out}{err}"
        if want == 1:
            assert "expected: values" in out, out
