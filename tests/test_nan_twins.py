"""A wrong result with NaN is its NaN-free twin's bug only when the runtime also gets the same
input without NaN wrong (fuzz.nan_twins): one bug met by the valid and the nan group is one
report, and a NaN bug beside an unrelated bug of the same kind is a report of its own."""
import os

import ml_dtypes
import numpy as np

import planted_by_bug
from topkspec.fuzz import RunConfig, format_summary, run_fuzz
from topkspec.fuzz.nan_twins import nan_free_variants, own_nan_bug, right_without_nan
from topkspec.fuzz.results import RunResult, group_failures, nan_free_key
from topkspec.spec import Case
from topkspec.targets.base import CallableTarget

HERE = os.path.dirname(os.path.abspath(__file__))
BFLOAT16 = Case("onnx:24", "TopK", "bfloat16", (3,), 0, 1)


def _target(fn):
    return CallableTarget(fn, name=fn.__name__, default_profile="onnx:24")


def test_each_nan_is_replaced_four_ways_in_the_input_type():
    x = np.array([np.nan, 2.5, np.nan], ml_dtypes.bfloat16)
    variants = nan_free_variants(x)
    largest = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    assert [v.dtype for v in variants] == [x.dtype] * 4
    as_floats = [v.astype(np.float32).tolist() for v in variants]
    assert as_floats[:3] == [[0.0, 2.5, 0.0], [largest, 2.5, largest], [-largest, 2.5, -largest]], as_floats
    assert as_floats[3][1] == 2.5 and all(np.isfinite(as_floats[3])), as_floats[3]
    assert [v.astype(np.float32).tolist() for v in nan_free_variants(x)] == as_floats, "seeded by the input"
    assert np.isnan(x.astype(np.float32)[0]), "the input itself is left as it was"


def test_a_bug_that_one_fill_hides_stays_the_twins():
    # reads each sequence's values from the next one: [[nan, 0], [0, 0]] with NaN as 0 is right
    def next_sequence(x, *, axis, k, largest=True):
        from topkspec.spec.reference import reference_topk

        values, indices = reference_topk(x, axis=axis, k=k, largest=largest)
        return np.take_along_axis(np.roll(x, -1, axis=0), indices, axis=axis), indices

    case = Case("onnx:24", "TopK", "float32", (2, 2), 1, 1)
    x = np.array([[np.nan, 0], [0, 0]], np.float32)
    target = _target(next_sequence)
    assert not right_without_nan(target, target.contract, case, x), "the largest fill shows the bug"


def test_the_runtime_decides_whether_a_nan_failure_is_a_bug_of_its_own():
    x = np.array([0, np.nan, 1], ml_dtypes.bfloat16)  # my_topk answers [0.0]: NaN took the place of 1.0
    negates, smallest = _target(planted_by_bug.negates_for_largest), _target(planted_by_bug.smallest_for_largest)
    contract = negates.contract
    assert negates.run(BFLOAT16, x)[0].astype(np.float32).tolist() == [0.0], "the planted NaN bug"
    assert right_without_nan(negates, contract, BFLOAT16, x), "[0, 0, 1] is answered rightly"
    assert own_nan_bug(negates, contract, "out.values.select", (BFLOAT16, x))
    assert not right_without_nan(smallest, contract, BFLOAT16, x), "[0, 0, 1] is answered wrongly too"
    assert not own_nan_bug(smallest, contract, "out.values.select", (BFLOAT16, x))
    # a relation names one call, but its NaN may be in another: stays its twin's
    assert not own_nan_bug(negates, contract, "self.batch", (BFLOAT16, x))


def test_a_runtime_that_cannot_answer_the_input_without_nan_keeps_the_twin():
    def refuses(x, *, axis, k, largest=True):
        raise ValueError("no")

    x = np.array([0, np.nan, 1], ml_dtypes.bfloat16)
    assert not right_without_nan(_target(refuses), _target(refuses).contract, BFLOAT16, x)


def test_a_nan_failure_marked_alone_is_not_merged_into_its_twin():
    from test_bug_grouping import _failure

    def failure(x, signature):
        found = _failure(("out.values.select",), np.asarray(x, np.float32), [0.0], [0],
                         case=Case("onnx:24", "TopK", "float32", (3,), 0, 1))
        found.violation.signature = signature
        return found

    nan_free, nan = failure([0, 1, 2], ("values", "no NaN")), failure([0, np.nan, 1], ("values", "NaN"))
    assert nan_free_key(nan.key, nan.violation.signature) == nan_free.key
    for alone, kept in ((False, [nan_free]), (True, [nan_free, nan])):
        result = RunResult(target="t", version="1", profile="onnx:24", settings="ci", seed=0, max_examples=1)
        nan.nan_alone = alone
        result.failures = [nan_free, nan]
        group_failures(result)
        assert result.failures == kept, (alone, [(f.rule, f.violation.signature) for f in result.failures])


def _reports(fn, seed):
    target = _target(fn)
    result = run_fuzz(RunConfig(target=target, profile="onnx:24", settings="ci", max_examples=600, seed=seed,
                                confirm=False, groups=("valid", "nan")), target=target)
    return result, [(f.rule, f.violation.signature, f.dtype) for f in result.failures]


def test_my_topk_gets_a_report_for_its_wrap_and_one_for_its_nan():
    result, reports = _reports(planted_by_bug.negates_for_largest, seed=0)
    nan = [r for r in reports if r[1][1] == "NaN"]
    wrap = [r for r in reports if r[1][1] == "no NaN"]
    assert len(nan) == 1 and len(wrap) == 1, format_summary(result)
    # the two share a key but for NaN: before the runtime was asked, one hid behind the other
    nan_failure = next(f for f in result.failures if f.violation.signature[1] == "NaN")
    wrap_failure = next(f for f in result.failures if f.violation.signature[1] == "no NaN")
    assert nan_free_key(nan_failure.key, nan_failure.violation.signature) == wrap_failure.key, reports
    assert nan_failure.nan_alone and np.isnan(nan_failure.x.astype(np.float32)).any(), nan_failure.case


def test_one_bug_met_with_nan_and_without_is_one_report():
    result, reports = _reports(planted_by_bug.smallest_for_largest, seed=0)
    assert len(reports) == 1 and reports[0][1][1] == "no NaN", format_summary(result)
    assert "nan" in result.failed_groups, "the nan group met it too"
