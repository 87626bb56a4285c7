"""TopK implementations with planted bugs, each of a kind real runtimes have had.

Every function has the plain-callable signature `topk(x, *, axis, k, largest=True) ->
(values, indices)` (DirectML semantics, int64 indices, raises to refuse an input), so it can be
named as a target by file path: `tests/planted_bugs.py:last_equal_at_kth`. `CORRECT` is the
reference and holds every property. The test suite shows that each bug is found and shrunk.
"""
from __future__ import annotations

import functools
import itertools
import os
import signal
import time

import numpy as np

from topkspec.spec.nan_order import reference_topk_nan
from topkspec.spec.reference import reference_topk


def CORRECT(x, *, axis, k, largest=True):
    return reference_topk(x, axis=axis, k=k, largest=largest)


def CORRECT_AXIS_FROM_0(x, *, axis, k, largest=True):
    """Correct, with DirectML's axis: it refuses any axis outside 0..rank-1, negative or not."""
    if not 0 <= axis < np.ndim(x):
        raise ValueError(f"axis {axis} is not in 0..{np.ndim(x) - 1}")
    return CORRECT(x, axis=axis, k=k, largest=largest)


# -- helpers: run the reference on each sequence as a 2-D array -------------------------------

def _per_row(x, axis, k, row_fn):
    """Apply row_fn(rows, k) -> (values, indices) to the sequences of x, laid out as rows."""
    x = np.asarray(x)
    if not 1 <= k <= x.shape[axis]:
        raise ValueError(f"k={k} out of range")
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    values, indices = row_fn(flat, k)
    shape = moved.shape[:-1] + (values.shape[-1],)
    return (np.moveaxis(values.reshape(shape), -1, axis),
            np.moveaxis(indices.reshape(shape).astype(np.int64), -1, axis))


def _ties_reversed(rows, k, largest):
    """Top k of each row with equal values in descending index order."""
    flipped = rows[:, ::-1]
    values, indices = reference_topk(flipped, axis=1, k=k, largest=largest)
    return values, rows.shape[1] - 1 - indices


# -- size-threshold algorithm switch -------------------------------------------------------------

def heap_path_above_64(x, *, axis, k, largest=True):
    """Sequences longer than 64 take a heap path that returns ties in descending index order."""
    if np.shape(x)[axis] <= 64:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    return _per_row(x, axis, k, lambda rows, kk: _ties_reversed(rows, kk, largest))


def k_over_half_ties(x, *, axis, k, largest=True):
    """When K is more than half the axis, a full-sort path returns ties in descending index order
    (so the result for a smaller K is no prefix of it)."""
    if 2 * k <= np.shape(x)[axis]:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    return _per_row(x, axis, k, lambda rows, kk: _ties_reversed(rows, kk, largest))


def inner_axis_ties(x, *, axis, k, largest=True):
    """An axis that is not the last takes a strided path that returns ties in descending index order."""
    if axis % np.ndim(x) == np.ndim(x) - 1:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    return _per_row(x, axis, k, lambda rows, kk: _ties_reversed(rows, kk, largest))


# -- ties and signed zeros -------------------------------------------------------------------------

def last_equal_at_kth(x, *, axis, k, largest=True):
    """At the K-th place, keeps the last of the equal values instead of the first."""
    def row_fn(rows, kk):
        values, indices = reference_topk(rows, axis=1, k=kk, largest=largest)
        for r in range(rows.shape[0]):
            boundary = values[r, -1]
            need = int((values[r] == boundary).sum())
            equal_at = np.flatnonzero(rows[r] == boundary)
            keep = equal_at[-need:]
            indices[r, kk - need:] = keep
            values[r, kk - need:] = rows[r, keep]
        return values, indices
    return _per_row(x, axis, k, row_fn)


def signed_zero_order(x, *, axis, k, largest=True):
    """Orders -0.0 below +0.0 (a total order on bits instead of IEEE equality)."""
    def row_fn(rows, kk):
        if rows.dtype.kind in "iu":
            return reference_topk(rows, axis=1, k=kk, largest=largest)
        wide = rows.astype(np.float64)
        sign_rank = np.signbit(wide).astype(np.int8)  # 0 for +0.0, 1 for -0.0
        position = np.broadcast_to(np.arange(rows.shape[1]), rows.shape)
        if largest:
            order = np.lexsort((position, sign_rank, -wide), axis=1)
        else:
            order = np.lexsort((position, -sign_rank, wide), axis=1)
        indices = order[:, :kk]
        return np.take_along_axis(rows, indices, axis=1), indices
    return _per_row(x, axis, k, row_fn)


def zero_sign_dropped(x, *, axis, k, largest=True):
    """Copies values through an addition of 0.0, which turns -0.0 into +0.0."""
    values, indices = CORRECT(x, axis=axis, k=k, largest=largest)
    if values.dtype.kind not in "iu":
        values = (values.astype(np.float64) + 0.0).astype(values.dtype)
    return values, indices


# -- narrowing and widening ----------------------------------------------------------------------

def narrowing_to_float32(x, *, axis, k, largest=True):
    """Computes in float32 and converts the values back (64-bit and 32-bit integers, float64)."""
    x = np.asarray(x)
    if x.dtype.itemsize < 4:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    with np.errstate(over="ignore", invalid="ignore"):  # the bug rounds and overflows silently
        values, indices = CORRECT(x.astype(np.float32), axis=axis, k=k, largest=largest)
        return values.astype(x.dtype), indices


def narrowing_to_float16(x, *, axis, k, largest=True):
    """Compares float32 values in float16 (distinct values that round together tie) but
    returns the original values at the chosen indices."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    with np.errstate(over="ignore"):  # large float32 values become inf, as the bug would have it
        _, indices = CORRECT(x.astype(np.float16), axis=axis, k=k, largest=largest)
    return np.take_along_axis(x, indices, axis=axis), indices


def negate_for_smallest(x, *, axis, k, largest=True):
    """Finds the smallest values as the largest of -x, which overflows for the integer minimum
    (and for every unsigned value but 0)."""
    x = np.asarray(x)
    if largest:
        return CORRECT(x, axis=axis, k=k, largest=True)
    with np.errstate(over="ignore"):
        negated = -x
    _, indices = CORRECT(negated, axis=axis, k=k, largest=True)
    return np.take_along_axis(x, indices, axis=axis), indices


# -- padding, axis, index base ------------------------------------------------------------------

def zero_padding_to_power_of_two(x, *, axis, k, largest=True):
    """Pads each sequence with 0 up to a power of two (a zero-filled scratch buffer) and selects
    from the padded sequence, so padding can win when the data lies on the wrong side of 0."""
    x = np.asarray(x)
    n = x.shape[axis]
    padded_n = 1 << max(0, (n - 1).bit_length())
    if padded_n == n:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, padded_n - n)
    return CORRECT(np.pad(x, pad), axis=axis, k=k, largest=largest)


def always_last_axis(x, *, axis, k, largest=True):
    """Ignores `axis` and works on the last one."""
    return CORRECT(x, axis=-1, k=min(k, np.shape(x)[-1]), largest=largest)


def wraps_the_axis(x, *, axis, k, largest=True):
    """Takes any axis modulo the rank, so an axis out of range (-2 for rank 1) is accepted."""
    return CORRECT(x, axis=axis % np.ndim(x), k=k, largest=largest)


def one_based_indices(x, *, axis, k, largest=True):
    """Returns indices counted from 1."""
    values, indices = CORRECT(x, axis=axis, k=k, largest=largest)
    return values, indices + 1


def flat_indices(x, *, axis, k, largest=True):
    """Returns offsets into the whole tensor instead of indices into the sequence."""
    values, indices = CORRECT(x, axis=axis, k=k, largest=largest)
    x = np.asarray(x)
    grids = list(np.indices(indices.shape, sparse=True))
    grids[axis] = indices
    return values, np.ravel_multi_index(tuple(grids), x.shape).astype(np.int64)


def values_from_next_sequence(x, *, axis, k, largest=True):
    """Reads the values from the next sequence (a row-stride bug) while the indices are right."""
    def row_fn(rows, kk):
        values, indices = reference_topk(rows, axis=1, k=kk, largest=largest)
        neighbour = np.take_along_axis(np.roll(rows, -1, axis=0), indices, axis=1)
        return neighbour, indices
    return _per_row(x, axis, k, row_fn)


def duplicate_index_on_ties(x, *, axis, k, largest=True):
    """Looks each selected value up again to find its index, so equal values share the first
    index of their value."""
    def row_fn(rows, kk):
        values, chosen = reference_topk(rows, axis=1, k=kk, largest=largest)
        key = rows.astype(np.float64) if rows.dtype.kind not in "iu" else rows
        order = np.argsort(key, axis=1, kind="stable")
        ordered = np.take_along_axis(key, order, axis=1)
        starts = np.ones(ordered.shape, dtype=bool)
        starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        group_start = np.maximum.accumulate(np.where(starts, np.arange(rows.shape[1]), 0), axis=1)
        first_of_group = np.take_along_axis(order, group_start, axis=1)
        position = np.argsort(order, axis=1)  # where each index sits in `order`
        return values, np.take_along_axis(first_of_group, np.take_along_axis(position, chosen, axis=1), axis=1)
    return _per_row(x, axis, k, row_fn)


def ignores_direction(x, *, axis, k, largest=True):
    """Always returns the largest values."""
    return CORRECT(x, axis=axis, k=k, largest=True)


def index_order_output(x, *, axis, k, largest=True):
    """Returns the right elements in index order instead of sorted by value."""
    values, indices = CORRECT(x, axis=axis, k=k, largest=largest)
    order = np.argsort(indices, axis=axis, kind="stable")
    return np.take_along_axis(values, order, axis=axis), np.take_along_axis(indices, order, axis=axis)


# -- output types and shapes ----------------------------------------------------------------------

def squeezes_unit_dims(x, *, axis, k, largest=True):
    """Drops dimensions of size 1 from the outputs."""
    values, indices = CORRECT(x, axis=axis, k=k, largest=largest)
    return np.squeeze(values), np.squeeze(indices)


def widened_values(x, *, axis, k, largest=True):
    """Returns values widened to 64 bits (float64 or int64/uint64)."""
    values, indices = CORRECT(x, axis=axis, k=k, largest=largest)
    kind = values.dtype.kind
    wide = np.int64 if kind == "i" else np.uint64 if kind == "u" else np.float64
    return values.astype(wide), indices


def int32_indices(x, *, axis, k, largest=True):
    """Returns int32 indices."""
    values, indices = CORRECT(x, axis=axis, k=k, largest=largest)
    return values, indices.astype(np.int32)


# -- NaN -----------------------------------------------------------------------------------------

def raises_on_nan(x, *, axis, k, largest=True):
    """Refuses any input holding NaN."""
    x = np.asarray(x)
    if x.dtype.kind not in "iu" and np.isnan(x.astype(np.float64)).any():
        raise RuntimeError("comparison failed: NaN in input")
    return CORRECT(x, axis=axis, k=k, largest=largest)


def nan_index_out_of_range(x, *, axis, k, largest=True):
    """Writes the axis size as the index of every NaN it returns."""
    values, indices = CORRECT(x, axis=axis, k=k, largest=largest)
    if values.dtype.kind not in "iu":
        indices = np.where(np.isnan(values.astype(np.float64)), np.shape(x)[axis], indices)
    return values, indices


def nan_placed_last(x, *, axis, k, largest=True):
    """Correct, except that every NaN counts as below every number (as a `>` that is false
    against NaN leaves it): a runtime that promises numpy's order (NaN above every number)
    breaks out.nan.order; one whose NaN order is unspecified breaks nothing."""
    from topkspec.spec.nan_order import reference_topk_nan

    return reference_topk_nan(np.asarray(x), axis=axis, k=k, largest=largest, order="smallest")


def nan_breaks_order(x, *, axis, k, largest=True):
    """Sorts each sequence holding NaN with a comparison sort whose `>` is false against NaN (as
    std::sort on floats does), then takes the first K: NaN splits the data into runs that are
    never merged, so smaller values can come before larger ones."""
    x = np.asarray(x)
    if x.dtype.kind in "iu" or not np.isnan(x.astype(np.float64)).any():
        return CORRECT(x, axis=axis, k=k, largest=largest)

    def before(a, b):
        return a > b if largest else a < b

    def row_fn(rows, kk):
        wide = rows.astype(np.float64)
        chosen = np.empty((rows.shape[0], kk), dtype=np.int64)
        for r in range(rows.shape[0]):
            row = wide[r].tolist()
            compare = functools.cmp_to_key(
                lambda i, j: -1 if before(row[i], row[j]) else 1 if before(row[j], row[i]) else 0)
            chosen[r] = sorted(range(len(row)), key=compare)[:kk]
        return np.take_along_axis(rows, chosen, axis=1), chosen
    return _per_row(x, axis, k, row_fn)


def subnormals_as_zero(x, *, axis, k, largest=True):
    """Compares subnormals as zero (denormals-are-zero, a deliberate speed mode): ties among the
    zeros and subnormals go by index; the values come back as the input holds them."""
    import ml_dtypes

    x = np.asarray(x)
    if x.dtype.kind in "iu":
        return CORRECT(x, axis=axis, k=k, largest=largest)
    wide = x.astype(np.float64)
    flushed = np.where(np.abs(wide) < float(ml_dtypes.finfo(x.dtype).tiny), 0.0, wide)
    _, indices = CORRECT(flushed, axis=axis, k=k, largest=largest)
    return np.take_along_axis(x, indices, axis=axis), indices


# -- validation --------------------------------------------------------------------------------

def accepts_k_above_n(x, *, axis, k, largest=True):
    """Never checks K: for K above the axis size it repeats the last element."""
    n = np.shape(x)[axis]
    if k <= n:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    values, indices = CORRECT(x, axis=axis, k=n, largest=largest)
    take = np.minimum(np.arange(k), n - 1)
    return np.take(values, take, axis=axis), np.take(indices, take, axis=axis)


def rejects_k_equal_n(x, *, axis, k, largest=True):
    """Applies the literal DirectML text: refuses K equal to the axis size."""
    if k >= np.shape(x)[axis]:
        raise ValueError(f"K={k} must be less than the axis size {np.shape(x)[axis]}")
    return CORRECT(x, axis=axis, k=k, largest=largest)


# -- nondeterminism, crash, hang ----------------------------------------------------------------

_calls = itertools.count()


def alternating_ties(x, *, axis, k, largest=True):
    """Every other call returns ties in descending index order (like a race between threads)."""
    if next(_calls) % 2 == 0:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    return _per_row(x, axis, k, lambda rows, kk: _ties_reversed(rows, kk, largest))


def segfaults_on_long_axis(x, *, axis, k, largest=True):
    """Kills its process (SIGSEGV) when the axis is longer than 1024: run it isolated."""
    if np.shape(x)[axis] > 1024:
        os.kill(os.getpid(), signal.SIGSEGV)
    return CORRECT(x, axis=axis, k=k, largest=largest)


def hangs_when_k_equals_n(x, *, axis, k, largest=True):
    """Never returns when K equals the axis size: run it isolated, with a time limit."""
    if k == np.shape(x)[axis]:
        while True:
            time.sleep(1)
    return CORRECT(x, axis=axis, k=k, largest=largest)


def slow_when_k_above_1(x, *, axis, k, largest=True):
    """Correct, but takes two seconds for any K above 1 (a slow pure-Python path): with a
    shorter time limit it is a timeout, no rule broken."""
    if k > 1:
        time.sleep(2)
    return CORRECT(x, axis=axis, k=k, largest=largest)


def refuses_everything(x, *, axis, k, largest=True):
    """Refuses every input."""
    raise ValueError("this implementation refuses every input")


# -- where the contract leaves NaN and ties open: consistent choices, and contradictions ---------

def _nan_moved(x, axis, k, largest, front):
    """The answer with NaN ordered before every number (`front`) or after every number, in
    the direction asked: a choice the NaN rule allows, made the same way each time it is made."""
    if np.asarray(x).dtype.kind != "f":
        return CORRECT(x, axis=axis, k=k, largest=largest)
    return reference_topk_nan(x, axis=axis, k=k, largest=largest, order="largest" if front == largest else "smallest")


def nan_first(x, *, axis, k, largest=True):
    """Consistent: NaN first in every answer (no document fixes where NaN goes)."""
    return _nan_moved(x, axis, k, largest, front=True)


def nan_last(x, *, axis, k, largest=True):
    """Consistent: NaN last in every answer (taken only when the numbers run out)."""
    return _nan_moved(x, axis, k, largest, front=False)


def ties_by_descending_index(x, *, axis, k, largest=True):
    """Consistent: tied values taken from the highest index down, every time (a runtime whose
    ties are unspecified may do so)."""
    return _per_row(x, axis, k, lambda rows, kk: _ties_reversed(rows, kk, largest))


def nan_first_alone_last_in_batch(x, *, axis, k, largest=True):
    """Contradicts itself: NaN first for a single sequence, last when the input holds more."""
    sequences = np.size(x) // max(1, np.shape(x)[axis])
    return _nan_moved(x, axis, k, largest, front=sequences == 1)


def nan_first_for_even_k(x, *, axis, k, largest=True):
    """Contradicts itself: NaN first for an even K, last for an odd one (each answer alone keeps
    the NaN rule, so only top-(K-1) against top-K shows it)."""
    return _nan_moved(x, axis, k, largest, front=k % 2 == 0)


def nan_first_on_last_axis(x, *, axis, k, largest=True):
    """Contradicts itself: NaN first when the axis is the last dimension, last otherwise (a
    strided path that orders NaN its own way)."""
    return _nan_moved(x, axis, k, largest, front=axis == np.ndim(x) - 1)


def nan_side_alternating(x, *, axis, k, largest=True):
    """Contradicts itself: NaN first on one call, last on the next (it shares _calls with
    alternating_ties)."""
    return _nan_moved(x, axis, k, largest, front=next(_calls) % 2 == 0)


def nan_last_for_constant_k(case, x):
    """A run(case, x) that contradicts itself: NaN first with K given as an input, last with K
    compiled in as a constant (Case.k_form)."""
    return _nan_moved(x, case.norm_axis, case.k, case.largest, front=case.k_form != "constant")


nan_last_for_constant_k.takes_case = True


def nan_last_for_constant_k_target():
    """A Target whose adapter passes K two ways (Target.k_forms) and which puts NaN last only
    with K compiled in: name it as `tests/planted_bugs.py:nan_last_for_constant_k_target`."""
    from topkspec.targets.base import Target

    class NanLastForConstantK(Target):
        name = "nan_last_for_constant_k"
        default_profile = "onnx:11"
        k_forms = ("input", "constant")

        def run(self, case, x):
            return nan_last_for_constant_k(case, x)
    return NanLastForConstantK()


def ties_reversed_in_batch(x, *, axis, k, largest=True):
    """Contradicts itself where ties are open: tied values in descending index order when the
    input holds more than one sequence, in ascending index order for one sequence alone."""
    if np.size(x) // max(1, np.shape(x)[axis]) == 1:
        return CORRECT(x, axis=axis, k=k, largest=largest)
    return _per_row(x, axis, k, lambda rows, kk: _ties_reversed(rows, kk, largest))
