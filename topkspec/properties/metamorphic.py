"""Metamorphic properties: relations between runs. check_<name>(case, x, run) where
run(case, x) -> (values, indices) calls the implementation under test.

They hold whatever the data (NaN included: two runs of one implementation on related inputs
must agree with each other, whatever its NaN policy), and they need no reference.
"""
from __future__ import annotations

import numpy as np

from topkspec import spec
from topkspec.failures import NONDETERMINISTIC, WRONG_RESULT, Violation
from topkspec.properties.sequences import at, rows, same_bits, show, where


def _outputs(result):
    values, indices = result
    return np.asarray(values), np.asarray(indices)


def _compare(rule, what, case, expected, actual, *, failure_class=WRONG_RESULT, nan_equal=True):
    """Raise `rule` at the first place where two results differ (values by bits, indices exactly)."""
    (ev, ei), (av, ai) = expected, actual
    if ev.shape != av.shape or ei.shape != ai.shape:
        raise Violation(rule, f"{rule}: {what}: shapes differ, expected {list(ev.shape)}, got {list(av.shape)}",
                        failure_class=failure_class, expected=list(ev.shape), actual=list(av.shape))
    if ev.dtype != av.dtype or ei.dtype != ai.dtype:
        raise Violation(rule, f"{rule}: {what}: types differ, expected {ev.dtype}/{ei.dtype}, got {av.dtype}/{ai.dtype}",
                        failure_class=failure_class, expected=[str(ev.dtype), str(ei.dtype)],
                        actual=[str(av.dtype), str(ai.dtype)])
    erv, outer = rows(case, ev)
    arv, _ = rows(case, av)
    eri, _ = rows(case, ei)
    ari, _ = rows(case, ai)
    bad = ~same_bits(erv, arv, nan_equal=nan_equal) | (eri != ari)
    if bad.any():
        r, p = (int(v) for v in np.argwhere(bad)[0])
        raise Violation(rule,
                        f"{rule}: {what}: {at(outer, r, p)}: expected value {show(erv[r, p])} at index "
                        f"{show(eri[r, p])}, got value {show(arv[r, p])} at index {show(ari[r, p])}",
                        failure_class=failure_class, where=where(outer, r, p),
                        expected=[erv[r, p], eri[r, p]], actual=[arv[r, p], ari[r, p]])


def check_prefix(case, x, run):
    """out.prefix: the result for a smaller K is a prefix of the result for a larger K.
    Compares K with the axis size (or, when K is the axis size, half of it with K); sorted only."""
    n = case.axis_size
    small, large = (case.k, n) if case.k < n else (max(1, case.k // 2), case.k)
    if small == large or not case.sorted:
        return  # n == 1, or an unsorted request (no order, so no prefix)
    big = _outputs(run(case.with_(k=large), x))
    little = _outputs(run(case.with_(k=small), x))
    prefix = tuple(np.take(a, np.arange(small), axis=case.norm_axis) for a in big)
    _compare("out.prefix", f"K={small} against the first {small} of K={large}",
             case.with_(k=small), prefix, little)


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
    original = _outputs(run(case, x))
    moved = _outputs(run(moved_case, moved_x))
    back = tuple(np.moveaxis(a, moved_to, axis) for a in moved)
    _compare("out.axis_moves", f"axis {axis} moved to {moved_to} and back", case, original, back)


def check_topk_equals_topk1(case, x, run):
    """out.topk_equals_topk1: DML_TOP_K gives what DML_TOP_K1 with DECREASING gives.
    Applies to DirectML profiles that have both operators."""
    if case.family != "dml" or "TOP_K1" not in spec.ops(case.profile):
        return
    top_k = case.with_(op="TOP_K", largest=True)
    top_k1 = case.with_(op="TOP_K1", largest=True)
    _compare("out.topk_equals_topk1", "TOP_K against TOP_K1 DECREASING", case,
             _outputs(run(top_k1, x)), _outputs(run(top_k, x)))


def check_deterministic(case, x, run, *, repeats=2):
    """out.deterministic: the same input gives the same output, bit for bit, `repeats` times."""
    first = _outputs(run(case, x.copy()))
    for attempt in range(1, repeats):
        again = _outputs(run(case, x.copy()))
        _compare("out.deterministic", f"run {attempt + 1} against run 1", case, first, again,
                 failure_class=NONDETERMINISTIC, nan_equal=False)
