"""Outputs read as a contract leaves them open (spec.contracts), so the same checks judge them.

- Values only (indices "not_returned"): judged on indices that explain the values, each value
  the lowest index of its sequence whose element has the same bits and that no earlier value
  took. The index rules (range, base, ties) are then unpromised, so what the values say is
  judged: the selection, its order, each value an element of the input.
- Signed zeros "unspecified": a zero returned where the input holds a zero of the other sign
  stands for it (zeros_as_input), since such a runtime promises nothing about the sign."""
from __future__ import annotations

import numpy as np

from topkspec.properties.sequences import bits, rows


def explaining_indices(case, x, values) -> np.ndarray:
    """Indices (the case's index type, the values' shape) that explain `values` as elements of
    `x`; a value found nowhere in its sequence gets an unused index, so the values checks (not
    the index ones, which the contract leaves open) say what is wrong with it."""
    values = np.asarray(values)
    try:
        value_rows, outer = rows(case, values)
        input_rows, _ = rows(case, np.asarray(x))
    except (ValueError, IndexError, np.exceptions.AxisError):  # the wrong shape: out.shape says so
        return np.zeros(values.shape, dtype=case.index_dtype)
    if value_rows.shape[0] != input_rows.shape[0]:
        return np.zeros(values.shape, dtype=case.index_dtype)
    found = np.zeros(value_rows.shape, dtype=np.int64)
    same_type = value_rows.dtype == input_rows.dtype
    for r in range(value_rows.shape[0]):
        have = bits(input_rows[r]) if same_type else input_rows[r]
        want = bits(value_rows[r]) if same_type else value_rows[r]
        free = np.ones(have.shape[0], dtype=bool)
        for p, value in enumerate(want):
            hits = np.flatnonzero(free & (have == value))
            pick = hits[0] if hits.size else np.flatnonzero(free)[0] if free.any() else 0
            free[pick] = False
            found[r, p] = pick
    moved = found.reshape(*outer, value_rows.shape[1])
    return np.moveaxis(moved, -1, case.norm_axis).astype(case.index_dtype)


def zeros_as_input(case, x, values, indices) -> np.ndarray:
    """`values` with each zero that sits where the input holds a zero (at its index) given the
    input's sign; anything else as it was (a shape or index that does not fit: unchanged)."""
    values = np.asarray(values)
    if values.dtype.kind != "f" and values.dtype.name != "bfloat16":
        return values
    try:
        value_rows, outer = rows(case, values)
        index_rows, _ = rows(case, np.asarray(indices).astype(np.int64))
        input_rows, _ = rows(case, np.asarray(x))
        if index_rows.shape != value_rows.shape or (index_rows < 0).any() \
                or (index_rows >= input_rows.shape[1]).any() or input_rows.dtype != value_rows.dtype:
            return values
    except (ValueError, IndexError, TypeError, np.exceptions.AxisError):
        return values
    at_index = np.take_along_axis(input_rows, index_rows, axis=1)
    both_zero = (value_rows.astype(np.float64) == 0) & (at_index.astype(np.float64) == 0)
    if not both_zero.any():
        return values
    fixed = np.where(both_zero, at_index, value_rows).reshape(*outer, value_rows.shape[1])
    return np.moveaxis(fixed, -1, case.norm_axis)


def as_returned(contract, case, x, values, indices):
    """(values, indices) as numpy arrays, the indices explaining the values where `contract`
    says the runtime returns none: what a report shows the runtime returned."""
    values = np.asarray(values)
    if contract.value("indices") == "not_returned":
        return values, explaining_indices(case, x, values)
    return values, np.asarray(indices)


def judged_values(contract, case, x, values, indices) -> np.ndarray:
    """The values a returned result is judged on: a zero of either sign stands for the
    input's where `contract` leaves signs open."""
    if contract.value("signed_zeros") == "unspecified":
        return zeros_as_input(case, x, values, indices)
    return values
