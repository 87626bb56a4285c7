"""A valid case together with an input tensor for it."""
from __future__ import annotations

from hypothesis import strategies as st

from topkspec.strategies.descriptors import DEFAULT_MAX_AXIS_SIZE, DEFAULT_MAX_TOTAL, valid_cases
from topkspec.strategies.tensors import draw_array


@st.composite
def _case_and_input(draw, cases, allow_nan, require_nan):
    case = draw(cases)
    return case, draw_array(draw, case, allow_nan=allow_nan, require_nan=require_nan)


def case_and_input(profile, *, ops=None, dtypes=None, max_rank=8, max_axis_size=DEFAULT_MAX_AXIS_SIZE,
                   max_total=DEFAULT_MAX_TOTAL, allow_nan=False, require_nan=False, strict_doc=False):
    """(case, x): a valid case at `profile` and an adversarial input of its type and shape
    (`require_nan`: floating-point inputs always hold a NaN)."""
    cases = valid_cases(profile, ops=ops, dtypes=dtypes, max_rank=max_rank, max_axis_size=max_axis_size,
                        max_total=max_total, strict_doc=strict_doc)
    return _case_and_input(cases, allow_nan, require_nan)
