"""The runner: budget sharing, database keys, shrunk failures, coverage and the summary."""
import os

import pytest
from slow import slow
from hypothesis.database import InMemoryExampleDatabase

from topkspec.properties import failures
from topkspec.fuzz import (
    KeyedDatabase, RunConfig, RunError, format_summary, open_database, run_fuzz, split_budget,
)

PLANTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "planted_bugs.py")


def test_the_budget_is_shared_and_every_group_gets_one():
    shares = split_budget(100, ["valid", "nan", "metamorphic", "invalid", "deterministic"])
    assert sum(shares.values()) == 100, f"shares add up to {sum(shares.values())}: {shares}"
    assert shares["valid"] > shares["deterministic"] >= 1, f"shares: {shares}"
    tiny = split_budget(2, ["valid", "nan", "deterministic"])
    assert all(n >= 1 for n in tiny.values()), f"every group runs at least once: {tiny}"


def test_keyed_databases_keep_groups_apart():
    inner = InMemoryExampleDatabase()
    a, b = KeyedDatabase(inner, "t|onnx:11|valid"), KeyedDatabase(inner, "t|onnx:11|nan")
    a.save(b"k", b"1")
    b.save(b"k", b"2")
    assert list(a.fetch(b"k")) == [b"1"] and list(b.fetch(b"k")) == [b"2"], "keys collide"
    a.move(b"k", b"other", b"1")
    assert list(a.fetch(b"k")) == [] and list(a.fetch(b"other")) == [b"1"], "move lost the value"
    a.delete(b"other", b"1")
    assert list(a.fetch(b"other")) == [], "delete kept the value"


def test_a_bad_database_url_is_a_run_error():
    with pytest.raises(RunError, match="redis://localhost:1"):
        open_database("redis://localhost:1/0")


@slow
def test_each_failure_is_shrunk_under_its_own_rule_and_the_summary_counts_them():
    # ignores_direction returns the largest values when the smallest are asked for: with K
    # below the axis size the wrong values come back (out.values.select), with K equal to it
    # the right ones in the wrong order (out.order). Each is found and shrunk on its own, and
    # as both results are the other direction's, they are one bug: one report, naming both.
    result = run_fuzz(RunConfig(target=f"{PLANTED}:ignores_direction", max_examples=100, seed=0,
                                settings="ci", groups=("valid",)))
    assert [f.rule for f in result.failures] == ["out.values.select"], f"failures: {[f.rule for f in result.failures]}"
    assert "out.order" in result.failures[0].violation.also, result.failures[0].violation.also
    for failure in result.failures:
        assert failure.failure_class == failures.WRONG_RESULT, f"class: {failure.failure_class}"
        assert not failure.case.largest, f"the bug needs largest=False: {failure.case.describe()}"
        assert failure.case.k <= 2 and failure.x.size <= 4, f"not shrunk: {failure.case.describe()}"
        assert failure.outputs and failure.outputs[0] is not None, "the target's output was not kept"
    summary = format_summary(result)
    assert "failures by class:" in summary and "wrong result                 1" in summary, summary
    assert "also breaks: out.order" in summary, summary


def test_coverage_and_examples_per_property_are_counted():
    result = run_fuzz(RunConfig(target="reference", max_examples=50, seed=0, settings="ci"))
    assert result.ok, format_summary(result)
    assert result.total_examples == 50, f"examples: {dict(result.examples)}"
    assert set(result.examples) == {"valid", "nan", "metamorphic", "invalid", "deterministic", "self"}, (
        dict(result.examples))
    assert result.checks["exact"] > 0 and result.checks["nan_policy_free"] > 0, dict(result.checks)
    assert sum(result.coverage.values()) > 0, "no coverage counted"
    ranks = {rank for _, rank in result.coverage}
    assert len(ranks) > 1, f"coverage per rank: {dict(result.coverage)}"


def test_a_target_without_validation_skips_the_rejection_group():
    from topkspec.targets.base import CallableTarget
    from topkspec.spec.reference import reference_topk

    target = CallableTarget(lambda x, *, axis, k, largest: reference_topk(x, axis=axis, k=k, largest=largest),
                            name="lenient")
    target.validates = False
    result = run_fuzz(RunConfig(target=target, max_examples=10, seed=0, settings="ci"))
    assert "invalid" not in result.examples, f"groups run: {dict(result.examples)}"


def test_type_and_rank_rejections_apply_only_to_targets_that_know_the_tables():
    def beyond_tables(result):  # float64 values and rank 9 are outside DirectML 5.0's tables
        return {(dtype, rank) for dtype, rank in result.coverage if dtype == "float64" or rank > 8}

    config = dict(max_examples=120, seed=0, settings="ci", groups=("invalid",), profile="dml:5.0")
    reference = run_fuzz(RunConfig(target="reference", **config))
    assert reference.ok and beyond_tables(reference), f"reference: {dict(reference.coverage)}"
    plain = run_fuzz(RunConfig(target=f"{PLANTED}:CORRECT", **config))
    assert plain.ok, format_summary(plain)
    assert plain.checks["rejects_invalid"] > 0 and not beyond_tables(plain), f"plain: {dict(plain.coverage)}"


def test_invalid_cases_the_target_does_not_implement_are_not_run():
    # A refusal for want of a kernel proves nothing about the rule the draw breaks.
    from topkspec.spec.reference import reference_topk
    from topkspec.targets.base import CallableTarget

    class Float32Only(CallableTarget):
        def supports(self, case):
            return None if case.dtype == "float32" else "no kernel but for float32"

    calls = []

    def accepts_anything(x, *, axis, k, largest):
        """Any axis (modulo the rank) and any K (0 gives empty outputs, more than the axis size
        repeats the last): it accepts every invalid case a Case can carry."""
        import numpy as np

        calls.append(str(x.dtype))
        axis = axis % x.ndim
        values, indices = reference_topk(x, axis=axis, k=x.shape[axis], largest=largest)
        take = np.minimum(np.arange(k), x.shape[axis] - 1)
        return np.take(values, take, axis=axis), np.take(indices, take, axis=axis)

    result = run_fuzz(RunConfig(target=Float32Only(accepts_anything, name="float32-only"), max_examples=400,
                                seed=1, settings="ci", groups=("invalid",), profile="onnx:24", shrink=False))
    assert result.unsupported["no kernel but for float32"] > 0, f"unsupported: {dict(result.unsupported)}"
    assert set(calls) <= {"float32"}, f"cases the target declared unsupported were run: {set(calls)}"
    assert not result.ok, "k = 0 and K above the size, accepted for other types, must be found"


def test_metamorphic_examples_ask_each_call_once_and_deterministic_ones_repeat_it():
    import numpy as np

    from topkspec.fuzz.context import GroupContext
    from topkspec.fuzz.groups import plan_groups
    from topkspec.fuzz.results import RunResult
    from topkspec.spec import Case
    from topkspec.spec.reference import reference_topk
    from topkspec.targets.base import CallableTarget

    calls = []

    def counting(x, *, axis, k, largest):
        calls.append((x.tobytes(), x.shape, axis, k, largest))
        return reference_topk(x, axis=axis, k=k, largest=largest)

    target = CallableTarget(counting, name="counting")
    groups = plan_groups(target, "onnx:24")
    case = Case("onnx:24", "TopK", "float32", (2, 3), 1, 1, index_dtype="int64")
    x = np.array([[1, 2, 2], [0, -1, 5]], dtype=np.float32)
    for group, wanted in (("metamorphic", "K=3 and K=1 as drawn, then the axis moved: 3 calls"),
                          ("deterministic", "the same call twice")):
        calls.clear()
        result = RunResult(target="counting", version="", profile="onnx:24", settings="ci", seed=0,
                           max_examples=1, notes=[], strict_doc=False)
        assert groups[group][1](GroupContext(target, result, group), (case, x)), f"{group}: nothing compared"
        distinct = len(set(calls))
        assert (len(calls), distinct) == ((3, 3) if group == "metamorphic" else (2, 1)), (
            f"{group}: {len(calls)} calls, {distinct} distinct; expected {wanted}")


def test_unknown_settings_are_a_run_error():
    with pytest.raises(RunError, match="weekly"):
        run_fuzz(RunConfig(target="reference", settings="weekly"))


BROKEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins", "broken_adapters.py")


@pytest.mark.parametrize("isolate", [False, True])
@pytest.mark.parametrize("group", ["valid", "invalid"])
def test_an_adapter_bug_is_an_adapter_error_not_a_pass_nor_a_runtime_fault(group, isolate):
    result = run_fuzz(RunConfig(target=f"{BROKEN}:attribute_error", max_examples=20, seed=0,
                                settings="ci", groups=(group,), isolate=isolate))
    classes = [f.failure_class for f in result.failures]
    assert classes == [failures.ADAPTER_ERROR], \
        f"{group} group, isolate={isolate}: expected [{failures.ADAPTER_ERROR!r}], got {classes}\n{format_summary(result)}"
    assert "no_such_attribute" in result.failures[0].violation.message, result.failures[0].violation.message
    assert result.failures[0].rule == "adapter", f"rule: expected 'adapter', got {result.failures[0].rule}"


@pytest.mark.parametrize("isolate", [False, True])
def test_a_target_that_raises_anything_but_rejected_is_an_adapter_error(isolate):
    from topkspec.targets import get_target

    spec = f"{BROKEN}:ValueErrorTarget"
    result = run_fuzz(RunConfig(target=spec if isolate else get_target(spec), max_examples=30, seed=0,
                                settings="ci", groups=("invalid",), isolate=isolate))
    classes = [f.failure_class for f in result.failures]
    assert classes == [failures.ADAPTER_ERROR], f"isolate={isolate}: got {classes}\n{format_summary(result)}"
    rejecting = run_fuzz(RunConfig(target=f"{BROKEN}:RejectingTarget", max_examples=30, seed=0,
                                   settings="ci", groups=("invalid",), isolate=isolate))
    assert rejecting.ok, f"a Target refusing with Rejected holds:\n{format_summary(rejecting)}"


# -- K equal to the axis size: the DirectML text says "less than", DirectML accepts it ----------

def test_refusing_k_at_the_axis_size_is_not_a_failure_at_directml_profiles():
    result = run_fuzz(RunConfig(target=f"{PLANTED}:rejects_k_equal_n", max_examples=80, seed=0,
                                settings="ci", profile="dml:5.0"))
    assert result.ok, format_summary(result)
    assert result.refused_k_at_axis_size > 0, "no K equal to the axis size was drawn"
    assert "K equal to the axis size refused" in format_summary(result), format_summary(result)


def test_refusing_k_at_the_axis_size_is_a_failure_at_onnx_profiles():
    result = run_fuzz(RunConfig(target=f"{PLANTED}:rejects_k_equal_n", max_examples=60, seed=0,
                                settings="ci", profile="onnx:11", groups=("valid",)))
    classes = [f.failure_class for f in result.failures]
    assert classes == [failures.REJECTS_VALID], f"expected a refused valid case, got {classes}"


def test_strict_doc_holds_every_target_to_the_literal_text():
    config = dict(max_examples=200, seed=0, settings="ci", profile="dml:5.0", strict_doc=True)
    accepts = run_fuzz(RunConfig(target=f"{PLANTED}:CORRECT", **config))
    rules = [(f.rule, f.failure_class) for f in accepts.failures]
    assert rules == [("dml.k.max_strict", failures.ACCEPTS_INVALID)], f"accepting K = n under strict_doc: {rules}"
    refuses = run_fuzz(RunConfig(target=f"{PLANTED}:rejects_k_equal_n", **config))
    assert refuses.ok, format_summary(refuses)
    assert refuses.refused_k_at_axis_size == 0, "valid cases under strict_doc must draw K below the axis size"


# -- a run that judged nothing, or too little in a group, is no verdict -------------------------

def test_a_run_that_judged_nothing_says_so_and_does_not_pass():
    result = run_fuzz(RunConfig(target=f"{BROKEN}:NothingSupported", max_examples=40, seed=0,
                                settings="ci", isolate=False))
    summary = format_summary(result)
    assert result.ok and result.vacuous and result.exit_code == 3, summary
    assert "every property held" not in summary and "judged too little" in summary, summary
    assert {group for group, _, _ in result.thin_groups()} == set(result.budgets), result.thin_groups()


def test_a_group_that_judged_too_little_is_named():
    result = run_fuzz(RunConfig(target=f"{BROKEN}:OnlyInt8", max_examples=200, seed=0,
                                settings="ci", isolate=False, profile="onnx:24"))
    thin = {group for group, _, _ in result.thin_groups()}
    assert "nan" in thin, f"the nan group judged no case (no float type supported): {result.thin_groups()}"
    assert result.exit_code == 3, format_summary(result)
    assert "too little judged in group nan: 0 of its" in format_summary(result), format_summary(result)


@slow
def test_with_nan_a_metamorphic_failure_names_the_result_that_broke_the_nan_rule():
    # nan_breaks_order puts smaller non-NaN values before larger ones when NaN is present. Two
    # of its results then differ only because one breaks the NaN rule on its own: that result
    # (its call, its K and axis) is what the failure names, not the relation between the two.
    from topkspec.properties import check_nan_policy_free
    from topkspec.properties.failures import Violation

    result = run_fuzz(RunConfig(target=f"{PLANTED}:nan_breaks_order", max_examples=200, seed=0,
                                settings="ci", groups=("metamorphic",)))
    assert len(result.failures) == 1, f"failures: {[f.rule for f in result.failures]}"
    failure = result.failures[0]
    # no placement of NaN makes that result right: filed under the documented rule, naming the NaN rule
    assert failure.rule in ("out.order", "out.values.select"), failure.rule
    assert "out.nan.unspecified" in failure.violation.rules and failure.relation == "result", failure.relation
    case, x = failure.calls[-1]
    assert failure.case == case, f"reported {failure.case.describe()}, the call was {case.describe()}"
    with pytest.raises(Violation):
        check_nan_policy_free(case, x, *failure.outputs[-1])


def test_a_group_whose_failure_another_group_found_first_is_said_to_have_failed():
    # The same failure (target, rule, class) is kept once, under the group that found it
    # first; the later group still found it, and its extra examples are shrinking's.
    import numpy as np

    from topkspec.fuzz import Failure, RunResult
    from topkspec.fuzz.results import record_failure
    from topkspec.fuzz.summary import budget_lines
    from topkspec.properties.failures import Violation
    from topkspec.spec import Case

    result = RunResult(target="t", version="", profile="onnx:11", settings="ci", seed=0, max_examples=20)
    result.budgets = {"nan": 10, "metamorphic": 10}
    result.examples.update({"nan": 30, "metamorphic": 25})
    case = Case("onnx:11", "TopK", "float32", (2,), 0, 1, index_dtype="int64")
    x = np.array([np.nan, 1.0], dtype=np.float32)
    for group in ("nan", "metamorphic"):
        record_failure(result, Failure(target="t", group=group, case=case, x=x, calls=[(case, x)], outputs=[None],
                                       violation=Violation("out.nan.unspecified", "out.nan.unspecified: wrong")))
    assert [f.group for f in result.failures] == ["nan"], "the failure is kept once, under the group first"
    lines = "\n".join(budget_lines(result))
    assert "metamorphic: 25 of 10: shrinking its failures runs further examples" in lines, lines
    assert "database" not in lines, lines
    assert result.thin_groups() == [], result.thin_groups()


def test_a_failure_an_earlier_group_kept_is_passed_over_and_the_group_digs_on():
    # one_based_indices breaks every result: the valid group finds and shrinks what it breaks;
    # the nan group meets the failures already kept, passes over them (no shrinking again, no
    # second report), files only what valid did not, and spends its budget looking for others.
    result = run_fuzz(RunConfig(target=f"{PLANTED}:one_based_indices", max_examples=60, seed=0,
                                settings="ci", groups=("valid", "nan")))
    filed = [(f.group, f.key) for f in result.failures]
    assert len({key for _, key in filed}) == len(filed), f"a failure filed twice: {filed}"
    assert "valid" in {group for group, _ in filed}, filed
    assert "out.values.gather" in {f.rule for f in result.failures}, [f.rule for f in result.failures]
    assert result.groups_that_failed() == {"valid", "nan"}, result.groups_that_failed()
    assert result.examples["nan"] == result.budgets["nan"], \
        f"the nan group ran {result.examples['nan']} of its {result.budgets['nan']} examples"


def test_a_metamorphic_group_with_nothing_to_judge_is_not_planned():
    # torch leaves ties open: no prefix, no moved axis, no equal repeats it promises, and at an
    # ONNX profile there are no two DirectML operators to compare; its examples would only have
    # made the run look thin (exit 3) while judging nothing.
    from topkspec.fuzz.groups import plan_groups
    from topkspec.targets.base import CallableTarget
    from topkspec.targets.runtimes.contracts import TORCH

    target = CallableTarget(lambda x, *, axis, k, largest: None, name="ties-open")
    assert {"metamorphic", "deterministic"} <= set(plan_groups(target, "onnx:24")), "a plain function promises them"
    left = set(plan_groups(target, "onnx:24", contract=TORCH))
    assert "metamorphic" not in left and "deterministic" not in left, f"planned for a ties-open contract: {left}"
    assert "self" in left, f"where ties are open the runtime is still held to itself: {left}"
    assert "metamorphic" in plan_groups(target, "dml:5.0", contract=TORCH), (
        "at a DirectML profile the two operators are compared, whatever the ties")
