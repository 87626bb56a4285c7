"""Views the properties share: outputs as rows of sequences, bit patterns, comparable keys."""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.spec.reference import axis_last, take_rows


def rows(case, arr) -> tuple[np.ndarray, tuple]:
    """`arr` with the case's axis moved last and the other axes flattened: (rows, outer shape).
    Row r is the sequence at `sequence_of(outer, r)`."""
    moved = axis_last(np.asarray(arr), case.norm_axis)
    return moved.reshape(-1, moved.shape[-1]), moved.shape[:-1]


def sequence_of(outer: tuple, row: int) -> tuple:
    """The index of row `row` over the non-axis dimensions, e.g. (0, 2)."""
    if not outer:
        return ()
    return tuple(int(i) for i in np.unravel_index(int(row), outer))


def where(outer, row, position=None) -> dict:
    out = {"sequence": sequence_of(outer, row)}
    if position is not None:
        out["position"] = int(position)
    return out


def at(outer, row, position=None) -> str:
    """'sequence (0, 2) position 1' for messages ('position 1' for a rank-1 input, whose
    only sequence is the whole tensor)."""
    parts = [f"sequence {sequence_of(outer, row)}"] if outer else []
    if position is not None:
        parts.append(f"position {int(position)}")
    return " ".join(parts) or "the sequence"


def by_index(case, values, indices) -> tuple[np.ndarray, np.ndarray]:
    """A result with each sequence's (value, index) pairs put in ascending index order, so two
    results compare as sets of pairs (ONNX sorted=0 leaves their order open)."""
    values, indices = np.asarray(values), np.asarray(indices)
    value_rows, outer = rows(case, values)
    index_rows, _ = rows(case, indices)
    # Indices of a sequence are distinct in any result worth comparing, so any sort will do
    # (a stable one costs twice as much on long rows); a result with repeats still comes out
    # the same way each time.
    order = np.argsort(index_rows.astype(np.int64), axis=1)

    def back(arr):
        return np.moveaxis(take_rows(arr, order).reshape(*outer, arr.shape[1]), -1, case.norm_axis)
    return back(value_rows), back(index_rows)


def is_float_array(arr: np.ndarray) -> bool:
    return arr.dtype.kind not in "iub"


def keys(arr: np.ndarray) -> np.ndarray:
    """Values in a type numpy compares exactly: integers as they are, every float type as
    float64 (float16 and bfloat16 widen without rounding)."""
    arr = np.asarray(arr)
    return arr.astype(np.float64) if is_float_array(arr) else arr


def bits(arr: np.ndarray) -> np.ndarray:
    """The raw bit patterns (so -0.0 differs from +0.0), as unsigned integers."""
    arr = np.ascontiguousarray(arr)
    return arr.view(f"u{arr.dtype.itemsize}")


def nan_mask(arr: np.ndarray) -> np.ndarray:
    arr = np.asarray(arr)
    return np.isnan(arr.astype(np.float64)) if is_float_array(arr) else np.zeros(arr.shape, dtype=bool)


def same_bits(a: np.ndarray, b: np.ndarray, *, nan_equal=False) -> np.ndarray:
    """Elementwise: a and b have the same bits (any NaN matches any NaN when nan_equal)."""
    same = bits(a) == bits(b)
    if nan_equal and is_float_array(a):
        same |= nan_mask(a) & nan_mask(b)
    return same


def show(value) -> str:
    """A number as a person reads it (in messages and reports): -0.0 and a NaN with its sign
    bit set keep their sign, integers print whole, no numpy type names."""
    if isinstance(value, np.generic) and dtypes.name_of(value.dtype) == "bfloat16":
        value = float(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return "-nan" if value != value and np.signbit(value) else repr(value)
    if isinstance(value, (np.integer, int)) and not isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def as_numbers(indices) -> np.ndarray:
    """Indices as numpy compares them with bounds: integer types as they are (uint64 beyond
    2**63 stays exact), anything else as float64."""
    indices = np.asarray(indices)
    return indices if indices.dtype.kind in "iu" else indices.astype(np.float64)
