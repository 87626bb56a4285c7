"""The properties hold for correct implementations: the reference, the spec's worked examples,
other NaN policies, sorted output for sorted=0; and the catalogue names real output rules."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from slow import slow
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import planted_bugs as bugs  # noqa: E402

from topkspec import spec  # noqa: E402
from topkspec.properties.failures import REJECTS_VALID, Violation  # noqa: E402
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
@slow
def test_reference_holds_every_property(profile, allow_nan):
    """Through CallableTarget, so DirectML cases get their uint32/uint64 indices."""
    run = CallableTarget(bugs.CORRECT).run

    @FAST
    @given(case_and_input(profile, allow_nan=allow_nan, max_total=4000))
    def check(drawn):
        case, x = drawn
        values, indices = run(case, x)
        for result_check in result_checks(case, x):  # one by one: check_result trusts this test
            result_check(case, x, values, indices)
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


def test_a_copy_of_the_reference_passes_at_once_and_anything_else_goes_through_the_checks():
    from topkspec.properties.combined import matches_reference

    x = np.array([[3.0, -0.0, 0.0, 7.0, 3.0]], dtype=np.float32)
    case = Case("onnx:24", "TopK", "float32", (1, 5), 1, 3, index_dtype="int64")
    values, indices = bugs.CORRECT(x, axis=1, k=3)
    assert matches_reference(case, x, values, indices)
    # sorted=0: the same (value, index) pairs in another order are still the reference's
    unsorted = case.with_(sorted=False)
    assert matches_reference(unsorted, x, values[:, ::-1], indices[:, ::-1])
    assert not matches_reference(case, x, values[:, ::-1], indices[:, ::-1]), "order ignored when sorted"
    assert not matches_reference(unsorted, x, values[:, ::-1], indices), "values paired with other indices"
    assert not matches_reference(unsorted, x, values, np.array([[3, 0, 1]])), "another index set"
    # and along a first axis: the pairs are compared per sequence, wherever the axis is
    column = unsorted.with_(shape=(5, 1), axis=0)
    assert matches_reference(column, x.T, values[:, ::-1].T, indices[:, ::-1].T)
    assert not matches_reference(column, x.T, values[:, ::-1].T, indices.T)
    # a signed zero for an unsigned one differs in bits: not a copy, so the checks run and name it
    zero_case = case.with_(k=5, largest=False)
    values, indices = bugs.CORRECT(x, axis=1, k=5, largest=False)
    flipped = values.copy()
    flipped[0, 0], flipped[0, 1] = flipped[0, 1], flipped[0, 0]  # -0.0 and 0.0 swapped, indices kept
    assert not matches_reference(zero_case, x, flipped, indices)
    with pytest.raises(Violation) as info:
        check_result(zero_case, x, flipped, indices)
    assert info.value.rules[0] == "out.values.gather", info.value.rules


def test_result_violations_lists_every_failing_check_most_specific_first():
    x = np.array([[2, 2, 1]], dtype=np.int32)
    case = Case("dml:5.0", "TOP_K1", "int32", (1, 3), 1, 2, index_dtype="int64")
    values, indices = bugs.last_equal_at_kth(x, axis=1, k=1)
    found = result_violations(case.with_(k=1), x, values, indices)
    assert [v.rules[0] for v in found] == ["out.ties.kth_place", "out.exact"]


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
    # ONNX allows K equal to the axis size: refusing it is refusing a valid case.
    case = Case("onnx:11", "TopK", "float32", (3,), 0, 3, index_dtype="int64")
    with pytest.raises(Violation) as info:
        check_accepts_valid(case, plain_run(bugs.rejects_k_equal_n))
    assert info.value.failure_class == REJECTS_VALID and "K=3" in info.value.message
    check_accepts_valid(case, plain_run(bugs.CORRECT))
    # The DirectML text says "less than": a target that follows it is not failed.
    dml = Case("dml:5.0", "TOP_K1", "float32", (3,), 0, 3, index_dtype="uint32")
    check_accepts_valid(dml, plain_run(bugs.rejects_k_equal_n))
    with pytest.raises(Violation):  # K below the axis size is valid in both readings
        check_accepts_valid(dml.with_(k=2), plain_run(bugs.refuses_everything))

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
    # the output rules, and those a laid-out DirectML call is held to (scope dml_call, the layout group)
    output_rules = {r.id for r in spec.RULE_LIST if r.scope == "output" or r.scope == "dml_call" and r.id.startswith("out.")}
    named = {rule for prop in CATALOGUE for rule in prop.rule_ids}
    assert all(isinstance(rule, spec.Rule) for prop in CATALOGUE for rule in prop.rules), "rules are Rule objects"
    assert named <= output_rules, f"unknown rules: {named - output_rules}"
    assert named == output_rules, f"output rules no property enforces: {output_rules - named}"
    assert len({p.name for p in CATALOGUE}) == len(CATALOGUE)
    assert all(p.kind != RESULT or p.check.__name__.startswith("check_") for p in CATALOGUE)
    assert {p.to_dict()["name"] for p in CATALOGUE} == {p.name for p in CATALOGUE}


# -- NaN and metamorphic relations: each call may place NaN as it likes ----------------------

class NaNAnywhere:
    """A valid TopK for every NaN policy at once: each call picks how many NaNs to return,
    which ones, and where among the top non-NaN values (in order) they go."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def __call__(self, case, x):
        k, axis = case.k, case.norm_axis
        moved = np.moveaxis(x, axis, -1)
        flat = moved.reshape(-1, moved.shape[-1])
        out_idx = np.zeros((flat.shape[0], k), dtype=np.int64)
        for r, row in enumerate(flat):
            nan = np.flatnonzero(np.isnan(row.astype(np.float64)))
            real = np.flatnonzero(~np.isnan(row.astype(np.float64)))
            order = real[np.argsort(-row[real] if case.largest else row[real], kind="stable")]
            low, high = max(0, k - len(real)), min(len(nan), k)
            j = int(self.rng.integers(low, high + 1))
            chosen = list(self.rng.permutation(nan)[:j])
            picked = list(order[:k - j])
            for i in chosen:
                picked.insert(int(self.rng.integers(0, len(picked) + 1)), i)
            out_idx[r] = picked
        idx = np.moveaxis(out_idx.reshape(moved.shape[:-1] + (k,)), -1, axis)
        return np.take_along_axis(x, idx, axis=axis), idx.astype(case.index_dtype)


def test_onnxruntime_1_20_on_three_nans_is_a_valid_prefix():
    # ONNX Runtime 1.20.1 on [NaN, NaN, NaN]: indices [1, 0, 2] for k=3 and [0] for k=1.
    answers = {3: [1, 0, 2], 1: [0]}

    def run(case, x):
        idx = np.array(answers[case.k], dtype=np.int64)
        return x[idx], idx

    x = np.full(3, np.nan, dtype=np.float32)
    check_prefix(Case("onnx:11", "TopK", "float32", (3,), 0, 1, index_dtype="int64"), x, run)


@pytest.mark.parametrize("check", [check_prefix, check_axis_moves, check_deterministic, check_topk_equals_topk1],
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("profile", ["dml:5.0", "onnx:24"])
def test_metamorphic_checks_hold_for_any_nan_placement_per_call(check, profile):
    run = NaNAnywhere()

    @FAST
    @given(case_and_input(profile, dtypes=["float32", "float16"], allow_nan=True, require_nan=True,
                          max_total=64))
    def holds(drawn):
        case, x = drawn
        check(case, x, run)
    holds()


def test_metamorphic_checks_with_nan_still_see_wrong_non_nan_values():
    def run(case, x):  # K=1 returns the smallest non-NaN value instead of the largest
        real = np.flatnonzero(~np.isnan(x))
        order = np.concatenate([real[np.argsort(-x[real], kind="stable")], np.flatnonzero(np.isnan(x))])
        idx = order[len(real) - 1:len(real)] if case.k == 1 else order[:case.k]
        return x[idx], idx.astype(np.int64)

    calls = []
    x = np.array([np.nan, 3.0, 1.0, 2.0], dtype=np.float32)
    with pytest.raises(Violation) as info:
        check_prefix(Case("onnx:11", "TopK", "float32", (4,), 0, 1, index_dtype="int64"), x,
                     lambda case, x: calls.append(case.k) or run(case, x))
    # The K=1 result is the wrong one (K=4's is right): the violation names it, made last.
    # No placement of NaN makes 1.0 the top 1: the documented K largest decides it.
    assert info.value.rules == ("out.values.select", "out.nan.unspecified"), info.value.rules
    assert "no placement of NaN" in info.value.message, info.value.message
    assert "expected [3.0], got [1.0]" in info.value.message, info.value.message
    assert calls == [4, 1], f"calls made: expected K=4 then K=1, got {calls}"


@pytest.mark.parametrize("check", [check_axis_moves, check_deterministic], ids=lambda c: c.__name__)
def test_unsorted_results_are_compared_as_sets(check):
    calls = []

    def run(case, x):  # sorted=0: a correct set, in an order that changes every call
        values, indices = bugs.CORRECT(x, axis=case.norm_axis, k=case.k, largest=case.largest)
        calls.append(1)
        if len(calls) % 2:
            values, indices = np.flip(values, axis=case.norm_axis), np.flip(indices, axis=case.norm_axis)
        return values, indices.astype(np.int64)

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(Case("onnx:11", "TopK", "float32", (3, 4), 1, 3, sorted=False, index_dtype="int64"), x, run)


def test_with_nan_each_result_is_judged_before_the_next_call():
    # A report replays the last call a check made: a broken result must be the last one made.
    calls = []

    def run(case, x):  # K above 1: index 0 twice
        calls.append(case.k)
        idx = np.zeros(case.k, dtype=np.int64) if case.k > 1 else np.array([2], dtype=np.int64)
        return x[idx], idx

    x = np.array([np.nan, 1.0, 2.0], dtype=np.float32)
    with pytest.raises(Violation) as info:
        check_prefix(Case("onnx:11", "TopK", "float32", (3,), 0, 1, index_dtype="int64"), x, run)
    assert info.value.rules[0] == "out.indices.range_distinct", info.value.rules
    assert calls == [3], f"calls made: expected only K=3 before the violation, got {calls}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "uint8"])
def test_has_nan_finds_a_nan_of_either_sign_anywhere(dtype):
    from topkspec.properties.result import has_nan
    from topkspec.spec import dtypes

    dt = dtypes.numpy_dtype(dtype)
    plain = np.array([[1, 0], [-0.0 if dt.kind not in "iu" else 2, 3]]).astype(dt)
    assert not has_nan(plain) and not has_nan(plain[:0])
    if dt.kind in "iu":
        return
    for sign in (1.0, -1.0):
        held = plain.copy()
        held[1, 0] = sign * np.nan
        assert has_nan(held), f"{dtype}: a NaN of sign {sign} at [1, 0] was not found"
