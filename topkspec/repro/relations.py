"""How repro.py replays a relation between calls (a metamorphic property): the data lines it
adds to X, K and AXIS, the code that sets `expected` and `actual` from calls of `topk`, and what
it prints when the relation is broken or holds. Keyed by the property's name; the property
itself only checks (properties.metamorphic), and its `Relation` says how many calls a report
shows and how it lines them up."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Replay:
    """- pair: code setting `expected` and `actual`, or a function of the calls giving it
      (`pair_with_op` for writers whose `topk` takes the operator, ReproWriter.takes_op);
    - differs / agrees: what the program prints when the relation is broken / holds ({K},
      {K2}, {run} are filled from its own variables);
    - data(calls): its data lines beyond X, K and AXIS;
    - check: the check template, where the relation compares as its own (self-consistency:
      NaN's place too, as the property did), else the program's bit-for-bit comparison."""

    pair: str | Callable
    differs: str
    agrees: str
    data: Callable = lambda calls: []
    pair_with_op: str | None = None
    check: str | None = None  # a check template of its own (program/), else the program's choice


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
    # A DirectML call laid out as LAYOUT says (the directml template's topk lays every call out so):
    "same_layout": Replay(
        pair="expected = topk(X, K, AXIS, layout=None)  # packed, bound at 0, alone, no flags\n"
             "actual = topk(X, K, AXIS)  # laid out as LAYOUT says",
        differs="the laid-out call answers otherwise than the packed one",
        agrees="the laid-out call answers as the packed one"),
    "no_write_outside": Replay(
        pair="topk(X, K, AXIS)  # laid out as LAYOUT says\n"
             "expected = [np.zeros(0, np.int64)] * 2  # no byte outside the outputs' elements changed\n"
             "actual = [np.asarray(changed, np.int64) for changed in GUARD_CHANGED]  # bytes that changed",
        differs="bytes of the output buffer outside the output's elements changed (values, indices: their positions)",
        agrees="every byte outside the outputs' elements kept its guard byte"),
    "half_precision": Replay(
        data=lambda calls: [f"LARGEST = {calls[0][0].op == 'TOP_K' or bool(calls[0][0].largest)}"],
        pair="actual = topk(X, K, AXIS)  # laid out, with ALLOW_HALF_PRECISION_COMPUTATION\n"
             "keys = np.sort(np.moveaxis(X, AXIS % X.ndim, -1).astype(np.float16), axis=-1)\n"
             "keys = (keys[..., ::-1] if LARGEST else keys)[..., :K]  # the top K of the input rounded to FLOAT16\n"
             "expected = [np.moveaxis(keys, -1, AXIS % X.ndim)]\n"
             "actual = [np.asarray(actual[0]).astype(np.float16)]  # the values returned, rounded to FLOAT16",
        differs="the values, rounded to FLOAT16, are not the top K of the input rounded to FLOAT16",
        agrees="the values are right for the input rounded to FLOAT16"),
}


# -- self-consistency: both calls made, compared as the property compared them (check_self.tmpl) --

def _how(calls, how: str, indices: bool = True) -> str:
    return (f'HOW, COMPARE_INDICES, SORTED = "{how}", {indices}, {calls[0][0].sorted}  '
            "# how the two answers are compared (see same)")


def _batch_data(calls) -> list[str]:
    case = calls[0][0]
    lines = [_how(calls, "bits")]
    if int(np.prod(case.shape)) // max(1, case.axis_size) == 1:  # one sequence: run in a batch of three too
        batch = calls[1][0]
        if case.rank == 1:
            lines += ["DIM = 0  # the batch: X, X reversed, X, stacked on a new first dimension",
                      "X2 = np.stack([X, np.flip(X), X])"]
        else:
            dim = next(d for d in range(case.rank) if d != case.norm_axis)
            lines += [f"DIM = {dim}  # the batch: X, X reversed, X, on this dimension",
                      "X2 = np.ascontiguousarray(np.concatenate([X, np.flip(X, AXIS), X], axis=DIM))"]
        return lines + [f"AXIS2 = {batch.axis}"]
    return lines + ["CUT = tuple(slice(None) if d == AXIS % X.ndim else slice(-1, None) for d in range(X.ndim))",
                    "X2 = np.ascontiguousarray(X[CUT])  # the last sequence alone"]


def _batch_pair(calls) -> str:
    case = calls[0][0]
    if int(np.prod(case.shape)) // max(1, case.axis_size) == 1:
        return ("expected = topk(X, K, AXIS)  # the row alone\n"
                "batch = topk(X2, K, AXIS2)\n"
                "places = [[np.take(a, [p], axis=DIM).reshape(np.shape(b)) for a, b in zip(batch, expected)] "
                "for p in (0, 2)]\n"
                "actual = next((p for p in places if not all(same(a, b) for a, b in zip(by_index(expected), "
                "by_index(p)))), places[0])  # where it stands in the batch")
    return ("expected = [np.asarray(a)[CUT] for a in topk(X, K, AXIS)]  # the last row, in the batch\n"
            "actual = topk(X2, K, AXIS)  # that row alone")


def _moved(calls) -> list[str]:
    return [_how(calls, "bits")] + _moved_data(calls)


SELF_CHECK = "check_self.tmpl"

REPLAYS.update({
    "self_batch": Replay(
        data=_batch_data, pair=_batch_pair, check=SELF_CHECK,
        differs="the row gets another answer alone than in the batch",
        agrees="the row gets the same answer alone and in a batch"),
    "self_prefix": Replay(
        data=lambda calls: [_how(calls, "tied", indices=False), f"K2 = {calls[1][0].k}",
                            "BIG, SMALL = max(K, K2), min(K, K2)"],
        pair="expected = [np.take(a, np.arange(SMALL), axis=AXIS % X.ndim) for a in topk(X, BIG, AXIS)]\n"
             "actual = topk(X, SMALL, AXIS)",
        check=SELF_CHECK,
        differs="the values for K={SMALL} are not the first ones for K={BIG}",
        agrees="the values for K-1 are the first K-1 for K"),
    "self_axis": Replay(
        data=_moved, check=SELF_CHECK,
        pair="expected = topk(X, K, AXIS)\n"
             "actual = [np.moveaxis(a, MOVED_TO, AXIS % X.ndim) for a in topk(X2, K, AXIS2)]",
        differs="moving the axis (a transpose) changed the answer",
        agrees="moving the axis moves the answer"),
    "self_k_input": Replay(
        data=lambda calls: [_how(calls, "bits"), f"K_FORMS = {calls[0][0].k_form!r}, {calls[1][0].k_form!r}"],
        pair="expected = topk(X, K, AXIS, k_form=K_FORMS[0])\nactual = topk(X, K, AXIS, k_form=K_FORMS[1])",
        check=SELF_CHECK,
        differs="K as a constant and K as an input give different answers",
        agrees="K as a constant and K as an input give the same answer"),
    "self_repeat": Replay(
        data=lambda calls: [_how(calls, "payload")], check=SELF_CHECK,
        pair="expected = topk(X.copy(), K, AXIS)\nfor run in range(2, 51):\n"
             "    actual = topk(X.copy(), K, AXIS)\n"
             "    if not all(same(a, b) for a, b in zip(by_index(expected), by_index(actual))):\n        break",
        differs="run {run} gave other bits than run 1 for the same input",
        agrees="50 runs gave the same bits"),
})
