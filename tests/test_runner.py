"""The runner: budget sharing, database keys, shrunk failures, coverage and the summary."""
import os

import pytest
from hypothesis.database import InMemoryExampleDatabase

from topkspec import failures
from topkspec.runner import (
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


def test_a_failure_is_shrunk_and_the_summary_counts_it():
    result = run_fuzz(RunConfig(target=f"{PLANTED}:ignores_direction", max_examples=40, seed=0,
                                settings_profile="ci", groups=("valid",)))
    assert not result.ok and len(result.failures) == 1, f"failures: {result.failures}"
    failure = result.failures[0]
    assert failure.failure_class == failures.WRONG_RESULT, f"class: {failure.failure_class}"
    assert not failure.case.largest, f"the bug needs largest=False: {failure.case.describe()}"
    assert failure.case.k <= 2 and failure.x.size <= 4, f"not shrunk: {failure.case.describe()}"
    assert failure.outputs and failure.outputs[0] is not None, "the target's output was not kept"
    summary = format_summary(result)
    assert "failures by class:" in summary and "wrong result                 1" in summary, summary


def test_coverage_and_examples_per_property_are_counted():
    result = run_fuzz(RunConfig(target="reference", max_examples=50, seed=0, settings_profile="ci"))
    assert result.ok, format_summary(result)
    assert result.total_examples == 50, f"examples: {dict(result.examples)}"
    assert set(result.examples) == {"valid", "nan", "metamorphic", "invalid", "deterministic"}, dict(result.examples)
    assert result.checks["exact"] > 0 and result.checks["nan_policy_free"] > 0, dict(result.checks)
    assert sum(result.coverage.values()) > 0, "no coverage counted"
    ranks = {rank for _, rank in result.coverage}
    assert len(ranks) > 1, f"coverage per rank: {dict(result.coverage)}"


def test_a_target_without_validation_skips_the_rejection_group():
    from topkspec.targets.base import CallableTarget
    from topkspec.reference import reference_topk

    target = CallableTarget(lambda x, *, axis, k, largest: reference_topk(x, axis=axis, k=k, largest=largest),
                            name="lenient")
    target.validates = False
    result = run_fuzz(RunConfig(target=target, max_examples=10, seed=0, settings_profile="ci"))
    assert "invalid" not in result.examples, f"groups run: {dict(result.examples)}"


def test_type_and_rank_rejections_apply_only_to_targets_that_know_the_tables():
    def beyond_tables(result):  # float64 values and rank 9 are outside DirectML 5.0's tables
        return {(dtype, rank) for dtype, rank in result.coverage if dtype == "float64" or rank > 8}

    config = dict(max_examples=120, seed=0, settings_profile="ci", groups=("invalid",), profile="dml:5.0")
    reference = run_fuzz(RunConfig(target="reference", **config))
    assert reference.ok and beyond_tables(reference), f"reference: {dict(reference.coverage)}"
    plain = run_fuzz(RunConfig(target=f"{PLANTED}:CORRECT", **config))
    assert plain.ok, format_summary(plain)
    assert plain.checks["rejects_invalid"] > 0 and not beyond_tables(plain), f"plain: {dict(plain.coverage)}"


def test_invalid_cases_the_target_does_not_implement_are_not_run():
    # A refusal for want of a kernel proves nothing about the rule the draw breaks.
    from topkspec.reference import reference_topk
    from topkspec.targets.base import CallableTarget

    class Float32Only(CallableTarget):
        def supports(self, case):
            return None if case.dtype == "float32" else "no kernel but for float32"

    calls = []

    def accepts_anything(x, *, axis, k, largest):
        calls.append(str(x.dtype))
        return reference_topk(x, axis=axis, k=max(k, 0), largest=largest)

    result = run_fuzz(RunConfig(target=Float32Only(accepts_anything, name="float32-only"), max_examples=150,
                                seed=1, settings_profile="ci", groups=("invalid",), profile="onnx:24", shrink=False))
    assert result.unsupported["no kernel but for float32"] > 0, f"unsupported: {dict(result.unsupported)}"
    assert set(calls) <= {"float32"}, f"cases the target declared unsupported were run: {set(calls)}"
    assert not result.ok, "k = 0 and K above the size, accepted for other types, must be found"


def test_an_unknown_settings_profile_is_a_run_error():
    with pytest.raises(RunError, match="weekly"):
        run_fuzz(RunConfig(target="reference", settings_profile="weekly"))
