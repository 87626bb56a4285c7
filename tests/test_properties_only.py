"""Each property catches a planted bug that no other property catches, or says why none can exist.

tests/test_properties_planted.py shows that each check catches its planted bug. Here every
property of the catalogue either has a row of ONLY (a bug and a case where that property fires
and every other one that can judge the case holds), or a reason in NO_BUG_OF_ITS_OWN that the
tests below make good. A property fires when its check raises a violation filed under one of its
own rules: a relation whose calls break the NaN rule first (each call is held to it) reports that
rule's failure, as the campaign does, not its own.
"""
from __future__ import annotations

import functools
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from slow import slow
from hypothesis import find, given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import planted_bugs as bugs  # noqa: E402
from test_properties_planted import (  # noqa: E402
    FIND_SETTINGS, _ci, _nan, _raises, _topk_path_bug, _unsorted, direct_run,
)

from topkspec import spec  # noqa: E402
from topkspec.properties import CATALOGUE, check_nan_policy_free, check_rejects_invalid  # noqa: E402
from topkspec.properties.failures import Violation  # noqa: E402
from topkspec.properties.property import METAMORPHIC, RESULT  # noqa: E402
from topkspec.properties.result import has_nan, reference_result  # noqa: E402
from topkspec.spec import Case  # noqa: E402
from topkspec.strategies import case_and_input, invalid_descriptors  # noqa: E402

RESIDUAL = {prop.name for prop in CATALOGUE if prop.residual}  # speak only when nothing else broke


def _own(prop, check, *args):
    """The violation `check(*args)` raises when filed under one of `prop`'s rules, else None."""
    try:
        check(*args)
    except Violation as violation:
        return violation if violation.rules[0] in prop.rule_ids else None
    return None


def violations(fn, case, x, nan_order_promised=False) -> dict:
    """Property name -> its violation, for `fn` on a valid (case, x), judged as a campaign judges
    it: a refusal ends the example; a wrong shape leaves nothing else to read. The NaN order is
    checked only where a contract promises one (nan_order_promised: numpy's order)."""
    run = fn if getattr(fn, "takes_case", False) else direct_run(fn)
    judged = case.with_(index_dtype="int64")
    try:
        values, indices = run(judged, x)
    except Exception as exc:
        return {"accepts_valid": exc}
    found = {}
    for prop in CATALOGUE:
        if prop.name == "nan_order" and not nan_order_promised:
            continue
        if prop.kind == RESULT and prop.applies(judged, has_nan(x)):
            found[prop.name] = _own(prop, prop.check, judged, x, values, indices)
            if prop.name == "shape" and found["shape"]:
                break
    for prop in CATALOGUE:
        if prop.kind == METAMORPHIC:
            found[prop.name] = _own(prop, prop.check, judged, x, run)
    return {name: v for name, v in found.items() if v is not None}


def firing(fn, case, x, nan_order_promised=False) -> set[str]:
    return set(violations(fn, case, x, nan_order_promised))


@dataclass
class Only:
    prop: str
    bug: str
    strategy: object
    # the bug's `fn` is planted_bugs.<bug>, or a run that takes the case
    def fn(self):
        return _topk_path_bug if self.bug == "topk_path_bug" else getattr(bugs, self.bug)


ONLY = [
    Only("shape", "squeezes_unit_dims", _ci()),
    Only("dtypes", "widened_values", _ci()),
    Only("dtypes", "int32_indices", _ci()),
    Only("indices", "duplicate_index_on_ties", _ci()),
    Only("gather", "zero_sign_dropped", _ci(dtypes=["float32", "float16"])),
    Only("select", "narrowing_to_float16", _ci(dtypes=["float32"])),
    Only("order", "index_order_output", _ci()),
    Only("ties", "signed_zero_order", _ci(dtypes=["float32", "float16"])),
    Only("ties", "heap_path_above_64", _ci()),
    Only("nan_policy_free", "nan_breaks_order", _ci(dtypes=["float32"], allow_nan=True)),
    Only("nan_order", "nan_placed_last", _ci(dtypes=["float32"], allow_nan=True, require_nan=True)),
    Only("accepts_valid", "raises_on_nan", _ci(dtypes=["float32"], allow_nan=True)),
    Only("accepts_valid", "rejects_k_equal_n", _ci("onnx:24")),
    Only("self_batch", "nan_first_alone_last_in_batch", _nan("dml:5.0")),
    Only("self_prefix", "nan_first_for_even_k", _nan()),
    Only("self_axis", "nan_first_on_last_axis", _nan()),
]

# Why a property has no bug of its own, each made good by a test below.
NO_BUG_OF_ITS_OWN = {
    "exact": "residual: with NaN-free input and sorted output, a result that keeps indices, gather, "
             "select, order and ties is the reference's, bit for bit (test_the_residual_checks_add_"
             "nothing, which fails when one of those checks is left out); it states the whole result "
             "in one rule where nothing more precise broke",
    "unsorted_set": "residual, for sorted=0: indices, gather, select and the K-th place fix the set of "
                    "(index, value) pairs (test_the_residual_checks_add_nothing)",
    "prefix": "a relation between calls each held to the single-result rules: a NaN-free sorted result "
              "is unique, so two right calls agree, and with NaN each call may place NaN anew (rule "
              "out.prefix), so NaN placed differently for K and K+1 is no bug "
              "(test_nan_placed_by_each_call_is_no_bug). It earns its place by needing no reference "
              "and by calling other K itself: it catches an algorithm switch on K from an example whose "
              "own result is right (test_relations_catch_from_an_example_whose_result_is_right)",
    "axis_moves": "a relation, as prefix: it calls the moved layout itself, so it catches a strided "
                  "path's bug from an example whose own layout is right",
    "deterministic": "a relation, as prefix: each call must be right, so two right calls agree; only "
                     "it repeats a call, so only it catches a bug that is wrong on some calls from an "
                     "example whose first call is right, and classes it as nondeterministic",
    "topk_equals_topk1": "a relation, as prefix: a bug of one operator's path breaks single-result "
                         "rules too, but only our readings (out.ties.kth_place, out.exact); under "
                         "--documents-only it is the one documented rule broken "
                         "(test_topk_equals_topk1_is_the_documented_rule_a_path_bug_breaks)",
    "self_k_input": "judged only for a target whose adapter passes K two ways (Target.k_forms), which a "
                    "plain function cannot: of the self-consistency relations it alone fires on a runtime "
                    "that puts NaN last only with K compiled in (test_only_k_input_sees_the_k_form)",
    "same_layout": "a relation between a laid-out DirectML call and the packed one, which a plain callable "
                   "cannot make (it has no layout): its own bug, a call that reads the input without its "
                   "strides, is planted in test_properties_planted.py (numpy) and tests/test_directml_layouts.py "
                   "(DirectML)",
    "half_precision": "it judges only a laid-out DirectML call with ALLOW_HALF_PRECISION_COMPUTATION on FLOAT32 "
                      "values, which a plain callable cannot make; its own bug (the top K by FLOAT16 keys out of "
                      "order) is planted in test_properties_planted.py",
    "no_write_outside": "it reads the bytes around a laid-out call's outputs, which a plain callable does not "
                        "have: its own bug, a write past the output's last element, leaves every result rule "
                        "holding and is planted in test_properties_planted.py and tests/test_directml_layouts.py",
    "self_repeat": "a relation, as deterministic: a bug that answers a repeated call two ways answers the "
                   "other relations' calls two ways too, so it breaks them as well; only it repeats a call "
                   "with NaN or open ties, so only it catches such a bug from an example whose other calls "
                   "agree, and classes it as nondeterministic (test_only_repeat_sees_an_answer_that_alternates)",
}


def test_every_property_has_a_bug_of_its_own_or_a_reason():
    covered = {row.prop for row in ONLY} | set(NO_BUG_OF_ITS_OWN) | {"rejects_invalid"}
    assert covered == {prop.name for prop in CATALOGUE}, covered ^ {prop.name for prop in CATALOGUE}


@pytest.mark.parametrize("row", ONLY, ids=lambda row: f"{row.prop}-{row.bug}")
@slow
def test_a_bug_only_its_property_catches(row):
    # Such a draw can be rare (index_order_output: about 1 in 300, where no relation fires
    # beside the order), and which draws come first moves with the code Hypothesis has seen
    # (it draws constants from the modules loaded): search long enough to find it whatever came first.
    fn = row.fn()
    promised = row.prop == "nan_order"  # a NaN order is checked where a contract promises one
    drawn = find(row.strategy, lambda d: firing(fn, *d, promised) - RESIDUAL == {row.prop},
                 settings=settings(FIND_SETTINGS, max_examples=3000))
    assert firing(fn, *drawn, promised) - RESIDUAL == {row.prop}


def test_accepting_an_invalid_k_is_caught_only_by_rejects_invalid():
    """accepts_k_above_n computes every valid case right; only an invalid draw shows its bug."""
    fn = bugs.accepts_k_above_n
    valid = find(_ci("dml:5.0"), lambda d: True, settings=FIND_SETTINGS)
    assert firing(fn, *valid) == set()
    invalid = find(invalid_descriptors("dml:5.0", "dml.k.max"),
                   lambda draw: _raises(check_rejects_invalid, draw, direct_run(fn)), settings=FIND_SETTINGS)
    assert invalid.case.k > invalid.case.axis_size


# -- the reasons ---------------------------------------------------------------------------------

def _near_reference(case, x, data):
    """The reference's result with one subtle change drawn: two output places swapped, or one
    place given the index (and element) of another input element equal to it, or a zero's sign
    flipped in the values."""
    values, indices = (np.array(a) for a in reference_result(case.with_(index_dtype="int64"), x))
    vr = np.moveaxis(values, case.norm_axis, -1).reshape(-1, case.k).copy()
    ir = np.moveaxis(indices, case.norm_axis, -1).reshape(-1, case.k).copy()
    xr = np.moveaxis(x, case.norm_axis, -1).reshape(-1, case.axis_size)
    r = data.draw(st.integers(0, vr.shape[0] - 1))
    p = data.draw(st.integers(0, case.k - 1))
    change = data.draw(st.sampled_from(["swap", "equal element", "zero sign"]))
    if change == "swap":
        q = data.draw(st.integers(0, case.k - 1))
        vr[r, [p, q]], ir[r, [p, q]] = vr[r, [q, p]], ir[r, [q, p]]
    elif change == "equal element":
        same = np.flatnonzero(xr[r].astype(np.float64) == float(xr[r, ir[r, p]]))
        i = data.draw(st.sampled_from(same.tolist()))
        vr[r, p], ir[r, p] = xr[r, i], i
    elif vr.dtype.kind == "f" and vr[r, p] == 0:
        vr[r, p] = -vr[r, p]
    shape = np.moveaxis(values, case.norm_axis, -1).shape
    back = lambda a: np.moveaxis(a.reshape(shape), -1, case.norm_axis)  # noqa: E731
    return back(vr), back(ir)


@settings(max_examples=300, deadline=None, database=None)
@given(drawn=st.one_of(case_and_input("onnx:24"), _unsorted("onnx:11")), data=st.data())
def test_the_residual_checks_add_nothing(drawn, data):
    """Whatever subtle change a result has, the residual check fails only where another did."""
    case, x = drawn
    case = case.with_(index_dtype="int64")
    values, indices = _near_reference(case, x, data)
    checks = [prop for prop in CATALOGUE if prop.kind == RESULT and prop.applies(case, has_nan(x))]
    fired = {prop.name for prop in checks if _own(prop, prop.check, case, x, values, indices) is not None}
    if fired & RESIDUAL:
        assert fired - RESIDUAL, f"only {fired} fired on {case.describe()}: the residual check saw a gap"


def test_nan_placed_by_each_call_is_no_bug():
    """NaN placed differently for K and K+1 breaks no rule of one result nor out.prefix: where
    NaN goes is each call's choice (rules out.nan.unspecified and out.prefix). Only the runtime
    contradicting itself is left (self.prefix): it puts NaN first for one K and last for the next."""
    x = np.array([3.0, np.nan, 1.0, 2.0], np.float32)
    case = Case("onnx:24", "TopK", "float32", (4,), -1, 3, index_dtype="int64")
    for k in (1, 2, 3, 4):
        assert firing(bugs.nan_first_for_even_k, case.with_(k=k), x) == {"self_prefix"}, k
        assert firing(bugs.nan_first, case.with_(k=k), x) == set(), k  # the same choice every time
        assert firing(bugs.nan_last, case.with_(k=k), x) == set(), k
    # ...while a NaN returned with a bad index breaks the NaN rule, not only the index rule
    values, indices = bugs.nan_index_out_of_range(x, axis=0, k=2)
    with pytest.raises(Violation) as info:
        check_nan_policy_free(case.with_(k=2), x, values, indices)
    assert info.value.rules == ("out.indices.range_distinct", "out.indices.base", "out.nan.unspecified")
    assert "a NaN was returned there" in info.value.message
    x = np.array([3.0, 1.0, np.nan], np.float32)
    values, indices = bugs.one_based_indices(x, axis=0, k=2, largest=False)
    with pytest.raises(Violation) as info:  # the smallest two are numbers: no NaN where it broke
        check_nan_policy_free(case.with_(shape=(3,), k=2, largest=False), x, values, indices)
    assert "out.nan.unspecified" not in info.value.rules, info.value.rules


def test_relations_catch_from_an_example_whose_result_is_right():
    """The relations call the target themselves (another K, the call again), so they catch a
    bug from an example whose own result every single-result check passes."""
    x = np.array([1.0, 1.0, 1.0, 0.0], np.float32)
    case = Case("onnx:24", "TopK", "float32", (4,), -1, 1, index_dtype="int64")
    # K=1 is right; K=4 (more than half the axis) takes the path with the ties reversed
    assert "prefix" in firing(bugs.k_over_half_ties, case, x)
    assert "ties" not in firing(bugs.k_over_half_ties, case, x)
    # the last axis is right; the axis moved inward takes the strided path with the ties reversed
    x2 = np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0]], np.float32)
    fired = firing(bugs.inner_axis_ties, case.with_(shape=(2, 3), k=2), x2)
    assert "axis_moves" in fired and "ties" not in fired, fired
    bugs._calls = itertools.count()  # alternating_ties: the first call is right
    fired = firing(bugs.alternating_ties, case.with_(k=2), x)
    assert "deterministic" in fired and "ties" not in fired


def test_topk_equals_topk1_is_the_documented_rule_a_path_bug_breaks():
    """A TOP_K path that keeps the last equal value at the K-th place breaks our readings
    (out.ties.kth_place, out.exact) and, of the documented rules, only out.topk_equals_topk1."""
    fn = _topk_path_bug
    case, x = find(_ci("dml:5.0"), lambda d: "topk_equals_topk1" in firing(fn, *d), settings=FIND_SETTINGS)
    broken = set()
    for op in ("TOP_K", "TOP_K1"):
        broken |= {v.rules[0] for v in violations(fn, case.with_(op=op, largest=True), x).values()}
    documented = {rule for rule in broken if spec.RULES[rule].status == "documented"}
    assert documented == {"out.topk_equals_topk1"}, broken


def test_only_k_input_sees_the_k_form():
    """A runtime that puts NaN last only with K compiled in: every other self-consistency
    relation makes its calls with K passed one way, and agrees."""
    from topkspec.properties.self_consistency import PROPERTIES as SELF

    x = np.array([3.0, np.nan, 1.0, -np.nan], np.float32)
    case = Case("onnx:24", "TopK", "float32", (4,), -1, 2, index_dtype="int64")
    forms = {"self_k_input": {"k_forms": ("input", "constant")}}
    fired = {prop.name for prop in SELF
             if _own(prop, functools.partial(prop.check, **forms.get(prop.name, {})), case, x,
                     bugs.nan_last_for_constant_k)}
    assert fired == {"self_k_input"}, fired
    assert firing(bugs.nan_last_for_constant_k, case, x) == set()  # nothing else asks for K as a constant


def test_only_repeat_sees_an_answer_that_alternates():
    """The call repeated is the one relation whose two calls are the same call: a runtime that
    puts NaN first and last on alternate calls breaks it from an example whose first call is
    right, as a nondeterministic failure."""
    from topkspec.properties.failures import NONDETERMINISTIC
    from topkspec.properties.self_consistency import check_self_repeat

    x = np.array([3.0, np.nan, 1.0, 2.0], np.float32)
    case = Case("onnx:24", "TopK", "float32", (4,), -1, 2, index_dtype="int64")
    bugs._calls = itertools.count()
    with pytest.raises(Violation) as info:
        check_self_repeat(case, x, direct_run(bugs.nan_side_alternating))
    assert info.value.rules == ("self.repeat",) and info.value.failure_class == NONDETERMINISTIC, info.value
    assert "NaN first on run 1, nowhere on run 2" in info.value.message, info.value.message
