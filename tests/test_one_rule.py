"""One report per bug, under the rule that decides it: special cases fire only where the
general rule does not explain the result, a report names what else the same failure breaks,
NaN failures that no placement of NaN makes right are the documents', and a call with no answer
in time is a timeout, not a rule."""
import os

import numpy as np
import pytest

from topkspec.fuzz import RunConfig, format_summary, run_fuzz
from topkspec.fuzz.verdicts import BROKEN, HOLDS, verdict_of
from topkspec.properties import check_nan_policy_free, check_ties, failures
from topkspec.properties.failures import Violation
from topkspec.spec import Case
from slow import slow

HERE = os.path.dirname(__file__)
PLANTED = os.path.join(HERE, "planted_bugs.py")
VERDICTS = os.path.join(HERE, "planted_verdicts.py")


def _run(target, **options):
    options.setdefault("max_examples", 300)
    options.setdefault("seed", 1)
    return run_fuzz(RunConfig(target=target, settings="ci", **options))


def _raised(check, case, x, values, indices) -> Violation:
    with pytest.raises(Violation) as info:
        check(case, x, np.asarray(values, x.dtype), np.asarray(indices, np.int64))
    return info.value


CASE = Case("dml:5.0", "TOP_K1", "float32", (2,), 0, 1)


def test_ties_broken_by_the_higher_index_are_a_tie_failure_even_between_signed_zeros():
    zeros = np.array([0.0, -0.0, 0.0], np.float32)  # +0.0 at 0 and 2 tie as -0.0 at 1 does
    higher_first = _raised(check_ties, CASE.with_(shape=(3,), k=3), zeros, [0.0, -0.0, 0.0], [2, 1, 0])
    assert higher_first.rules == ("out.ties.index_order",), higher_first.message
    assert higher_first.causes == ("ties broken by the higher index",)
    # -0.0 below +0.0, the tie between the two +0.0 in index order: the zeros are handled apart
    apart = _raised(check_ties, CASE.with_(shape=(3,), k=3), zeros, [0.0, 0.0, -0.0], [0, 2, 1])
    assert apart.rules == ("out.ties.signed_zero", "out.ties.index_order"), apart.message
    # only zeros of both signs tie: either reading gives it, so both causes are named
    both = _raised(check_ties, CASE, np.array([-0.0, 0.0], np.float32), [0.0], [1])
    assert both.rules[0] == "out.ties.signed_zero" and len(both.causes) == 2, both.causes


def test_a_higher_index_tie_breaker_gets_one_report_under_the_tie_order():
    result = _run(f"{VERDICTS}:ties_reversed")
    assert [f.rule for f in result.failures] == ["out.ties.index_order"], format_summary(result)
    assert "out.ties.kth_place" in result.failures[0].violation.also
    assert verdict_of(result, "out.ties.signed_zero").kind == HOLDS, verdict_of(result, "out.ties.signed_zero")
    assert verdict_of(result, "out.ties.kth_place").failure is result.failures[0]


@slow
def test_signed_zeros_ordered_apart_stay_a_signed_zero_report():
    # a -0.0 and a +0.0 both kept by K is a rare draw: a longer search than the default
    result = _run(f"{PLANTED}:signed_zero_order", groups=("valid",), max_examples=1500)
    assert [f.rule for f in result.failures] == ["out.ties.signed_zero"], format_summary(result)


@slow
def test_two_planted_bugs_get_two_reports_each_naming_what_else_it_breaks(tmp_path):
    result = _run(f"{VERDICTS}:ties_reversed_and_long_axis_kth", max_examples=1000, seed=0,
                  report_dir=str(tmp_path))
    # the self group may also show the function contradicting itself (its ties reversed on
    # some calls and not others where NaN leaves them open): reports of their own, self.*
    by_rule = {f.rule: f for f in result.failures if not f.rule.startswith("self.")}
    assert set(by_rule) == {"out.ties.index_order", "out.values.select"}, format_summary(result)
    assert "out.ties.kth_place" in by_rule["out.ties.index_order"].violation.also
    assert "out.prefix" in by_rule["out.values.select"].violation.also
    for failure in by_rule.values():
        report = open(os.path.join(failure.report_dir, "report.md")).read()
        assert "It also breaks:" in report and f"`{failure.violation.also[0]}`" in report, report


@pytest.mark.parametrize("values, indices, rule", [
    ([0.5], [2], "out.values.select"),  # DirectML's [1, NaN, 0.5], K = 1 -> 0.5
    ([1.0], [2], "out.values.gather"),  # 1.0 is not the element at index 2
])
def test_a_nan_result_no_placement_makes_right_is_the_documents(values, indices, rule):
    x = np.array([1.0, np.nan, 0.5], np.float32)
    case = CASE.with_(shape=(3,))
    violation = _raised(check_nan_policy_free, case, x, values, indices)
    assert violation.rules[0] == rule, violation.rules
    for right in (([np.nan], [1]), ([1.0], [0])):  # NaN largest, NaN smallest
        check_nan_policy_free(case, x, np.array(right[0], np.float32), np.array(right[1]))
    unsorted = _raised(check_nan_policy_free, case.with_(shape=(4,), k=3), np.array([1, np.nan, 2, 3], np.float32),
                       [3.0, 1.0, 2.0], [3, 0, 2])
    assert unsorted.rules[0] == "out.order" and "no placement of NaN" in unsorted.message


@slow
def test_documents_only_keeps_a_nan_failure_no_placement_makes_right(tmp_path):
    result = _run(f"{PLANTED}:nan_breaks_order", groups=("nan",), documents_only=True, report_dir=str(tmp_path))
    assert result.failures and {f.rule for f in result.failures} <= {"out.values.select", "out.order"}, \
        format_summary(result)
    for failure in result.failures:
        assert "out.nan.unspecified" in failure.violation.rules
        report = open(os.path.join(failure.report_dir, "report.md")).read()
        assert "onnx/onnx/issues/4716" in report and "onnx/onnx/pull/7754" in report, report
        assert "when the input holds NaN" in report.splitlines()[0], report.splitlines()[0]


@slow
def test_a_slow_correct_function_is_a_timeout_quoting_no_rule(tmp_path):
    result = run_fuzz(RunConfig(target=f"{PLANTED}:slow_when_k_above_1", isolate=True, timeout=0.5, max_examples=30,
                                seed=0, settings="ci", groups=("valid",), report_dir=str(tmp_path)))
    assert [(f.rule, f.failure_class) for f in result.failures] == [("timeout", failures.TIMEOUT)], \
        format_summary(result)
    assert verdict_of(result, "out.valid_accepted").kind != BROKEN
    report = open(os.path.join(result.failures[0].report_dir, "report.md")).read()
    assert "0.5 s" in report and "--timeout" in report, report
    assert "## The rule" not in report and "\n> " not in report, report
    assert "time limit" in report.splitlines()[0], report.splitlines()[0]
