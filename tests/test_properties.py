"""The properties hold for correct implementations: the reference, the spec's worked examples,
other NaN policies, sorted output for sorted=0; and the catalogue names real output rules."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import planted_bugs as bugs  # noqa: E402

from topkspec import spec  # noqa: E402
from topkspec.failures import REJECTS_VALID, Violation  # noqa: E402
from topkspec.properties import (  # noqa: E402
    CATALOGUE, METAMORPHIC, RESULT, check_accepts_valid, check_axis_moves, check_deterministic,
    check_prefix, check_rejects_invalid, check_result, check_topk_equals_topk1, result_checks,
    result_violations,
)
from topkspec.spec import Case  # noqa: E402
from topkspec.strategies import case_and_input, invalid_descriptors  # noqa: E402
from topkspec.targets.base import CallableTarget  # noqa: E402

FAST = settings(max_examples=40, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))


def plain_run(fn):
    def run(case, x):
        return fn(x, axis=case.norm_axis, k=case.k, largest=case.largest)
    return run


@pytest.mark.parametrize("profile", ["dml:2.1", "dml:5.0", "onnx:10", "onnx:11", "onnx:24"])
@pytest.mark.parametrize("allow_nan", [False, True])
def test_reference_holds_every_property(profile, allow_nan):
    """Through CallableTarget, so DirectML cases get their uint32/uint64 indices."""
    run = CallableTarget(bugs.CORRECT).run

    @FAST
    @given(case_and_input(profile, allow_nan=allow_nan, max_total=4000))
    def check(drawn):
        case, x = drawn
        values, indices = run(case, x)
        check_result(case, x, values, indices)
        for prop in CATALOGUE:
            if prop.kind == METAMORPHIC:
                prop.check(case, x, run)
        check_accepts_valid(case, run, x)
    check()


@pytest.mark.parametrize("example", spec.tables.DML_WORKED_EXAMPLES, ids=lambda e: e["name"])
def test_worked_examples_hold_every_result_property(example):
    x = np.array(example["input"], dtype=np.float32)
    case = Case("dml:3.1", "TOP_K1", "float32", tuple(example["sizes"]), example["axis"], example["k"],
                largest=example["direction"] == "DECREASING", index_dtype="uint32")
    values = np.array(example["values"], dtype=np.float32)
    indices = np.array(example["indices"], dtype=np.uint32)
    check_result(case, x, values, indices)
    wrong = np.flip(indices, axis=case.norm_axis)
    assert result_violations(case, x, values, wrong), f"{example['name']}: reversed indices not caught"


def nan_smallest(x, *, axis, k, largest=True):
    """A correct implementation with another NaN policy: NaN below every number."""
    x = np.asarray(x)
    wide = x.astype(np.float64)
    key = np.where(np.isnan(wide), -np.inf if largest else np.inf, wide)
    order = np.argsort(-key if largest else key, axis=axis, kind="stable")
    # Among equal keys (NaN with -inf) the stable sort keeps index order, as the tie rule asks.
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)


def test_nan_checks_hold_for_any_nan_policy():
    @FAST
    @given(case_and_input("onnx:24", dtypes=["float32", "float16"], allow_nan=True, max_total=2000))
    def check(drawn):
        case, x = drawn
        case = case.with_(index_dtype="int64")
        values, indices = nan_smallest(x, axis=case.norm_axis, k=case.k, largest=case.largest)
        check_result(case, x, values, indices)
    check()


def test_sorted_output_answers_an_unsorted_request_and_index_order_does_not_answer_a_sorted_one():
    x = np.array([1.0, 5.0, 3.0, 4.0], dtype=np.float32)
    unsorted = Case("onnx:11", "TopK", "float32", (4,), 0, 3, sorted=False, index_dtype="int64")
    for fn in (bugs.CORRECT, bugs.index_order_output):
        values, indices = fn(x, axis=0, k=3)
        check_result(unsorted, x, values, indices)
    values, indices = bugs.index_order_output(x, axis=0, k=3)
    with pytest.raises(Violation) as info:
        check_result(unsorted.with_(sorted=True), x, values, indices)
    assert info.value.rules == ("out.order",)


def test_result_checks_depend_on_nan_and_sorted():
    case = Case("onnx:11", "TopK", "float32", (3,), 0, 1, index_dtype="int64")
    names = lambda checks: [c.__name__ for c in checks]  # noqa: E731
    assert names(result_checks(case, np.zeros(3, np.float32)))[-1] == "check_exact"
    assert names(result_checks(case, np.array([np.nan, 0, 1], np.float32)))[-1] == "check_nan_policy_free"
    assert names(result_checks(case.with_(sorted=False), np.zeros(3, np.float32)))[-1] == "check_unsorted_set"


def test_result_violations_lists_every_failing_check_most_specific_first():
    x = np.array([[2, 2, 1]], dtype=np.int32)
    case = Case("dml:5.0", "TOP_K1", "int32", (1, 3), 1, 2, index_dtype="int64")
    values, indices = bugs.last_equal_at_kth(x, axis=1, k=1)
    found = result_violations(case.with_(k=1), x, values, indices)
    assert [v.rules[0] for v in found] == ["out.ties.index_order", "out.exact"]


def test_metamorphic_checks_skip_what_they_cannot_compare():
    run = plain_run(bugs.alternating_ties)
    x = np.array([1.0], dtype=np.float32)
    rank1 = Case("onnx:11", "TopK", "float32", (1,), 0, 1, index_dtype="int64")
    assert check_axis_moves(rank1, x, run) is None  # rank 1: no other axis
    assert check_prefix(rank1, x, run) is None  # n == 1: no smaller K
    assert check_topk_equals_topk1(rank1, x, run) is None  # ONNX has one operator
    with pytest.raises(Violation):  # but ties do show the nondeterminism
        ties = np.array([1.0, 1.0], dtype=np.float32)
        check_deterministic(rank1.with_(shape=(2,)), ties, run, repeats=3)


def test_acceptance_checks():
    case = Case("dml:5.0", "TOP_K1", "float32", (3,), 0, 3, index_dtype="uint32")
    with pytest.raises(Violation) as info:
        check_accepts_valid(case, plain_run(bugs.rejects_k_equal_n))
    assert info.value.failure_class == REJECTS_VALID and "K=3" in info.value.message
    check_accepts_valid(case, plain_run(bugs.CORRECT))

    # A plain callable knows nothing of profiles: it refuses what no TopK can compute (K and
    # axis out of range) and is judged on those.
    computable = st.sampled_from(["dml.k.positive", "dml.k.max", "dml.axis.range"]).flatmap(
        lambda rule: invalid_descriptors("dml:5.0", rule))

    @FAST
    @given(computable)
    def correct_refuses(draw):
        check_rejects_invalid(draw, CallableTarget(bugs.CORRECT).run)
    correct_refuses()


def test_catalogue_names_output_rules_and_covers_them():
    output_rules = {r.id for r in spec.RULE_LIST if r.scope == "output"}
    named = {rule for prop in CATALOGUE for rule in prop.rules}
    assert named <= output_rules, f"unknown rules: {named - output_rules}"
    assert named == output_rules, f"output rules no property enforces: {output_rules - named}"
    assert len({p.name for p in CATALOGUE}) == len(CATALOGUE)
    assert all(p.kind != RESULT or p.check.__name__.startswith("check_") for p in CATALOGUE)
    assert {p.to_dict()["name"] for p in CATALOGUE} == {p.name for p in CATALOGUE}
