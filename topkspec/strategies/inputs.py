"""A valid case together with an input tensor for it."""
from __future__ import annotations

from hypothesis import strategies as st

from topkspec.strategies import arguments
from topkspec.strategies.cases import DEFAULT_MAX_AXIS_SIZE, DEFAULT_MAX_TOTAL, case_drawer, check_case_arguments
from topkspec.strategies.tensors import draw_array


def case_and_input(profile, *, ops=None, dtypes=None, max_rank=8, max_axis_size=DEFAULT_MAX_AXIS_SIZE,
                   max_total=DEFAULT_MAX_TOTAL, allow_nan=False, require_nan=False, strict_doc=False):
    """(case, x): a valid case at `profile` and an adversarial input of its type and shape.
    Axes longer than the default add layouts whose special values stay few however long the
    axis (tensors.draw_array). Arguments are checked when the strategy is first used
    (InvalidStrategyArgument).

    profile, ops, dtypes, max_rank, max_axis_size, max_total, strict_doc: as valid_cases.
    allow_nan: floating-point inputs may hold NaN.
    require_nan: floating-point inputs always hold at least one NaN.

        case, x = case_and_input("dml:5.0", dtypes=["float16"]).example()
    """
    def checked():
        check_case_arguments(profile, ops, dtypes, max_rank, max_axis_size, max_total, strict_doc, None)
        arguments.check_bool("allow_nan", allow_nan)
        arguments.check_bool("require_nan", require_nan)
        long_axes = max_axis_size > DEFAULT_MAX_AXIS_SIZE
        draw_case = case_drawer(profile, ops=ops, dtypes=dtypes, max_rank=max_rank, max_axis_size=max_axis_size,
                                max_total=max_total, strict_doc=strict_doc)

        @st.composite
        def case_and_input(draw):
            case = draw_case(draw)
            return case, draw_array(draw, case, allow_nan=allow_nan, require_nan=require_nan, long_axes=long_axes)

        return case_and_input()
    return st.deferred(checked)
