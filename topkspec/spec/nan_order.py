"""The reference under a promised NaN order (spec.contracts NAN_ORDERS), for runtimes whose
contract orders NaN (or a run's --nan-order): "largest" (every NaN above every number, numpy's
and torch's sort order), "totalorder" (IEEE 754 totalOrder's sign-aware NaN: +NaN above every
number, -NaN below), "smallest" (every NaN below every number), "last" (every NaN after
every number in both directions: below them for the largest K, above them for the smallest K,
pyarrow's documented order). NaNs of one class tie, and ties
keep ascending index order; -0.0 and +0.0 stay tied (the signed-zeros point says otherwise where
a contract does). Kept apart from reference.py, whose own NaN placement (NaN above every number)
no property holds a target to."""
from __future__ import annotations

import numpy as np

from topkspec.spec.reference import axis_last, reference_topk, take_rows

NAN_ORDERS = ("largest", "totalorder", "smallest", "last")


def nan_class(x: np.ndarray, order: str, largest: bool = True) -> np.ndarray:
    """Per element: +1 for a NaN above every number, -1 below, 0 for a number (`largest`: the
    direction asked for, which places NaN under "last")."""
    values = np.asarray(x)
    as_float = values.astype(np.float64) if values.dtype.kind != "f" else values
    nan = np.isnan(as_float)
    if order == "largest":
        return nan.astype(np.int8)
    if order == "smallest" or (order == "last" and largest):
        return -nan.astype(np.int8)
    if order == "last":  # the smallest K: NaN above every number comes after them
        return nan.astype(np.int8)
    if order == "totalorder":
        return np.where(nan, np.where(np.signbit(as_float), -1, 1), 0).astype(np.int8)
    raise ValueError(f"unknown NaN order {order!r} (expected one of {', '.join(NAN_ORDERS)})")


def reference_topk_nan(x, *, axis: int, k: int, largest: bool, order: str):
    """reference_topk with NaN placed by `order`: the same (values, int64 indices), sorted by
    direction, ties in ascending index order."""
    x = np.asarray(x)
    values, indices = reference_topk(x, axis=axis, k=k, largest=largest)  # checks axis and k
    axis = axis % x.ndim
    moved = axis_last(x, axis)
    flat = moved.reshape(-1, moved.shape[-1])
    classes = nan_class(flat, order, largest)
    if not classes.any():
        return values, indices
    numbers = np.where(classes != 0, 0, flat.astype(np.float64) if flat.dtype.kind == "f" else flat)
    if largest:
        primary, secondary = -classes, -numbers if flat.dtype.kind == "f" else ~numbers
    else:
        primary, secondary = classes, numbers
    order_rows = np.lexsort((secondary, primary), axis=-1)[:, :k].astype(np.int64)
    shape = moved.shape[:-1] + (k,)
    out_values = take_rows(flat, order_rows).reshape(shape)
    out_indices = order_rows.reshape(shape)
    return np.moveaxis(out_values, -1, axis), np.moveaxis(out_indices, -1, axis)
