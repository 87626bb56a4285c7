"""DirectML calls laid out as applications lay them out (spec.layouts): a valid DirectML case and
its input, with a layout for the input (packed, broadcast, permuted, padded), one for the
outputs (packed, padded, a slice of a larger buffer with guard bytes), binding offsets,
execution flags and the operator alone or in a graph.

Packed, bound at 0, no flags and alone stay the commonest draw and what each part shrinks to.
A broadcast input repeats its first slice along the broadcast dimensions, so the input drawn is
made to repeat too: the case and the array always agree.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from topkspec.spec.layouts import EXECUTION_FLAGS, MINIMUM_ALIGNMENT, Layout, tensor_sizes, with_layout
from topkspec.spec.strides import packed_strides

# Each list's first entry is what a draw shrinks to; repeats make it the commonest.
_INPUTS = ("packed", "packed", "packed", "broadcast", "permuted", "padded")
_OUTPUTS = ("packed", "packed", "padded", "slice")
_FLAGS = (0, 0, 0, EXECUTION_FLAGS["DISABLE_META_COMMANDS"], EXECUTION_FLAGS["ALLOW_HALF_PRECISION_COMPUTATION"],
          EXECUTION_FLAGS["DESCRIPTORS_VOLATILE"])
_HALF = EXECUTION_FLAGS["ALLOW_HALF_PRECISION_COMPUTATION"]
_OFFSETS = (0, 0, 0, MINIMUM_ALIGNMENT, 4 * MINIMUM_ALIGNMENT)
# The graph puts an ELEMENT_WISE_IDENTITY before and after the TopK: drawn for the value types
# that operator takes at every feature level.
_GRAPH_TYPES = ("float32", "float16")


def _padded(draw, sizes) -> tuple:
    """Strides with room between the elements or after each row: the innermost stride 1 or 2,
    each outer one 0 to 3 elements more than the dimension inside it spans, some room somewhere."""
    pads = [draw(st.integers(0, 1))] + [draw(st.integers(0, 3)) for _ in sizes[1:]]  # innermost first
    if not any(pads):
        pads[0] = 1
    strides, step = [], 1 + pads[0]
    for i, size in enumerate(reversed(sizes)):
        strides.append(step)
        step = step * size + (pads[i + 1] if i + 1 < len(pads) else 0)
    return tuple(reversed(strides))


def _input_strides(draw, kind, sizes):
    """(strides, broadcast dimensions) of an input layout."""
    if kind == "packed":
        return None, ()
    if kind == "broadcast":
        dims = draw(st.lists(st.sampled_from(range(len(sizes))), min_size=1, max_size=len(sizes), unique=True))
        stored = [1 if d in dims else s for d, s in enumerate(sizes)]
        strides = list(packed_strides(stored))
        for d in dims:
            strides[d] = 0
        return tuple(strides), tuple(sorted(dims))
    if kind == "permuted":
        order = draw(st.permutations(range(len(sizes))))  # the dimensions as stored, outermost first
        stored = packed_strides([sizes[d] for d in order])
        strides = [0] * len(sizes)
        for place, d in enumerate(order):
            strides[d] = stored[place]
        return tuple(strides), ()
    return _padded(draw, sizes), ()


@st.composite
def laid_out(draw, case, x):
    """(case with a drawn layout, the input it reads) for a valid DirectML case and its input."""
    in_sizes, out_sizes = tensor_sizes(case)
    kind = draw(st.sampled_from(_INPUTS))
    in_strides, broadcast = _input_strides(draw, kind, in_sizes)
    for d in broadcast:  # the input repeats its first slice along each broadcast dimension
        x = np.broadcast_to(np.take(x, [0], axis=d), x.shape).copy()
    output = draw(st.sampled_from(_OUTPUTS))
    value_strides = index_strides = None
    offsets, tails = [draw(st.sampled_from(_OFFSETS)), 0, 0], [0, 0, 0]
    if output == "padded":
        value_strides, index_strides = _padded(draw, out_sizes), _padded(draw, out_sizes)
    elif output == "slice":
        for t in (1, 2):
            offsets[t] = draw(st.sampled_from(_OFFSETS[3:]))
            tails[t] = draw(st.integers(1, 64))
    # FLOAT32 is where ALLOW_HALF_PRECISION_COMPUTATION may change the answer: it is drawn more often there
    flags = draw(st.sampled_from(_FLAGS + (_HALF,) * 2 if case.dtype == "float32" else _FLAGS))
    graph = draw(st.sampled_from((False, False, True))) if case.dtype in _GRAPH_TYPES else False
    layout = Layout(input=kind, output=output, strides=(in_strides, value_strides, index_strides),
                    offsets=tuple(offsets), tails=tuple(tails), flags=flags, graph=graph)
    return with_layout(case, layout), x


def layout_inputs(cases_and_inputs) -> st.SearchStrategy:
    """(case, x) pairs of `cases_and_inputs` (DirectML cases), each with a drawn layout."""
    return cases_and_inputs.flatmap(lambda pair: laid_out(*pair))
