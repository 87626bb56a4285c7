"""A valid case together with an input tensor for it."""
from __future__ import annotations

from hypothesis import strategies as st

from topkspec.strategies.cases import DEFAULT_MAX_AXIS_SIZE, DEFAULT_MAX_TOTAL, case_drawer
from topkspec.strategies.tensors import draw_array


def case_and_input(profile, *, ops=None, dtypes=None, max_rank=8, max_axis_size=DEFAULT_MAX_AXIS_SIZE,
                   max_total=DEFAULT_MAX_TOTAL, allow_nan=False, require_nan=False, strict_doc=False):
    """(case, x): a valid case at `profile` and an adversarial input of its type and shape
    (`require_nan`: floating-point inputs always hold a NaN). Axes longer than the default
    add layouts whose special values stay few however long the axis (tensors.draw_array)."""
    long_axes = max_axis_size > DEFAULT_MAX_AXIS_SIZE
    draw_case = case_drawer(profile, ops=ops, dtypes=dtypes, max_rank=max_rank, max_axis_size=max_axis_size,
                            max_total=max_total, strict_doc=strict_doc)

    @st.composite
    def case_and_input(draw):
        case = draw_case(draw)
        return case, draw_array(draw, case, allow_nan=allow_nan, require_nan=require_nan, long_axes=long_axes)

    return case_and_input()
