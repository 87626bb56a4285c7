"""Readings that would make a wrong result right, for deciding which rule a failure is filed under.

A special rule fires only where the general one does not explain the result: a result that is
what breaking every tie by the higher index gives is a tie-order failure, even where the ties
are -0.0 and +0.0; it is a signed-zero failure only where ordering -0.0 apart from +0.0 (with
the other ties right) gives it. With NaN in the input, a result that some placement of NaN
makes right is judged only by our reading of NaN; one that none makes right breaks the
documented rules under every reading.

`ordered` is a TopK with those choices open: ties by the lower or the higher index, -0.0 below,
above or tied with +0.0, NaN largest or smallest.
"""
from __future__ import annotations

import numpy as np

from topkspec.properties.sequences import bits, is_float_array, keys, nan_mask, rows
from topkspec.spec.reference import take_rows

#: Causes a violation can name: general behaviours that explain a result (see Violation.causes).
HIGHER_INDEX_FIRST = "ties broken by the higher index"
ZEROS_APART = "-0.0 and +0.0 ordered as distinct values"
OTHER_DIRECTION = "the result for the other direction"  # largest for smallest, or the reverse
NAN_IN_THE_WAY = "NaN breaking the comparison of the other values"  # wrong values or order, wherever NaN goes

#: Rules a cause excuses: a failure merged under the cause does not break them (a tie broken by
#: the higher index between -0.0 and +0.0 treats them as tied, as it treats every tie).
EXCUSES = {HIGHER_INDEX_FIRST: ("out.ties.signed_zero",)}


def ordered(case, x, *, higher_index_first=False, minus_zero=None, nan=None):
    """(value rows, index rows) of the top K of each sequence of `x`, sorted by the case's
    direction, with: ties by the higher index when `higher_index_first`; -0.0 "below" or
    "above" +0.0 (None: they tie); NaN "largest" or "smallest" (for input holding NaN)."""
    xr, _ = rows(case, x)
    key = keys(xr)
    n = xr.shape[1]
    position = np.broadcast_to(np.arange(n), xr.shape)
    tie = -position if higher_index_first else position
    zero = np.zeros(xr.shape, dtype=np.int8)
    if minus_zero is not None and is_float_array(xr):
        minus = ((key == 0) & np.signbit(key)).astype(np.int8)  # 1 at -0.0
        below = minus_zero == "below"
        zero = minus if below == case.largest else -minus  # the larger zero first when largest
    nan_rank = np.zeros(xr.shape, dtype=np.int8)
    if nan is not None:
        isnan = nan_mask(xr)
        first = (nan == "largest") == case.largest
        nan_rank = np.where(isnan, 0 if first else 2, 1).astype(np.int8)
        key = np.where(isnan, 0, key)
    _, dense = np.unique(key, return_inverse=True)  # equal values one rank (-0.0 with +0.0); no overflow
    dense = dense.reshape(key.shape)
    value = -dense if case.largest else dense
    order = np.lexsort((tie, zero, value, nan_rank), axis=1)[:, :case.k]
    return take_rows(xr, order), order


def _same(case, values, indices, want) -> bool:
    """The result equals `want` (rows), values bit for bit and indices exactly; for sorted=0, as
    sets of indices (the values are checked against the input elsewhere)."""
    vr, _ = rows(case, values)
    ir, _ = rows(case, np.asarray(indices).astype(np.int64))
    wv, wi = want
    if not case.sorted:
        return bool((np.sort(ir, axis=1) == np.sort(wi, axis=1)).all())
    if vr.dtype != wv.dtype:
        return False
    same_values = bits(vr) == bits(wv)
    if is_float_array(vr):
        same_values |= nan_mask(vr) & nan_mask(wv)
    return bool(same_values.all() and (ir == wi).all())


def tie_causes(case, x, values, indices) -> tuple:
    """The general behaviours that give this (NaN-free) result exactly: every tie broken by the
    higher index, and/or -0.0 ordered apart from +0.0 with the other ties by the lower index."""
    found = []
    if _same(case, values, indices, ordered(case, x, higher_index_first=True)):
        found.append(HIGHER_INDEX_FIRST)
    if is_float_array(np.asarray(x)) and any(
            _same(case, values, indices, ordered(case, x, minus_zero=side)) for side in ("below", "above")):
        found.append(ZEROS_APART)
    return tuple(found)


def direction_causes(case, x, values, indices) -> tuple:
    """(OTHER_DIRECTION,) when the (NaN-free) result is exactly the other direction's, else ()."""
    flipped = case.with_(largest=not case.largest)
    return (OTHER_DIRECTION,) if _same(flipped, values, indices, ordered(flipped, x)) else ()


def nan_placements(case, x):
    """{placement: (value rows, index rows)}: the result with NaN largest and with NaN smallest
    (ties by the lower index), for messages."""
    return {f"NaN {side}": ordered(case, x, nan=side) for side in ("largest", "smallest")}


def _listed(row, limit=8) -> str:
    from topkspec.properties.sequences import show

    return "[" + ", ".join(show(v) for v in row[:limit]) + (", ..." if len(row) > limit else "") + "]"


def no_nan_placement(case, x, values):
    """With NaN in the input, a Violation when no placement of NaN makes the values right, else
    None (indices and gathered values are checked before). Wherever NaN goes, and however many
    NaNs a result returns, its non-NaN values are the top non-NaN values of the sequence, in
    order (in any order for sorted=0): a result that breaks this breaks the documented K largest
    (smallest) under every reading, or, with the right values out of order, the documented
    order. Only where the NaNs are is left to our reading (out.nan.unspecified)."""
    from topkspec.properties.failures import Violation
    from topkspec.properties.property import rules
    from topkspec.properties.sequences import at, where

    select, order_rule, nan_rule = rules("out.values.select", "out.order", "out.nan.unspecified")
    vr, outer = rows(case, keys(values))
    xr, _ = rows(case, keys(x))
    fill = -np.inf if case.largest else np.inf
    vnan = nan_mask(vr)
    front = take_rows(vr, np.argsort(vnan, axis=1, kind="stable"))  # non-NaN values first, as returned
    count = (~vnan).sum(axis=1)
    want = np.sort(np.where(nan_mask(xr), fill, xr), axis=1)
    want = (want[:, ::-1] if case.largest else want)[:, :vr.shape[1]]
    used = np.arange(vr.shape[1])[None, :] < count[:, None]
    got = np.where(used, front, fill)
    if not case.sorted:  # any order: the values sorted by direction
        got = np.sort(got, axis=1)
        got = got[:, ::-1] if case.largest else got
    bad = (used & (got != want)).any(axis=1)
    if not bad.any():
        return None
    r = int(np.flatnonzero(bad)[0])
    m = int(count[r])
    same_values = (np.sort(got[r, :m]) == np.sort(want[r, :m])).all()
    rule = order_rule if same_values else select
    direction = "largest" if case.largest else "smallest"
    placed = "; ".join(f"{name} gives {_listed(keys(v)[r])}" for name, (v, _) in nan_placements(case, x).items())
    return Violation(
        (rule, nan_rule),
        f"{at(outer, r)}: no placement of NaN makes this result right ({placed}): wherever NaN "
        f"goes, the non-NaN values returned are the {direction} non-NaN values of the sequence"
        f"{', in order' if case.sorted else ''}, so expected {_listed(want[r, :m])}, got {_listed(got[r, :m])}",
        where=where(outer, r), expected=want[r, :m], actual=got[r, :m], causes=(NAN_IN_THE_WAY,))
