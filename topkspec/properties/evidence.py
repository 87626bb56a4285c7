"""What a wrong result shows, read off the result itself: the predicates a report's title is
guarded by (a diagnosis is named only where the evidence supports it) and the signature the
engine tells bugs apart by (fuzz.results.failure_key).

- `diagnosis`: what is wrong with one call's result, in one of a few words: the values
  (an index outside the sequence, a value not the input's at its index, not the K largest
  or smallest), only their order, or only the order among tied values;
- `one_based`: every index is off by exactly one (the result is right with each index less one);
- `ties_only`: the values are right, in order, and only which of the tied elements are named
  (or in which order) differs from the reference;
- `signature`: a diagnosis with the input's traits that set bugs apart (NaN, subnormals,
  zeros of both signs).
"""
from __future__ import annotations

import numpy as np

from topkspec.properties.sequences import bits, is_float_array, keys, nan_mask, rows
from topkspec.spec.reference import take_rows

VALUES = "values"  # the values (or the indices naming them) are wrong
ORDER = "order"  # the right values, out of order
TIES = "ties"  # the right values in the right order; only tied elements named otherwise
SHAPE = "shape"  # outputs of the wrong shape: nothing to compare element by element
RIGHT = "right"  # the result is right (a relation between calls broke, or nothing at all)


def _rows(case, x, values, indices):
    """(input rows, value rows, index rows as int64) or None when the shapes do not line up."""
    values, indices = np.asarray(values), np.asarray(indices)
    if values.shape != tuple(case.out_shape) or indices.shape != tuple(case.out_shape):
        return None
    xr, _ = rows(case, np.asarray(x))
    vr, _ = rows(case, values)
    try:
        ir, _ = rows(case, indices.astype(np.int64))
    except (TypeError, ValueError, OverflowError):
        return None
    if vr.dtype != xr.dtype:
        try:
            vr = vr.astype(xr.dtype)
        except (TypeError, ValueError):
            return None
    return xr, vr, ir


def _same(a, b) -> np.ndarray:
    same = bits(a) == bits(b)
    if is_float_array(a):
        same |= nan_mask(a) & nan_mask(b)
    return same


def _gathers(xr, vr, ir) -> bool:
    """Every index lies in its sequence and names the value returned beside it, bit for bit."""
    if ((ir < 0) | (ir >= xr.shape[1])).any():
        return False
    if xr.shape[0] and (np.sort(ir, axis=1)[:, 1:] == np.sort(ir, axis=1)[:, :-1]).any():
        return False
    return bool(_same(take_rows(xr, ir), vr).all())


def _references(case, x):
    """The right value rows (NaN-free input), or one per placement of NaN (largest, smallest)."""
    from topkspec.properties.explain import ordered

    xr = np.asarray(x)
    if nan_mask(xr).any():
        return [ordered(case, x, nan=side)[0] for side in ("largest", "smallest")]
    return [ordered(case, x)[0]]


def diagnosis(case, x, values, indices) -> str:
    """VALUES, ORDER, TIES, SHAPE or RIGHT for one call's result (see the module text). Each
    sequence is read against either placement of NaN on its own: a result that puts NaN first
    in one sequence and last in another has the right values in each."""
    lined = _rows(case, x, values, indices)
    if lined is None:
        return SHAPE
    xr, vr, ir = lined
    wants = [want.astype(vr.dtype) for want in _references(case, x)]
    if not _gathers(xr, vr, ir):
        return VALUES
    got = np.sort(keys(vr), axis=1)
    as_sets = [np.sort(keys(want), axis=1) for want in wants]
    if not _each_row_matches(got, as_sets, lambda a, b: np.array_equal(a, b, equal_nan=True)):
        return VALUES
    if not case.sorted or _each_row_matches(vr, wants, lambda a, b: bool(_same(a, b).all())):
        return TIES if _differs_from_reference(case, x, ir) else RIGHT
    return ORDER


def _each_row_matches(rows_got, rows_wanted, equal) -> bool:
    """Whether each row of `rows_got` equals that row of one of `rows_wanted` (any of them)."""
    return all(any(equal(row, want[r]) for want in rows_wanted) for r, row in enumerate(rows_got))


def _differs_from_reference(case, x, ir) -> bool:
    from topkspec.properties.explain import ordered

    want = [ordered(case, x, nan=side)[1] for side in ("largest", "smallest")] \
        if nan_mask(np.asarray(x)).any() else [ordered(case, x)[1]]
    if not case.sorted:
        ir, want = np.sort(ir, axis=1), [np.sort(w, axis=1) for w in want]
    return not _each_row_matches(ir, want, np.array_equal)


def one_based(case, x, values, indices) -> bool:
    """True when every index is off by exactly one: each index less one lies in its sequence
    and names the value returned, and the indices as returned do not."""
    lined = _rows(case, x, values, indices)
    if lined is None:
        return False
    xr, vr, ir = lined
    return _gathers(xr, vr, ir - 1) and not _gathers(xr, vr, ir)


def ties_only(case, x, values, indices) -> bool:
    """True when the values are right and in order, and only tied elements are named (or
    ordered) otherwise than the reference names them."""
    return diagnosis(case, x, values, indices) == TIES


def input_traits(x) -> tuple:
    """The traits of an input that set one bug apart from another: 'NaN', 'subnormals',
    'signed zeros' (zeros of both signs), as held."""
    x = np.asarray(x)
    if not is_float_array(x) or x.size == 0:
        return ()
    wide = keys(x)
    traits = []
    if nan_mask(x).any():
        traits.append("NaN")
    finite = wide[np.isfinite(wide)]
    if finite.size:
        tiny = _smallest_normal(x.dtype)
        if tiny is not None and ((finite != 0) & (np.abs(finite) < tiny)).any():
            traits.append("subnormals")
        zeros = finite[finite == 0]
        if zeros.size and np.signbit(zeros).any() and not np.signbit(zeros).all():
            traits.append("signed zeros")
    return tuple(traits)


def _sequence(case, x, values, indices, sequence):
    """(case, x, values, indices) of the one sequence at `sequence`, or None where the arrays
    do not have the case's shapes or the index is not one of its sequences."""
    x, values, indices = np.asarray(x), np.asarray(values), np.asarray(indices)
    if x.shape != tuple(case.shape) or values.shape != tuple(case.out_shape) or indices.shape != values.shape:
        return None
    picked = []
    for arr in (x, values, indices):
        moved = np.moveaxis(arr, case.norm_axis, -1)
        if len(sequence) != moved.ndim - 1 or any(not 0 <= i < n for i, n in zip(sequence, moved.shape)):
            return None
        picked.append(moved[sequence])
    return (case.with_(shape=picked[0].shape, axis=-1), *picked)


def _smallest_normal(dtype):
    """The smallest normal number of a float type (bfloat16's too), or None."""
    try:
        return float(np.finfo(dtype).smallest_normal)
    except (TypeError, ValueError):
        try:
            import ml_dtypes
            return float(ml_dtypes.finfo(dtype).smallest_normal)
        except (ImportError, TypeError, ValueError, AttributeError):
            return None


def signature(case, x, values, indices, sequence=None) -> tuple:
    """(diagnosis, NaN in the input or not): what a failure of one call is keyed by, so that
    different bugs breaking one rule (garbage values, and an unsorted tail after NaN) are
    each found and filed, while one bug's examples share it. With `sequence` (the index over
    the other dimensions that a violation names), read off that sequence alone: the one the
    rule was decided on, so that a reducer cutting the case down to it keeps the key."""
    if sequence is not None and x is not None:
        picked = _sequence(case, x, values, indices, tuple(sequence))
        if picked is not None:
            case, x, values, indices = picked
    nan = bool(nan_mask(np.asarray(x)).any()) if x is not None else False
    return (diagnosis(case, x, values, indices), "NaN" if nan else "no NaN")
