"""A valid case together with an input tensor for it."""
from __future__ import annotations

from hypothesis import strategies as st

from topkspec.strategies import arguments
from topkspec.strategies.cases import DEFAULT_MAX_AXIS_SIZE, DEFAULT_MAX_TOTAL, case_drawer, check_case_arguments
from topkspec.strategies.graphs import draw_context
from topkspec.strategies.tensors import draw_array


def case_and_input(profile, *, ops=None, dtypes=None, max_rank=8, max_axis_size=DEFAULT_MAX_AXIS_SIZE,
                   max_total=DEFAULT_MAX_TOTAL, allow_nan=False, require_nan=False, strict_doc=False,
                   graph_contexts=False):
    """A valid case and an adversarial input tensor for it, in one draw.

    - profile: the spec profile, such as "dml:5.0" or "onnx:24".
    - ops: draw only these operators, as in `valid_cases`; default None, every one.
    - dtypes: draw only these value types, as in `valid_cases`; default None, every one.
    - max_rank: draw no rank above it; default 8, at least 1.
    - max_axis_size: the longest axis drawn; default 4096, at least 1 (2 under `strict_doc`).
    - max_total: the most elements of a shape; default 65536, at least 1 (2 under `strict_doc`).
    - allow_nan: floating-point inputs may hold NaN; default False (no effect on integers).
    - require_nan: floating-point inputs hold at least one NaN; default False (no effect on integers).
    - strict_doc: the literal DirectML text, K below the axis size; default False, no effect on ONNX.
    - graph_contexts: ONNX cases draw a graph around the TopK too (Case.context, spec.graphs), the
      one-node model half the time and what a case shrinks to; default False, no effect on DirectML.

    Draws (case, x) pairs: a case as `valid_cases` draws it and a tensor as `arrays_for` does;
    a `max_axis_size` above 4096 adds layouts that keep special values few however long the axis.
    Arguments are checked when the strategy is first used (InvalidStrategyArgument).

    >>> case, x = case_and_input("dml:5.0", dtypes=["float16"], max_total=64).example()
    >>> case.dtype, x.dtype.name, x.shape == case.shape
    ('float16', 'float16', True)
    >>> case_and_input("dml:5.0", require_nan=None).validate()
    Traceback (most recent call last):
    ...
    topkspec.strategies.arguments.InvalidStrategyArgument: require_nan=None must be True or False
    """
    def checked():
        check_case_arguments(profile, ops, dtypes, max_rank, max_axis_size, max_total, strict_doc, None)
        arguments.check_bool("allow_nan", allow_nan)
        arguments.check_bool("require_nan", require_nan)
        arguments.check_bool("graph_contexts", graph_contexts)
        long_axes = max_axis_size > DEFAULT_MAX_AXIS_SIZE
        draw_case = case_drawer(profile, ops=ops, dtypes=dtypes, max_rank=max_rank, max_axis_size=max_axis_size,
                                max_total=max_total, strict_doc=strict_doc)

        @st.composite
        def case_and_input(draw):
            case = draw_case(draw)
            x = draw_array(draw, case, allow_nan=allow_nan, require_nan=require_nan, long_axes=long_axes)
            return (draw_context(draw, case) if graph_contexts else case), x

        return case_and_input()
    return st.deferred(checked)
