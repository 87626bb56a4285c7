"""The `mindspore` target (mindspore.ops.topk, PyNative mode, CPU): exact results where
MindSpore is right, its refusals as Rejected, the shipped known list, the deviations found
(so a fix shows up here), and repro programs that run in MindSpore's own API."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

try:
    import mindspore  # noqa: F401
except ImportError as exc:  # not installed, or its libraries clash with one already loaded (paddle's oneDNN)
    pytest.skip(f"mindspore cannot be imported here: {exc}", allow_module_level=True)

from topkspec import reference_topk  # noqa: E402
from topkspec.known import load_known  # noqa: E402
from topkspec.properties import failures  # noqa: E402
from topkspec.spec import Case, dtypes  # noqa: E402
from topkspec.targets import Rejected, get_target  # noqa: E402
from target_checks import recorded_report, standalone_repro  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def target():
    made = get_target("mindspore")
    ok, reason = made.available()
    if not ok:
        pytest.skip(reason)
    yield made
    made.close()


def case(dtype, shape, axis, k, *, largest=True, sorted_=True, profile="onnx:24"):
    return Case(profile, "TopK", dtype, tuple(shape), axis, k, largest=largest, sorted=sorted_, index_dtype="int64")


def assert_exact(target, c, x):
    values, indices = target.run(c, x)
    want_values, want_indices = reference_topk(x, axis=c.norm_axis, k=c.k, largest=c.largest)
    assert values.dtype == want_values.dtype, f"values dtype: expected {want_values.dtype}, got {values.dtype}"
    assert indices.dtype == np.int64, f"indices dtype: expected int64, got {indices.dtype}"
    bits = f"u{values.dtype.itemsize}"
    assert np.array_equal(values.view(bits), want_values.view(bits)), \
        f"values: expected {want_values.tolist()}, got {values.tolist()}"
    assert np.array_equal(indices, want_indices), f"indices: expected {want_indices.tolist()}, got {indices.tolist()}"


# -- exact where MindSpore is right ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int32", "int64", "uint16", "uint64"])
@pytest.mark.parametrize("largest", [True, False])
def test_distinct_values_come_back_exact_on_every_axis(target, dtype, largest):
    rng = np.random.default_rng(3)
    x = rng.permutation(np.arange(1, 25)).reshape(2, 3, 4).astype(dtypes.numpy_dtype(dtype))
    for axis in (0, 1, -1):
        c = case(dtype, x.shape, axis, 2, largest=largest)
        assert target.supports(c) is None
        assert_exact(target, c, x)


def test_extremes_of_floats_and_of_largest_integers(target):
    x = np.array([np.inf, -np.inf, 65504, -65504, 6e-8, -0.0, 1.0], np.float16)
    assert_exact(target, case("float16", x.shape, 0, 7, largest=False), x)
    info = np.iinfo(np.int64)
    x = np.array([info.max, info.min, 2**53 + 1, 2**53, 0], np.int64)
    assert_exact(target, case("int64", x.shape, 0, 5), x)
    x = np.array([2**64 - 1, 0, 2**63, 2**53 + 1, 2**53], np.uint64)
    assert_exact(target, case("uint64", x.shape, 0, 5), x)


def test_ties_keep_index_order_when_k_is_above_half_the_axis(target):
    """Above half the axis the CPU kernel stable-sorts the whole axis: ties come out in index order."""
    x = np.array([[1, 2, 2, 1, 2, 1], [0, 0, 0, 0, 0, 0]], np.float32)
    assert_exact(target, case("float32", x.shape, 1, 4), x)
    assert_exact(target, case("float32", x.shape, -1, 5, largest=False), x)


def test_sorted_false_gives_the_right_set(target):
    x = np.array([5, 1, 4, 2, 3], np.float32)
    for largest, want in ((True, {0, 2, 4}), (False, {1, 3, 4})):
        values, indices = target.run(case("float32", x.shape, 0, 3, largest=largest, sorted_=False), x)
        assert set(indices.tolist()) == want and np.array_equal(values, x[indices])


def test_dml_cases_run_sorted_and_top_k_selects_the_largest(target):
    x = np.array([[[[1, 4, 2, 3]]]], np.float32)
    c = Case("dml:3.1", "TOP_K", "float32", x.shape, 3, 2, largest=False, index_dtype="uint32")
    values, indices = target.run(c, x)
    assert values.tolist() == [[[[4, 3]]]] and indices.tolist() == [[[[1, 3]]]]


# -- refusals -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("changes", [{"k": 6}, {"k": 0}, {"axis": 2}, {"axis": -3}])
def test_invalid_k_and_axis_are_rejected(target, changes):
    c = case("float32", (2, 5), -1, 2).with_(**changes)
    with pytest.raises(Rejected, match="mindspore: ValueError"):
        target.run(c, np.arange(10, dtype=np.float32).reshape(2, 5))


def test_bfloat16_is_refused_by_the_cpu_kernel_and_declared_known(target):
    c = case("bfloat16", (3,), 0, 1)
    with pytest.raises(Rejected, match="no kernel for bfloat16"):
        target.supports(c)
    entry = load_known(None, "mindspore").match("out.valid_accepted", failures.REJECTS_VALID, "bfloat16", "onnx:24",
                                                target.version())
    assert entry is not None and entry.url.startswith("https://"), "the bfloat16 gap is declared with its page"


def test_every_shipped_entry_has_a_reason_and_a_url():
    known = load_known(None, "mindspore")
    assert len(known) >= 1
    for entry in known:
        assert entry.reason and (entry.url.startswith("https://") or os.path.isfile(os.path.join(ROOT, entry.url))), entry


FINDING = "findings/mindspore-{}/report.md"


@pytest.mark.parametrize("rule, dtype, finding", [
    ("out.ties.index_order", "float32", "ties-out-of-index-order"),
    ("out.ties.kth_place", "int32", "ties-out-of-index-order"),
    ("out.nan.unspecified", "float64", "nan-unsorts-the-rest"),
    ("out.values.select", "int16", "smallest-wraps-integers"),
    ("out.order", "uint8", "smallest-wraps-integers"),
    ("out.values.select", "float32", "subnormals-compared-as-zero"),
    ("out.order", "float64", "subnormals-compared-as-zero"),
    ("out.values.select", "float16", None),  # floats negate exactly (not the wrap), float16 has no subnormal fault
    ("out.order", "float16", None),  # without NaN, float16 comes back in order
    ("out.exact", "float32", None),  # a subnormal's failure is filed under its own rules, not every rule
])
def test_each_deviation_found_is_declared_with_its_finding(target, rule, dtype, finding):
    entry = load_known(None, "mindspore").match(rule, failures.WRONG_RESULT, dtype, "onnx:24", target.version())
    if finding is None:
        assert entry is None, entry
    else:
        assert entry is not None and entry.url == FINDING.format(finding), entry


# -- the deviations found (reported, not known upstream): this fails once MindSpore fixes one ----------

def test_found_smallest_k_negates_in_the_input_type(target):
    """ops.topk(largest=False) is -topk(-x): the signed minimum and every unsigned value wrap."""
    x = np.array([-32768, 32767], np.int16)
    values, _ = target.run(case("int16", x.shape, 0, 1, largest=False), x)
    assert values.tolist() == [32767], f"MindSpore now selects {values.tolist()}: update the finding"
    x = np.array([0, 1], np.uint8)
    values, _ = target.run(case("uint8", x.shape, 0, 2, largest=False), x)
    assert values.tolist() == [1, 0], f"MindSpore now selects {values.tolist()}: update the finding"


def test_found_nan_breaks_the_order_of_the_other_values(target):
    """The kernel's comparator (a > b) is no strict weak order with NaN: 1.0 comes back above 2.0."""
    x = np.array([1, np.nan, 2], np.float32)
    values, _ = target.run(case("float32", x.shape, 0, 3), x)
    assert values[~np.isnan(values)].tolist() == [1.0, 2.0], f"MindSpore now returns {values.tolist()}: update the finding"


def test_found_ties_out_of_index_order_at_or_below_half_the_axis(target):
    """nth_element picks the K (MindSpore's own TopK docs promise the smaller index first)."""
    x = np.zeros(4, np.float32)
    _, indices = target.run(case("float32", x.shape, 0, 1), x)
    assert indices.tolist() != [0], "MindSpore now keeps ties in index order: update the finding"


def test_found_subnormals_compare_as_zero_when_the_input_has_more_than_one_slice(target):
    """The kernel threads run with denormals-are-zero: the finding's case (two slices) loses the
    0.0, while the same column alone, run on the calling thread, keeps it."""
    tiny = np.float32(-1e-45)
    x = np.array([[0.0, tiny], [0.0, 0.0]], np.float32)
    values, indices = target.run(case("float32", x.shape, 0, 1), x)
    assert indices.tolist() == [[0, 0]], \
        f"MindSpore now returns {values.tolist()} at {indices.tolist()}: update the finding"
    _, indices = target.run(case("float32", (2,), 0, 1), x[:, 1].copy())
    assert indices.tolist() == [1], "the 1-D column comes back right"


def test_the_subnormal_entries_match_the_findings_case_and_leave_nan_to_its_own():
    with open(os.path.join(ROOT, "findings", "mindspore-subnormals-compared-as-zero", "case.json")) as handle:
        found = json.load(handle)
    known = load_known(None, "mindspore")
    entry = known.match(found["rule"], failures.WRONG_RESULT, found["case"]["dtype"], found["profile"],
                        found["version"], found["case"]["k"])
    assert entry is not None and entry.url == FINDING.format("subnormals-compared-as-zero"), entry
    nan = known.match("out.nan.unspecified", failures.WRONG_RESULT, found["case"]["dtype"], found["profile"],
                      found["version"], found["case"]["k"])
    assert nan is not None and nan.url == FINDING.format("nan-unsorts-the-rest"), nan


# -- repro programs -------------------------------------------------------------------------------------

def report_for(tmp_path, c, x, *, rule="out.exact", failure_class=failures.WRONG_RESULT, name="r"):
    return recorded_report(tmp_path, "mindspore", c, x, rule=rule, failure_class=failure_class, name=name)


def start_repro(folder):
    path = os.path.join(folder, "repro.py")
    assert "ms.ops.topk(" in standalone_repro(folder), "repro.py calls mindspore.ops.topk"
    return subprocess.Popen([sys.executable, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_repros_fail_on_the_bugs_and_pass_where_mindspore_is_right(tmp_path):
    cases = [  # (case, input, rule, failure class, exit code)
        (case("int16", (2,), 0, 1, largest=False), np.array([-32768, 32767], np.int16), "out.values.select",
         failures.WRONG_RESULT, 1),
        (case("bfloat16", (2,), 0, 1), np.array([1, 2], dtypes.numpy_dtype("bfloat16")), "out.valid_accepted",
         failures.REJECTS_VALID, 1),
        (case("float32", (3,), 0, 3), np.array([1, np.nan, 2], np.float32), "out.nan.unspecified",
         failures.WRONG_RESULT, 1),
        (case("float32", (2, 3), 0, 1, largest=False), np.array([[3, 1, 2], [0, 5, 1]], np.float32), "out.exact",
         failures.WRONG_RESULT, 0),
    ]
    started = [(start_repro(report_for(tmp_path, c, x, rule=rule, failure_class=kind, name=f"r{number}")), c, rule, code)
               for number, (c, x, rule, kind, code) in enumerate(cases)]  # MindSpore's import is slow: run them at once
    for process, c, rule, code in started:
        stdout, stderr = process.communicate(timeout=180)
        assert process.returncode == code, (f"{c.dtype} {rule}: expected exit {code}, got {process.returncode}\n"
                                            f"{stdout}{stderr}")
        assert "NumPy 1.x" not in stderr, "the NumPy-2 first call is made quietly"
