"""A runtime that returns values only (its contract: indices "not_returned") is judged by the
same checks as the others, on indices that explain its values: each value gets the lowest
index of its sequence whose element has the same bits and that no earlier value took. The
index rules themselves (range, base, gather, ties) are then unpromised (spec.contracts), so
only what the values say is judged: the selection, its order and its exactness."""
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
