"""The graph an ONNX case's TopK sits in (Case.context, spec.graphs), drawn after the case and
its input so that shrinking it changes neither: the one-node model half the time, the first
choice and what a failing example shrinks to when its graph does not matter."""
from __future__ import annotations

from functools import lru_cache

from hypothesis import event, strategies as st

from topkspec.spec import graphs
from topkspec.spec.profiles import parse_profile


@lru_cache(maxsize=16)
def _contexts(opset: int) -> st.SearchStrategy:
    found = graphs.contexts_at(opset)
    return st.sampled_from((None,) * len(found) + found)


def draw_context(draw, case):
    """`case` inside a graph drawn from those its opset builds (an ONNX case), else as it is."""
    if case.family != "onnx":
        return case
    context = draw(_contexts(int(parse_profile(case.profile).opset)))
    event(f"graph={graphs.describe(context)}")
    return case.with_context(context)
