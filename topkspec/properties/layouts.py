"""What a DirectML call's layout (spec.layouts: strides, binding offsets, guard bytes, execution
flags, a graph) must not change: check_<name>(case, x, run, ...) on a case that carries one.

- same_layout (out.layout.same_answer): the laid-out call returns, bit for bit, what the same
  case packed, bound at 0, alone and without flags returns. With
  ALLOW_HALF_PRECISION_COMPUTATION on FLOAT32 values the flag leaves the answer open, so the
  laid-out result is held to out.layout.half_precision instead (our reading of the flag).
- no_write_outside (out.layout.no_write_outside): after the call every byte of both output
  buffers that is not one of the output's elements still holds the guard byte the buffers
  were filled with. `buffers()` gives what the call left in them (the target keeps it:
  directml.client.layout_call.OutputBuffers).

The campaign's layout group draws NaN-free input, so both compare exactly.
"""
from __future__ import annotations

import numpy as np

from topkspec.properties.failures import WRONG_RESULT, Violation
from topkspec.properties.metamorphic import _call, _compare
from topkspec.properties.property import METAMORPHIC, Property, Relation, names_the_call, rules
from topkspec.properties.sequences import at, rows, show, where
from topkspec.spec.case import selects_largest
from topkspec.spec.layouts import HALF_PRECISION, buffer_plan, layout_of, outside_mask, with_layout

(SAME_ANSWER, NO_WRITE_OUTSIDE, HALF) = rules("out.layout.same_answer", "out.layout.no_write_outside",
                                              "out.layout.half_precision")


def half_precision_applies(case) -> bool:
    """Whether the flag may change this case's answer: FLOAT32 values with the flag set."""
    return bool(layout_of(case).flags & HALF_PRECISION) and case.dtype == "float32"


def judges(prop_name: str, case) -> bool:
    """Whether the layout property `prop_name` has anything to judge in a laid-out case: the same
    answer where the flags leave it fixed, half precision where they leave it open, the guard
    bytes where an output buffer has bytes outside its elements."""
    if layout_of(case).is_plain:
        return False
    if prop_name == "half_precision":
        return half_precision_applies(case)
    if prop_name == "same_layout":
        return not half_precision_applies(case)
    return any(entry["buffer"] > entry["total"] or entry["strides"] is not None for entry in buffer_plan(case)[1:])


@names_the_call
def check_same_layout(case, x, run):
    """out.layout.same_answer: the laid-out call answers as the packed one. The laid-out call
    comes first, the packed one second (a report replays them in that order)."""
    if not judges("same_layout", case):
        return  # packed already, or half precision allowed: nothing to compare it with
    laid = _call(run, case, x)
    packed_case = with_layout(case, None)
    packed = _call(run, packed_case, x)
    _compare(SAME_ANSWER.id, "laid out against packed", case, packed, laid, call=case)


@names_the_call
def check_half_precision_call(case, x, run):
    """out.layout.half_precision, on the laid-out call's result (ALLOW_HALF_PRECISION_COMPUTATION
    on FLOAT32 values: the flag leaves the answer open, our reading says how far)."""
    if judges("half_precision", case):  # no flag, or not FLOAT32: the other rules judge it
        check_half_precision(case, x, *_call(run, case, x))


@names_the_call
def check_half_precision(case, x, values, indices):
    """out.layout.half_precision: indices in range and distinct, each value the input element at
    its index (exact or rounded to FLOAT16), the values' FLOAT16 roundings the top K of the
    input's FLOAT16 roundings, in order."""
    with np.errstate(over="ignore"):  # a float32 beyond FLOAT16's range rounds to infinity
        _check_half(case, x, values, indices)


def _check_half(case, x, values, indices):
    xv, outer = rows(case, np.asarray(x, np.float32))
    vv, _ = rows(case, np.asarray(values, np.float32))
    iv, _ = rows(case, np.asarray(indices).astype(np.int64))
    n, largest = xv.shape[-1], selects_largest(case)
    ordered = np.sort(iv, axis=-1)
    wrong = (iv < 0) | (iv >= n)
    wrong[:, 1:] |= ordered[:, 1:] == ordered[:, :-1]  # a repeat somewhere in the row (marked after its first)
    if wrong.any():
        r, p = (int(v) for v in np.argwhere(wrong)[0])
        raise Violation(HALF.id, f"{at(outer, r)}: an index is out of range or returned twice: {iv[r].tolist()}",
                        failure_class=WRONG_RESULT, where=where(outer, r), expected=f"distinct indices in [0, {n})",
                        actual=iv[r].tolist(), call=case)
    there = np.take_along_axis(xv, iv, axis=-1)
    rounded = there.astype(np.float16).astype(np.float32)
    copied = (vv.view(np.uint32) == there.view(np.uint32)) | (vv.view(np.uint32) == rounded.view(np.uint32))
    if not copied.all():
        r, p = (int(v) for v in np.argwhere(~copied)[0])
        raise Violation(HALF.id, f"{at(outer, r, p)}: value {show(vv[r, p])} is neither the input element "
                        f"{show(there[r, p])} at its index {show(iv[r, p])} nor its FLOAT16 rounding {show(rounded[r, p])}",
                        failure_class=WRONG_RESULT, where=where(outer, r, p), expected=show(there[r, p]),
                        actual=show(vv[r, p]), call=case)
    want = np.sort(xv.astype(np.float16), axis=-1)
    want = (want[:, ::-1] if largest else want)[:, :vv.shape[-1]]
    got = vv.astype(np.float16)
    wrong = (got != want) & ~np.isnan(xv).any(axis=-1, keepdims=True)  # where NaN goes is open
    if wrong.any():
        r, p = (int(v) for v in np.argwhere(wrong)[0])
        raise Violation(HALF.id, f"{at(outer, r, p)}: value {show(vv[r, p])} (FLOAT16 {show(got[r, p])}); the "
                        f"{'largest' if largest else 'smallest'} FLOAT16 roundings in order give {show(want[r, p])} there",
                        failure_class=WRONG_RESULT, where=where(outer, r, p), expected=show(want[r, p]),
                        actual=show(got[r, p]), call=case)


@names_the_call
def check_no_write_outside(case, x, run, *, buffers=lambda: None):
    """out.layout.no_write_outside: the bytes of both output buffers around the elements keep
    the guard byte. `buffers()`: what the call left in them (None: nothing to look at)."""
    _call(run, case, x)
    kept = buffers()
    if kept is None:
        return
    for name, data, entry in (("OutputValueTensor", kept.values, kept.plan[1]),
                              ("OutputIndexTensor", kept.indices, kept.plan[2])):
        raw = np.frombuffer(data, dtype=np.uint8)
        changed = np.flatnonzero(outside_mask(entry, raw.size) & (raw != kept.fill))
        if changed.size:
            first = int(changed[0])
            raise Violation(NO_WRITE_OUTSIDE.id,
                            f"{name}: {changed.size} byte(s) outside the output's elements changed, the first at "
                            f"byte {first} of the {raw.size}-byte buffer (the tensor is bound at offset "
                            f"{entry['offset']}, {entry['total']} bytes): 0x{kept.fill:02X} became 0x{int(raw[first]):02X}",
                            failure_class=WRONG_RESULT, where={"tensor": name, "byte": first},
                            expected=f"0x{kept.fill:02X}", actual=f"0x{int(raw[first]):02X}", call=case)


PROPERTIES = (
    Property("no_write_outside", check_no_write_outside, (NO_WRITE_OUTSIDE,), METAMORPHIC, False, group="layout",
             words=((NO_WRITE_OUTSIDE, "writes outside its output's elements"),),
             relation=Relation(calls=1, sides=lambda first, second, *_: ("the call", first, "the call", second))),
    Property("half_precision", check_half_precision_call, (HALF,), METAMORPHIC, False, group="layout",
             words=((HALF, "returns with half precision allowed what no FLOAT16 comparison gives"),),
             relation=Relation(calls=1, sides=lambda first, second, *_: ("the call", first, "the call", second))),
    Property("same_layout", check_same_layout, (SAME_ANSWER,), METAMORPHIC, False, group="layout",
             words=((SAME_ANSWER, "gives another answer under another memory layout"),),
             relation=Relation(calls=2, sides=lambda first, second, *_: ("expected (packed)", second,
                                                                          "actual (laid out)", first))),
)
