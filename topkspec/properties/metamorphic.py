"""Metamorphic properties: relations between runs. check_<name>(case, x, run) where
run(case, x) -> (values, indices) calls the implementation under test.

They need no reference. Each call may place NaN anywhere (the spec leaves NaN's order
unspecified) and choose anew each time, so with NaN in the input each result is held, as soon
as it comes back, to what holds whatever it chose (rule out.nan.unspecified: indices in range
and distinct, values gathered from the input, the non-NaN values returned are the top non-NaN
values in order). That fixes the non-NaN values of every result as a prefix of one sequence,
so the relation between two results holds whenever each result does: the result that breaks it
is named, not the pair. Which NaN goes where, and how many NaNs are returned, are not
compared. Likewise ONNX sorted=0 leaves the order undefined, so unsorted results are compared
as sets of (index, value) pairs.

PROPERTIES holds each with the relation a report shows and replays.
"""
from __future__ import annotations

import numpy as np

from topkspec import spec
from topkspec.properties.failures import NONDETERMINISTIC, WRONG_RESULT, Violation
from topkspec.spec.profiles import parse_profile
from topkspec.properties.property import METAMORPHIC, Property, Relation, names_the_call, rules
from topkspec.properties.result import check_nan_policy_free, check_shape, has_nan
from topkspec.properties.sequences import at, by_index, rows, same_bits, show, where

# The rules these checks enforce, as the spec's Rule objects (a typo fails at import).
(PREFIX, AXIS_MOVES, TOPK_EQUALS_TOPK1, DETERMINISTIC,) = rules(
    "out.prefix", "out.axis_moves", "out.topk_equals_topk1", "out.deterministic")


def _outputs(result):
    values, indices = result
    return np.asarray(values), np.asarray(indices)


def _call(run, case, x):
    """run(case, x) as numpy arrays, of the case's shape (a relation cannot line up outputs of
    another shape); with NaN in x, the result is held at once to what holds whatever the NaN
    placement (see the module text). A violation names this call, the last one made."""
    result = _outputs(run(case, x))
    check_shape(case, x, *result)
    if has_nan(x):
        check_nan_policy_free(case, x, *result)
    return result


def _same_form(rule, what, failure_class, expected, actual, call):
    (ev, ei), (av, ai) = expected, actual
    if ev.shape != av.shape or ei.shape != ai.shape:
        raise Violation(rule, f"{what}: shapes differ, expected {list(ev.shape)}, got {list(av.shape)}",
                        failure_class=failure_class, expected=list(ev.shape), actual=list(av.shape), call=call)
    if ev.dtype != av.dtype or ei.dtype != ai.dtype:
        raise Violation(rule, f"{what}: types differ, expected {ev.dtype}/{ei.dtype}, got {av.dtype}/{ai.dtype}",
                        failure_class=failure_class, expected=[str(ev.dtype), str(ei.dtype)],
                        actual=[str(av.dtype), str(ai.dtype)], call=call)


def _compare(rule, what, case, expected, actual, *, call=None, failure_class=WRONG_RESULT, nan_equal=True):
    """Raise `rule` at the first place where two NaN-free results differ (values by bits,
    indices exactly; as sets of (index, value) for an unsorted case). `call`: the call whose
    result is `actual`, which the violation names (default `case`)."""
    call = call or case
    _same_form(rule, what, failure_class, expected, actual, call)
    if not case.sorted:
        expected, actual = by_index(case, *expected), by_index(case, *actual)
    (ev, ei), (av, ai) = expected, actual
    erv, outer = rows(case, ev)
    arv, _ = rows(case, av)
    eri, _ = rows(case, ei)
    ari, _ = rows(case, ai)
    bad = ~same_bits(erv, arv, nan_equal=nan_equal) | (eri != ari)
    if bad.any():
        r, p = (int(v) for v in np.argwhere(bad)[0])
        raise Violation(rule,
                        f"{what}: {at(outer, r, p)}: expected value {show(erv[r, p])} at index "
                        f"{show(eri[r, p])}, got value {show(arv[r, p])} at index {show(ari[r, p])}",
                        failure_class=failure_class, where=where(outer, r, p),
                        expected=[erv[r, p], eri[r, p]], actual=[arv[r, p], ari[r, p]], call=call)


@names_the_call
def check_prefix(case, x, run, *, max_k=None):
    """out.prefix: the result for a smaller K is a prefix of the result for a larger K.
    Compares K with the largest K allowed (`max_k`, default the axis size; or, when K is that
    already, half of it with K); sorted only."""
    top = case.axis_size if max_k is None else min(max_k, case.axis_size)
    small, large = (case.k, top) if case.k < top else (max(1, case.k // 2), case.k)
    if small == large or not case.sorted:
        return  # n == 1, or an unsorted request (no order, so no prefix)
    big = _call(run, case.with_(k=large), x)
    little = _call(run, case.with_(k=small), x)
    if has_nan(x):
        return  # each result held to the NaN rule in _call: the prefix holds (module text)
    what = f"K={small} against the first {small} of K={large}"
    prefix = tuple(np.take(a, np.arange(small), axis=case.norm_axis) for a in big)
    _compare(PREFIX, what, case.with_(k=small), prefix, little)


@names_the_call
def check_axis_moves(case, x, run):
    """out.axis_moves: moving the axis (a transpose) moves the result the same way.
    Needs rank 2 or more (a rank-1 tensor has nowhere to move its axis)."""
    if case.rank < 2:
        return
    axis = case.norm_axis
    moved_to = (axis + 1) % case.rank
    moved_x = np.ascontiguousarray(np.moveaxis(x, axis, moved_to))
    written = moved_to - case.rank if case.axis < 0 else moved_to
    moved_case = case.with_(shape=tuple(moved_x.shape), axis=written)
    original = _call(run, case, x)
    moved = _call(run, moved_case, moved_x)
    if has_nan(x):
        return  # each result held to the NaN rule in _call: the relation holds (module text)
    back = tuple(np.moveaxis(a, moved_to, axis) for a in moved)
    what = f"axis {axis} moved to {moved_to} and back"
    _compare(AXIS_MOVES, what, case, original, back, call=moved_case)


def compares_operators(profile) -> bool:
    """Whether `profile` has the two operators out.topk_equals_topk1 compares."""
    profile = parse_profile(profile)
    return profile.family == "dml" and {"TOP_K", "TOP_K1"} <= set(spec.ops(profile))


@names_the_call
def check_topk_equals_topk1(case, x, run):
    """out.topk_equals_topk1: DML_TOP_K gives what DML_TOP_K1 with DECREASING gives.
    Applies to DirectML profiles that have both operators."""
    if not compares_operators(case.profile):
        return
    top_k = case.with_(op="TOP_K", largest=True)
    top_k1 = case.with_(op="TOP_K1", largest=True)
    first = _call(run, top_k1, x)
    second = _call(run, top_k, x)
    if has_nan(x):
        return  # each result held to the NaN rule in _call: the relation holds (module text)
    what = "TOP_K against TOP_K1 DECREASING"
    _compare(TOPK_EQUALS_TOPK1, what, top_k1, first, second, call=top_k)


@names_the_call
def check_deterministic(case, x, run, *, repeats=2):
    """out.deterministic: the same input gives the same output, bit for bit, `repeats` times
    (what the rules fix: with NaN, where NaN goes is each call's choice; unsorted, the order)."""
    first = _call(run, case, x.copy())
    for attempt in range(1, repeats):
        again = _call(run, case, x.copy())
        what = f"run {attempt + 1} against run 1"
        if has_nan(x):  # each result held to the NaN rule in _call; the types must still agree
            _same_form(DETERMINISTIC, what, NONDETERMINISTIC, first, again, case)
            continue
        _compare(DETERMINISTIC, what, case, first, again, failure_class=NONDETERMINISTIC, nan_equal=False)


# -- the properties, with how a report lines up the calls of each relation (repro.relations replays them) -------------------------

def _first_k(first, second, case0, case1):
    k = case1.k
    first = tuple(np.take(a, np.arange(k), axis=case0.norm_axis) for a in first)
    return f"expected (first {k} of K={case0.k})", first, f"actual (K={k})", second


def _moved_back(first, second, case0, case1):
    second = tuple(np.moveaxis(a, case1.norm_axis, case0.norm_axis) for a in second)
    return "expected (original axis)", first, "actual (axis moved, moved back)", second


PROPERTIES = (
    Property("prefix", check_prefix, (PREFIX,), METAMORPHIC, True, group="metamorphic",
             words=((PREFIX, "gives a smaller K a result that is not the start of a larger K's"),),
             relation=Relation(
                 calls=2, sides=_first_k)),
    Property("axis_moves", check_axis_moves, (AXIS_MOVES,), METAMORPHIC, True, group="metamorphic",
             words=((AXIS_MOVES, "changes its result when the axis is moved"),),
             relation=Relation(
                 calls=2, sides=_moved_back)),
    Property("topk_equals_topk1", check_topk_equals_topk1, (TOPK_EQUALS_TOPK1,), METAMORPHIC, True,
             group="metamorphic", judges_at=compares_operators,
             words=((TOPK_EQUALS_TOPK1, "gives DML_TOP_K and DML_TOP_K1 (DECREASING) different results"),),
             relation=Relation(
                 calls=2,
                 sides=lambda first, second, *_: ("expected (TOP_K1 DECREASING)", first, "actual (TOP_K)", second))),
    Property("deterministic", check_deterministic, (DETERMINISTIC,), METAMORPHIC, True,
             group="deterministic",
             relation=Relation(
                 calls=1,
                 sides=lambda first, second, *_: ("expected (first run)", first, "actual (second run)", second))),
)

