"""The executable semantics of TopK: `reference_topk`, in numpy, vectorised.

Semantics (the spec's rules out.values.select, out.order, out.ties.index_order, out.ties.kth_place,
out.ties.signed_zero):
- each sequence along `axis` is ordered by value, descending when `largest` else ascending;
- equal values (IEEE equality, so -0.0 ties with +0.0) keep ascending index order;
- the first `k` of that order are returned, values copied bit for bit from the input.

NaN policy (the spec leaves NaN unspecified, rule out.nan.unspecified): NaN counts as
greater than every number, so it comes first when `largest` and last otherwise; NaNs tie
with one another. This matches numpy's sort order and torch.topk; properties never hold
a target to it.
"""
from __future__ import annotations

import numpy as np


def _sort_key(x: np.ndarray, largest: bool) -> np.ndarray:
    """A key whose ascending stable sort gives the wanted order, without overflow (`x` itself
    when it is one: the sort does not change it)."""
    kind = x.dtype.kind
    if kind in "ui":
        # bitwise not reverses unsigned order exactly, and signed order too (~x == -x - 1,
        # which never overflows)
        return ~x if largest else x
    # Floating types: compare in a type that holds them exactly; float16 and bfloat16 widen
    # to float32 without rounding. Negation is exact, and keeps -0.0 tied with +0.0.
    if x.dtype in (np.float32, np.float64):
        return -x if largest else x
    wide = x.astype(np.float32)
    return np.negative(wide, out=wide) if largest else wide


def axis_last(arr: np.ndarray, axis: int) -> np.ndarray:
    """`arr` with axis `axis` (non-negative) moved to the end: `arr` itself when it is there
    already, else one transpose (np.moveaxis's, without its checks)."""
    if axis == arr.ndim - 1:
        return arr
    return arr.transpose(tuple(a for a in range(arr.ndim) if a != axis) + (axis,))


def float_has_nan(arr: np.ndarray) -> bool:
    """Whether an array of a numpy float type holds NaN: one reduction (a NaN makes the
    minimum NaN), no mask."""
    return arr.dtype.kind == "f" and arr.size > 0 and bool(np.isnan(arr.min()))


def reference_topk(x, *, axis: int, k: int, largest: bool = True):
    """Top `k` values of `x` along `axis` and their int64 indices, sorted by direction.

    Raises ValueError when `axis` or `k` is out of range (k must be 1..size along axis).
    """
    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError("TopK needs a tensor of rank 1 or more")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for rank {x.ndim}")
    axis = axis % x.ndim
    n = x.shape[axis]
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must be in [1, {n}] (the size along axis {axis})")

    # Each sequence a row of a 2-D array: one flat gather picks the K values of every row
    # (numpy's take_along_axis builds an index per axis, several times slower on small inputs).
    last = axis == x.ndim - 1
    moved = axis_last(x, axis)
    flat = moved.reshape(-1, n)
    key = _sort_key(flat, largest)
    if float_has_nan(key):  # the key keeps the input's NaNs
        # Primary key: NaN first when largest, last otherwise; lexsort is stable.
        nan = np.isnan(key)
        primary = ~nan if largest else nan
        order = np.lexsort((key, primary), axis=-1)[:, :k]
    else:
        order = _first_k(key, k)
    indices = order.astype(np.int64, copy=False)
    shape = moved.shape[:-1] + (k,)
    values = take_rows(flat, indices).reshape(shape)
    indices = indices.reshape(shape)
    if last:
        return values, indices
    back = list(range(x.ndim - 1))
    back.insert(axis, x.ndim - 1)  # the last axis back to its place
    return values.transpose(back), indices.transpose(back)


def take_rows(arr: np.ndarray, order: np.ndarray) -> np.ndarray:
    """`np.take_along_axis(arr, order, axis=1)` for 2-D arrays, as one flat gather (numpy's
    general form builds a broadcast index per axis, several times slower)."""
    starts = np.arange(arr.shape[0], dtype=np.int64)[:, None] * arr.shape[1]
    return np.ascontiguousarray(arr).reshape(-1)[order + starts]


# Below this many elements per sequence, or with K above this share of them, one stable sort
# is as quick as selecting first.
_SELECT_FROM = 256
_SELECT_SHARE = 0.25


def _first_k(key: np.ndarray, k: int) -> np.ndarray:
    """The positions of the first `k` of each row of `key` (last axis) in a stable ascending
    sort, without sorting whole long rows: a partition finds the K-th key; the keys below it
    and, of the keys equal to it, the earliest ones make up K; only those are sorted (stably,
    in index order, so ties keep ascending index order as a full stable sort would)."""
    n = key.shape[-1]
    if n < _SELECT_FROM or k > _SELECT_SHARE * n:
        return np.argsort(key, axis=-1, kind="stable")[..., :k]
    flat = key.reshape(-1, n)
    kth = np.partition(flat, k - 1, axis=-1)[:, k - 1:k]
    below = flat < kth
    equal = flat == kth
    need = k - below.sum(axis=1, keepdims=True)
    chosen = below | (equal & (np.cumsum(equal, axis=1) <= need))
    positions = np.nonzero(chosen)[1].reshape(-1, k)  # each row's K positions, ascending
    order = np.argsort(take_rows(flat, positions), axis=1, kind="stable")
    return take_rows(positions, order).reshape(key.shape[:-1] + (k,))
