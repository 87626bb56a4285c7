"""Planted targets for grouping failures by bug, for titles true to the evidence, and for what a
refusal is: plain functions `topk(x, *, axis, k, largest=True) -> (values, indices)` (DirectML
semantics), named by file path: `tests/planted_by_bug.py:garbage_in_int8_and_nan_tail`.
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np

from topkspec.spec.reference import reference_topk


def _library():
    """A stand-in for a library the functions call: a module of its own file."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "planted_library.py")
    spec = importlib.util.spec_from_file_location("planted_library", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def garbage_in_int8_and_nan_tail(x, *, axis, k, largest=True):
    """Two bugs: 8-bit integer input gets uninitialised memory back (values and indices); float
    input holding NaN gets the values after the first NaN left in input order."""
    x = np.asarray(x)
    values, indices = reference_topk(x, axis=axis, k=k, largest=largest)
    if x.dtype.itemsize == 1 and x.dtype.kind in "iu":
        rng = np.random.default_rng(int(np.abs(x.astype(np.int64)).sum()) + x.size)
        indices = rng.integers(-70000, 70000, size=indices.shape).astype(np.int64)
        garbage = rng.integers(0, 256, size=values.shape).astype(np.uint8)
        return garbage.view(x.dtype), indices
    if x.dtype.kind == "f" and np.isnan(x).any():
        moved = np.moveaxis(x, axis, -1)
        flat = moved.reshape(-1, moved.shape[-1])
        v = np.moveaxis(values, axis, -1).reshape(-1, k).copy()
        i = np.moveaxis(indices, axis, -1).reshape(-1, k).copy()
        for r in range(flat.shape[0]):
            nans = np.flatnonzero(np.isnan(flat[r]))
            if nans.size and nans[0] + 1 < flat.shape[1]:  # after the first NaN, as the input has them
                tail = np.arange(nans[0] + 1, flat.shape[1])[: max(0, k - 1)]
                i[r, 1:1 + tail.size] = tail
                i[r, 0] = nans[0]
                v[r] = flat[r][i[r]]
        shape = moved.shape[:-1] + (k,)
        return np.moveaxis(v.reshape(shape), -1, axis), np.moveaxis(i.reshape(shape), -1, axis)
    return values, indices


def ties_first_last_from_3(x, *, axis, k, largest=True):
    """On axes of 3 or more, the first of each group of equal values comes after its ties: one
    bug that breaks the tie order (K keeps them all) and the K-th place (K keeps one), with no
    general cause (the higher index first) to join them: one report."""
    x = np.asarray(x)
    if x.shape[axis] < 3:
        return reference_topk(x, axis=axis, k=k, largest=largest)
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    n = flat.shape[1]
    rows_v, rows_i = [], []
    for row in flat:
        _, first, dense = np.unique(row, return_index=True, return_inverse=True)
        tie = np.arange(n) + n * np.isin(np.arange(n), first)  # the first of its value goes last
        order = np.lexsort((tie, -dense if largest else dense))[:k]
        rows_v.append(row[order])
        rows_i.append(order)
    shape = moved.shape[:-1] + (k,)
    return (np.moveaxis(np.array(rows_v).reshape(shape), -1, axis),
            np.moveaxis(np.array(rows_i, dtype=np.int64).reshape(shape), -1, axis))


def internal_error_on_rank_3(x, *, axis, k, largest=True):
    """Calls a library whose own code raises AttributeError on input of rank 3 or more (a valid case)."""
    return _library().top_k(np.asarray(x), axis=axis, k=k, largest=largest)


def unpacks_wrongly_at_whole_axis(x, *, axis, k, largest=True):
    """Calls a library whose own code unpacks the wrong number of values when K is the axis size."""
    return _library().top_k_unpacking(np.asarray(x), axis=axis, k=k, largest=largest)


def refuses_with_value_error(x, *, axis, k, largest=True):
    """Refuses K above 1 with a ValueError naming the argument, from the library: a refusal."""
    return _library().top_k_checked(np.asarray(x), axis=axis, k=k, largest=largest)


def refuses_wide_unsigned(x, *, axis, k, largest=True):
    """Has no kernel for uint32 and uint64, and says so naming the type: one finding per type."""
    return _library().top_k_typed(np.asarray(x), axis=axis, k=k, largest=largest)


def negates_for_largest(x, *, axis, k, largest=True):
    """The docs' my_topk: sorting the negated input wraps unsigned integers and the most negative
    signed one, and numpy's sort of bfloat16 (ml_dtypes') does not keep NaN apart: two bugs of
    one kind (wrong values), one with NaN and one without."""
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices


def smallest_for_largest(x, *, axis, k, largest=True):
    """One bug, NaN or not: the smallest K of a float input where the largest are asked for."""
    x = np.asarray(x)
    return reference_topk(x, axis=axis, k=k, largest=largest and x.dtype.kind not in "fV")
