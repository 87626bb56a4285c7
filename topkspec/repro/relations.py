"""How repro.py replays a relation between calls (a metamorphic property): the data lines it
adds to X, K and AXIS, the code that sets `expected` and `actual` from calls of `topk`, and what
it prints when the relation is broken or holds. Keyed by the property's name; the property
itself only checks (properties.metamorphic), and its `Relation` says how many calls a report
shows and how it lines them up."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Replay:
    """- pair: code setting `expected` and `actual` (`pair_with_op` for writers whose `topk`
      takes the operator, ReproWriter.takes_op);
    - differs / agrees: what the program prints when the relation is broken / holds ({K},
      {K2}, {run} are filled from its own variables);
    - data(calls): its data lines beyond X, K and AXIS."""

    pair: str
    differs: str
    agrees: str
    data: Callable = lambda calls: []
    pair_with_op: str | None = None


def _moved_data(calls) -> list[str]:
    moved = calls[1][0]
    return [f"MOVED_TO, AXIS2 = {moved.norm_axis}, {moved.axis}",
            "X2 = np.ascontiguousarray(np.moveaxis(X, AXIS % X.ndim, MOVED_TO))"]


REPLAYS: dict[str, Replay] = {
    "prefix": Replay(
        data=lambda calls: [f"K2 = {calls[1][0].k}"],
        pair="expected = [np.take(a, np.arange(K2), axis=AXIS % X.ndim) for a in topk(X, K, AXIS)]\n"
             "actual = topk(X, K2, AXIS)",
        differs="the result for K={K2} is not the first {K2} of the result for K={K}",
        agrees="the result for a smaller K is the start of the result for a larger K"),
    "axis_moves": Replay(
        data=_moved_data,
        pair="expected = topk(X, K, AXIS)\n"
             "actual = [np.moveaxis(a, MOVED_TO, AXIS % X.ndim) for a in topk(X2, K, AXIS2)]",
        differs="moving the axis (a transpose) changed the result",
        agrees="moving the axis moves the result"),
    "topk_equals_topk1": Replay(
        pair="expected = topk(X, K, AXIS)  # DML_TOP_K1, DECREASING\nactual = topk(X, K, AXIS)  # DML_TOP_K",
        pair_with_op='expected = topk(X, K, AXIS, op="TOP_K1")  # DECREASING\n'
                     'actual = topk(X, K, AXIS, op="TOP_K")',
        differs="the two operators differ", agrees="the two operators agree"),
    "deterministic": Replay(
        pair="expected = topk(X.copy(), K, AXIS)\nfor run in range(2, 51):\n"
             "    actual = topk(X.copy(), K, AXIS)\n"
             "    if not all(same(a, b) for a, b in zip(expected, actual)):\n        break",
        differs="run {run} gave other bits than run 1 for the same input",
        agrees="50 runs gave the same bits"),
}
