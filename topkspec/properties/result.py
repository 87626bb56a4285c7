"""Properties of one result: check_<name>(case, x, values, indices) -> None or raises Violation.

PROPERTIES lists them most specific first, the order `combined.check_result` runs the ones that
apply, so the violation it raises says the most precise thing that broke: shape and types, then
index range and distinctness, gathered values, the selected multiset, order, ties, and
exactness last.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from topkspec.spec import dtypes
from topkspec.properties import explain
from topkspec.properties.failures import Violation
from topkspec.properties.property import NAN, RESULT, SORTED, UNSORTED, Property, names_the_call, rules
from topkspec.properties.sequences import (
    as_numbers, at, bits, is_float_array, keys, nan_mask, rows, same_bits, show, take_rows, where,
)
from topkspec.spec.reference import float_has_nan, reference_topk

# The rules these checks enforce, as the spec's Rule objects (a typo fails at import).
(SHAPE, DTYPE_VALUES, DTYPE_INDICES, INDEX_RANGE, INDEX_BASE, GATHER, SELECT, ORDER, TIE_ORDER,
 TIE_KTH_PLACE, TIE_SIGNED_ZERO, EXACT, UNSORTED_SET, NAN_UNSPECIFIED,) = rules(
    "out.shape", "out.dtype.values", "out.dtype.indices", "out.indices.range_distinct",
    "out.indices.base", "out.values.gather", "out.values.select", "out.order",
    "out.ties.index_order", "out.ties.kth_place", "out.ties.signed_zero", "out.exact",
    "out.unsorted.set", "out.nan.unspecified")


def _short(row, limit=8) -> str:
    items = [show(v) for v in row[:limit]]
    return "[" + ", ".join(items) + (", ..." if len(row) > limit else "") + "]"


def _first(mask: np.ndarray) -> tuple[int, int]:
    r, p = np.argwhere(mask)[0]
    return int(r), int(p)


def type_name(arr) -> str:
    try:
        return dtypes.name_of(np.asarray(arr).dtype)
    except ValueError:
        return str(np.asarray(arr).dtype)


def _direction(case) -> str:
    return "largest" if case.largest else "smallest"


# Within remembered_references(): (case, id(x)) -> (x, the reference's result). The input is
# kept with its result, so its id cannot name another array while the block lasts.
_remembered: dict | None = None


@contextmanager
def remembered_references():
    """Within the block, reference_result works out each (case, input) once: the checks of an
    example share the reference's result instead of each sorting the input again. Inputs must
    not change in place within the block (the fuzz engine opens one per example)."""
    global _remembered
    outer, _remembered = _remembered, {}
    try:
        yield
    finally:
        _remembered = outer


def reference_result(case, x):
    """The reference's (values, indices) for the case, indices as the reference gives them:
    what `check_result` compares with."""
    if _remembered is None:
        return reference_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)
    key = (case, id(x))
    if key not in _remembered:
        _remembered[key] = (x, reference_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest))
    return _remembered[key][1]


# -- shape and types ------------------------------------------------------------------------

@names_the_call
def check_shape(case, x, values, indices):
    """out.shape: both outputs have the input's shape with the axis set to K."""
    for name, arr in (("values", values), ("indices", indices)):
        shape = tuple(np.shape(arr))
        if shape != case.out_shape:
            raise Violation(SHAPE,
                            f"{name} has shape {list(shape)}, expected {list(case.out_shape)} "
                            f"(input {list(case.shape)} with axis {case.norm_axis} set to K={case.k})",
                            where={"output": name}, expected=list(case.out_shape), actual=list(shape))


@names_the_call
def check_dtypes(case, x, values, indices):
    """out.dtype.values, out.dtype.indices: values of the input's type, indices of the index type."""
    got = type_name(values)
    if got != case.dtype:
        raise Violation(DTYPE_VALUES, f"values are {got}, expected {case.dtype}",
                        where={"output": "values"}, expected=case.dtype, actual=got)
    got = type_name(indices)
    if got != case.index_dtype:
        raise Violation(DTYPE_INDICES, f"indices are {got}, expected {case.index_dtype}",
                        where={"output": "indices"}, expected=case.index_dtype, actual=got)


# -- decomposed checks ------------------------------------------------------------------------

@names_the_call
def check_indices(case, x, values, indices):
    """out.indices.range_distinct, out.indices.base: each sequence's indices lie in
    [0, axis size), counted from the start of the sequence, and are distinct."""
    idx, outer = rows(case, as_numbers(indices))
    n = case.axis_size
    bad = (idx < 0) | (idx >= n)
    if is_float_array(idx):
        bad |= idx != np.floor(idx)
    if bad.any():
        r, p = _first(bad)
        raise Violation((INDEX_RANGE, INDEX_BASE),
                        f"{at(outer, r, p)}: index {show(idx[r, p])} is not an "
                        f"index of the sequence (expected 0 <= index < {n}, counted from the sequence start)",
                        where=where(outer, r, p), expected=f"0 <= index < {n}", actual=idx[r, p])
    ordered = np.sort(idx, axis=1)
    dup = ordered[:, 1:] == ordered[:, :-1]
    if dup.any():
        r, p = _first(dup)
        value = ordered[r, p]
        positions = [int(i) for i in np.flatnonzero(idx[r] == value)]
        raise Violation(INDEX_RANGE,
                        f"{at(outer, r, positions[1])}: index {show(value)} "
                        f"appears at positions {positions}; expected distinct indices",
                        where=where(outer, r, positions[1]), expected="distinct indices",
                        actual=idx[r].tolist())


def _gathered(case, x, indices):
    xr, outer = rows(case, x)
    ir, _ = rows(case, np.asarray(indices).astype(np.int64))
    return take_rows(xr, ir), xr, ir, outer


def _match(a, b) -> np.ndarray:
    """a equals b bit for bit (any NaN matching any NaN); across types, by value."""
    if a.dtype == b.dtype:
        return same_bits(a, b, nan_equal=True)
    ka, kb = keys(a), keys(b)
    return (ka == kb) | (nan_mask(a) & nan_mask(b))


@names_the_call
def check_gather(case, x, values, indices):
    """out.values.gather: each value is the input element at its index, bit for bit."""
    check_indices(case, x, values, indices)
    got, xr, ir, outer = _gathered(case, x, indices)
    vr, _ = rows(case, values)
    bad = ~_match(vr, got)
    if not bad.any():
        return
    r, p = _first(bad)
    broken = [GATHER]
    hint = ""
    shifted = ir[r] - 1
    if (shifted >= 0).all() and _match(vr[r], xr[r][shifted]).all():
        broken.append(INDEX_BASE)
        hint = " (the values match the indices minus one: indices look 1-based)"
    raise Violation(tuple(broken),
                    f"{at(outer, r, p)}: value {show(vr[r, p])} is not the input "
                    f"element at its index {int(ir[r, p])}, which is {show(got[r, p])}{hint}",
                    where=where(outer, r, p), expected=got[r, p], actual=vr[r, p])


@names_the_call
def check_select(case, x, values, indices):
    """out.values.select: the values are the K largest (smallest) of each sequence, as a multiset."""
    ref_values, _ = reference_result(case, x)
    vr, outer = rows(case, keys(values))
    rr, _ = rows(case, keys(ref_values))
    got, want = np.sort(vr, axis=1), np.sort(rr, axis=1)
    bad = (got != want).any(axis=1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        order = slice(None, None, -1) if case.largest else slice(None)
        raise Violation(SELECT,
                        f"{at(outer, r)}: expected the {case.k} {_direction(case)} values "
                        f"{_short(want[r][order])}, got {_short(got[r][order])}",
                        where=where(outer, r), expected=want[r][order], actual=got[r][order],
                        causes=explain.direction_causes(case, x, values, indices))


@names_the_call
def check_order(case, x, values, indices):
    """out.order: values descending for largest/DECREASING, ascending otherwise (when sorted)."""
    if not case.sorted:
        return
    vr, outer = rows(case, keys(values))
    bad = vr[:, :-1] < vr[:, 1:] if case.largest else vr[:, :-1] > vr[:, 1:]
    if bad.any():
        r, p = _first(bad)
        op = ">=" if case.largest else "<="
        raise Violation(ORDER,
                        f"{at(outer, r, p)}: expected {show(vr[r, p])} {op} next, "
                        f"got {show(vr[r, p])} then {show(vr[r, p + 1])}",
                        where=where(outer, r, p), expected=f"{op} {show(vr[r, p])}", actual=vr[r, p + 1],
                        causes=explain.direction_causes(case, x, values, indices))


def _signed_zeros(*scalars) -> bool:
    """True when the values are zeros of both signs."""
    arr = np.array([float(s) for s in scalars])
    return bool((arr == 0).all() and np.signbit(arr).any() and not np.signbit(arr).all())


def _tie_rules(case, x, values, indices, pair, rule) -> tuple[tuple, tuple]:
    """(rules, causes) for a tie out of place between the values `pair`: the rule that decides
    it first. Where breaking every tie by the higher index gives the result, the tie rule
    decides it whatever the values (-0.0 and +0.0 are tied like any others); a signed-zero
    failure is one that only ordering -0.0 apart from +0.0 gives. Both can give a result whose
    only ties are zeros of both signs: it is the signed-zero rule's, naming both causes, and a
    failure of the same target that only the tie order explains takes it over
    (fuzz.results.group_failures)."""
    causes = explain.tie_causes(case, x, values, indices)
    if _signed_zeros(*pair) and explain.ZEROS_APART in causes:
        return (TIE_SIGNED_ZERO, rule), causes
    return (rule,), tuple(c for c in causes if c != explain.ZEROS_APART)


def _cause_text(causes) -> str:
    return f" (the result is what {causes[0]} gives)" if len(causes) == 1 else ""


@names_the_call
def check_ties(case, x, values, indices):
    """out.ties.index_order, out.ties.kth_place, out.ties.signed_zero: equal values come out
    in ascending index order, the lower indices are the ones selected, and -0.0 ties with +0.0."""
    check_indices(case, x, values, indices)
    vr, outer = rows(case, keys(values))
    ir, _ = rows(case, np.asarray(indices).astype(np.int64))
    raw, _ = rows(case, values)
    if case.sorted:
        bad = (vr[:, :-1] == vr[:, 1:]) & (ir[:, :-1] > ir[:, 1:])
        if bad.any():
            r, p = _first(bad)
            broken, causes = _tie_rules(case, x, values, indices, (raw[r, p], raw[r, p + 1]), TIE_ORDER)
            raise Violation(broken,
                            f"{at(outer, r, p)}: equal values {show(raw[r, p])} and "
                            f"{show(raw[r, p + 1])} at indices {ir[r, p]} then {ir[r, p + 1]}: expected "
                            f"ascending index order{_cause_text(causes)}",
                            where=where(outer, r, p), expected=sorted([int(ir[r, p]), int(ir[r, p + 1])]),
                            actual=[int(ir[r, p]), int(ir[r, p + 1])], causes=causes)
    # The K-th place: every input element equal to the last value kept that has a lower index
    # than a kept equal element must be kept too. The last value kept is the boundary when
    # sorted; when unsorted, the boundary is the least extreme value kept.
    xr, _ = rows(case, keys(x))
    boundary = (vr.min(axis=1) if case.largest else vr.max(axis=1))
    n = xr.shape[1]
    equal = xr == boundary[:, None]
    kept = np.zeros(xr.shape, dtype=bool)
    np.put_along_axis(kept, ir, True, axis=1)
    pos = np.arange(n)
    last_kept = np.where(equal & kept, pos, -1).max(axis=1)
    first_left = np.where(equal & ~kept, pos, n).min(axis=1)
    bad_rows = first_left < last_kept
    if bad_rows.any():
        r = int(np.flatnonzero(bad_rows)[0])
        xraw, _ = rows(case, x)
        low, high = int(first_left[r]), int(last_kept[r])
        broken, causes = _tie_rules(case, x, values, indices, (xraw[r, low], xraw[r, high]), TIE_KTH_PLACE)
        raise Violation(broken,
                        f"{at(outer, r)}: the equal values at indices {low} "
                        f"({show(xraw[r, low])}) and {high} ({show(xraw[r, high])}) compete for the last places; "
                        f"expected index {low} kept, got index {high} kept instead{_cause_text(causes)}",
                        where=where(outer, r), expected=low, actual=high, causes=causes)


@names_the_call
def check_exact(case, x, values, indices):
    """out.exact: with NaN-free input, values and indices equal the reference bit for bit."""
    ref_values, ref_indices = reference_result(case, x)
    vr, outer = rows(case, values)
    rv, _ = rows(case, ref_values)
    ir, _ = rows(case, as_numbers(indices))
    ri, _ = rows(case, ref_indices)
    value_bad = ~_match(vr, rv) if vr.dtype != rv.dtype else bits(vr) != bits(rv)
    bad = value_bad | (ir != ri)
    if bad.any():
        r, p = _first(bad)
        raise Violation(EXACT,
                        f"{at(outer, r, p)}: expected value {show(rv[r, p])} at index {int(ri[r, p])}, "
                        f"got value {show(vr[r, p])} at index {show(ir[r, p])}",
                        where=where(outer, r, p), expected=[rv[r, p], int(ri[r, p])], actual=[vr[r, p], ir[r, p]])


# -- ONNX sorted=0 and NaN ------------------------------------------------------------------------

@names_the_call
def check_unsorted_set(case, x, values, indices):
    """out.unsorted.set: with sorted=0, the (index, value) pairs of each sequence are those of
    the reference, in any order."""
    check_gather(case, x, values, indices)
    _, ref_indices = reference_result(case, x)
    ir, outer = rows(case, as_numbers(indices))
    ri, _ = rows(case, ref_indices)
    got, want = np.sort(ir, axis=1), np.sort(ri, axis=1)
    bad = (got != want).any(axis=1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise Violation(UNSORTED_SET,
                        f"{at(outer, r)}: expected the indices {_short(want[r])} in any "
                        f"order, got {_short(got[r])}",
                        where=where(outer, r), expected=want[r], actual=got[r])


def _at_a_nan(case, values, violation) -> Violation:
    """`violation` (of the index or gather rules), naming the NaN rule too when it broke where a
    NaN was returned: with NaN present the NaN rule keeps those guarantees, and a NaN that
    comes back with an index outside the sequence (or twice) is where NaN handling went wrong."""
    place = violation.where or {}
    if "position" not in place:
        return violation
    vr, outer = rows(case, values)
    row = int(np.ravel_multi_index(place["sequence"], outer)) if outer else 0
    if not nan_mask(vr[row, place["position"]]):
        return violation
    return violation.with_(rules=violation.rules + (NAN_UNSPECIFIED,),
                           message=f"{violation.message} (a NaN was returned there)")


@names_the_call
def check_nan_policy_free(case, x, values, indices):
    """out.nan.unspecified: with NaN present, indices in range and distinct, values gathered
    from the input, and some placement of NaN makes the result right: its non-NaN values are
    the top non-NaN values, in order. A result no placement makes right is filed under the
    documented rule it breaks whatever NaN's place (explain.no_nan_placement)."""
    try:
        check_gather(case, x, values, indices)
    except Violation as violation:
        raise _at_a_nan(case, values, violation) from None
    wrong = explain.no_nan_placement(case, x, values)
    if wrong is not None:
        raise wrong


def has_nan(x) -> bool:
    x = np.asarray(x)
    if x.dtype.kind == "f":  # numpy's own floats (bfloat16 is not one: its minimum warns on NaN)
        return float_has_nan(x)
    return bool(nan_mask(x).any())


# -- the properties, most specific first -------------------------------------------------------

PROPERTIES = (
    Property("shape", check_shape, (SHAPE,), RESULT, True,
             words=((SHAPE, "returns outputs of the wrong shape"),)),
    Property("dtypes", check_dtypes, (DTYPE_VALUES, DTYPE_INDICES), RESULT, True,
             words=((DTYPE_VALUES, "returns values of the wrong type"),
                    (DTYPE_INDICES, "returns indices of the wrong type"))),
    Property("indices", check_indices, (INDEX_RANGE, INDEX_BASE), RESULT, True,
             words=((INDEX_BASE, "returns indices counted from 1"),
                    (INDEX_RANGE, "returns indices out of range or repeated"))),
    Property("gather", check_gather, (GATHER, INDEX_BASE), RESULT, True,
             words=((GATHER, "returns values that are not the input elements at the returned indices"),)),
    Property("select", check_select, (SELECT,), RESULT, False,
             words=((SELECT, "selects the wrong elements"),)),
    Property("order", check_order, (ORDER,), RESULT, False, when=SORTED,
             words=((ORDER, "returns values out of order"),)),
    Property("ties", check_ties, (TIE_ORDER, TIE_KTH_PLACE, TIE_SIGNED_ZERO),
             RESULT, False,
             words=((TIE_SIGNED_ZERO, "does not treat -0.0 and +0.0 as tied"),
                    (TIE_ORDER, "returns tied values out of index order"),
                    (TIE_KTH_PLACE, "keeps a later tied value in the last place instead of an earlier one"))),
    Property("exact", check_exact, (EXACT,), RESULT, False, when=SORTED, residual=True,
             words=((EXACT, "returns a wrong result"),)),
    Property("unsorted_set", check_unsorted_set, (UNSORTED_SET,), RESULT, False, when=UNSORTED, residual=True,
             words=((UNSORTED_SET, "returns the wrong elements with sorted=0"),)),
    Property("nan_policy_free", check_nan_policy_free,
             (NAN_UNSPECIFIED, INDEX_RANGE, GATHER, SELECT, ORDER), RESULT, True, when=NAN,
             words=((NAN_UNSPECIFIED, "returns the wrong non-NaN values when the input holds NaN"),)),
)
