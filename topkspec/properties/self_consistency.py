"""Self-consistency properties: where the contract leaves a point open (where NaN goes, which of
tied values comes first, how subnormals compare), each call may make any choice the contract
allows, but two calls that ask the same thing must get the same answer. A runtime that makes
the same choice every time is never failed; one that answers a sequence differently alone and
in a batch, for K-1 and K, with the axis moved, with K constant or K input, or on a repeated
call, contradicts itself, which needs no document.

check_self_<name>(case, x, run, *, settled=True, nan_order="unspecified"), run(case, x) ->
(values, indices) as for the metamorphic properties. Each call with NaN in the input is held at
once to what holds whatever the NaN placement (out.nan.unspecified) and, where the contract
promises a NaN order, to that order (out.nan.order): a call those rules fail is their failure,
not a contradiction. Then the two answers are compared as the relation allows (each check says
how). `settled`: the contract promises the existing relation (out.exact, out.prefix,
out.axis_moves, out.deterministic: ties and signed zeros in a fixed order), which decides
input with neither NaN nor subnormals, so such input is left to it (SETTLED_BY).

PROPERTIES holds each with the relation a report shows and repro.relations replays.
"""
from __future__ import annotations

import numpy as np

from topkspec.properties.failures import NONDETERMINISTIC, WRONG_RESULT, Violation
from topkspec.properties.nan_order import check_nan_order
from topkspec.properties.property import METAMORPHIC, Property, Relation, names_the_call, rules
from topkspec.properties.result import check_nan_policy_free, check_shape, has_nan
from topkspec.properties.sequences import at, bits, by_index, keys, nan_mask, rows, show, where

(BATCH, PREFIX, AXIS, K_INPUT, REPEAT) = rules("self.batch", "self.prefix", "self.axis", "self.k_input",
                                               "self.repeat")

#: The existing rule that decides input with neither NaN nor subnormals where the contract
#: promises it; self_k_input has none (no other property passes K another way).
SETTLED_BY = {"self_batch": "out.exact", "self_prefix": "out.prefix", "self_axis": "out.axis_moves",
              "self_repeat": "out.deterministic"}

# The least normal magnitude of each float type by its item size (bfloat16's is float32's).
_TINY = {2: 2.0 ** -14, 4: 2.0 ** -126, 8: 2.0 ** -1022}


def has_subnormal(x) -> bool:
    """Whether a float input holds a subnormal (nonzero, below the type's least normal)."""
    x = np.asarray(x)
    if x.dtype.kind in "iub" or x.size == 0:
        return False
    tiny = 2.0 ** -126 if x.dtype.name == "bfloat16" else _TINY.get(x.dtype.itemsize, 0.0)
    wide = np.abs(x.astype(np.float64))
    return bool(((wide > 0) & (wide < tiny)).any())


def open_data(x) -> bool:
    """Input on which the answer is open whatever the contract: NaN, or subnormals (which a
    runtime may flush)."""
    return has_nan(x) or has_subnormal(x)


def judges(prop, x, unpromised, target=None) -> bool:
    """Whether self property `prop` judges input `x` of `target` for a contract leaving
    `unpromised` open (self_k_input: only a target that passes K two ways)."""
    if prop.name not in SETTLED_BY:
        return len(getattr(target, "k_forms", ()) or ()) >= 2
    return SETTLED_BY[prop.name] in unpromised or open_data(x)


def options(prop, contract, unpromised, target) -> dict:
    """The keyword arguments a run passes `prop`'s check for a target held to `contract`."""
    out = {"nan_order": contract.value("nan")}
    if prop.name in SETTLED_BY:
        out["settled"] = SETTLED_BY[prop.name] not in unpromised
    else:
        out["k_forms"] = tuple(getattr(target, "k_forms", ()) or ())
    return out


def _call(run, case, x, nan_order):
    """run(case, x) as numpy arrays of the case's shape; with NaN, held to the NaN rules first."""
    values, indices = (np.asarray(a) for a in run(case, x))
    check_shape(case, x, values, indices)
    if has_nan(x):
        check_nan_policy_free(case, x, values, indices)
        if nan_order != "unspecified":
            check_nan_order(case, x, values, indices, order=nan_order, ties=False)
    return values, indices


def _nan_signs(arr) -> np.ndarray:
    return np.signbit(np.asarray(arr).astype(np.float64)) if arr.dtype.kind not in "iub" else np.zeros(arr.shape, bool)


def _nan_place(row) -> str:
    """Where a row's NaNs are: 'first', 'last', 'nowhere', 'everywhere' or 'at positions [..]'."""
    spots = np.flatnonzero(nan_mask(row))
    if spots.size == 0:
        return "nowhere"
    if spots.size == row.size:
        return "everywhere"
    if (spots == np.arange(spots.size)).all():
        return "first"
    if (spots == np.arange(row.size - spots.size, row.size)).all():
        return "last"
    return f"at positions {spots.tolist()}"


def _short(row, limit=8) -> str:
    return "[" + ", ".join(show(v) for v in row[:limit]) + (", ..." if len(row) > limit else "") + "]"


def _compare(rule, case, first, second, labels, *, call, values="bits", indices=True, nan_sign=True,
             failure_class=WRONG_RESULT):
    """Raise `rule` where two answers of `case`'s shape differ, naming the first difference.
    values: "bits" (bit for bit, two NaNs of one sign match), "payload" (bit for bit) or "tied"
    (numbers by value, so -0.0 equals 0.0; NaN by sign, or any NaN with nan_sign False).
    indices: compared exactly. Unsorted answers are compared as sets of (index, value) pairs."""
    (av, ai), (bv, bi) = first, second
    if av.shape != bv.shape or ai.shape != bi.shape or av.dtype != bv.dtype or ai.dtype != bi.dtype:
        raise Violation(rule, f"{labels[0]} gives {av.dtype}{list(av.shape)} values and {ai.dtype} indices, "
                        f"{labels[1]} {bv.dtype}{list(bv.shape)} and {bi.dtype}",
                        failure_class=failure_class, expected=[str(av.dtype), list(av.shape)],
                        actual=[str(bv.dtype), list(bv.shape)], call=call)
    if not case.sorted:
        (av, ai), (bv, bi) = by_index(case, av, ai), by_index(case, bv, bi)
    (avr, outer), (bvr, _) = rows(case, av), rows(case, bv)
    air, bir = rows(case, ai)[0], rows(case, bi)[0]
    nans = nan_mask(avr) & nan_mask(bvr)
    if nan_sign:
        nans &= _nan_signs(avr) == _nan_signs(bvr)
    if values == "tied":
        same = (~nan_mask(avr) & ~nan_mask(bvr) & (keys(avr) == keys(bvr))) | nans
    else:
        same = bits(avr) == bits(bvr)
        if values == "bits":
            same |= nans
    if indices:
        same &= air == bir
    if same.all():
        return
    r, p = (int(v) for v in np.argwhere(~same)[0])
    a_row, b_row = avr[r], bvr[r]
    if (nan_mask(a_row) != nan_mask(b_row)).any():
        what = (f"{at(outer, r)}: NaN {_nan_place(a_row)} {labels[0]}, {_nan_place(b_row)} {labels[1]} "
                f"({_short(a_row)} against {_short(b_row)})")
    else:
        what = (f"{at(outer, r, p)}: value {show(a_row[p])} at index {show(air[r, p])} {labels[0]}, "
                f"value {show(b_row[p])} at index {show(bir[r, p])} {labels[1]}")
    raise Violation(rule, what, failure_class=failure_class, where=where(outer, r, p),
                    expected=[a_row[p], air[r, p]], actual=[b_row[p], bir[r, p]], call=call)


# -- the same sequence alone and in a batch ------------------------------------------------------

def _sequences(case) -> int:
    return int(np.prod(case.shape)) // max(1, case.axis_size)


def batch_layout(case):
    """For a case holding one sequence: (the batch's case, the dimension it is stacked on, the
    positions the sequence holds there). The batch is the sequence, the sequence reversed, the
    sequence, stacked on the first other dimension (a new leading one at rank 1)."""
    axis = case.norm_axis
    if case.rank == 1:
        shape, dim = (3,) + tuple(case.shape), 0
        written = case.axis + 1 if case.axis >= 0 else case.axis
    else:
        dim = next(d for d in range(case.rank) if d != axis)
        shape, written = tuple(3 if d == dim else s for d, s in enumerate(case.shape)), case.axis
    return case.with_(shape=shape, axis=written), dim, (0, 2)


def batch_input(case, x):
    """The batch `batch_layout` describes, for the one sequence `x`."""
    _, dim, _ = batch_layout(case)
    flipped = np.flip(x, axis=case.norm_axis)
    if case.rank == 1:
        return np.ascontiguousarray(np.stack([x, flipped, x]))
    return np.ascontiguousarray(np.concatenate([x, flipped, x], axis=dim))


def at_spot(case, arr, dim, spot):
    """The part of a batch answer at `spot` on `dim`, shaped as the lone case's answer."""
    part = np.take(arr, [spot], axis=dim)
    return part.reshape(part.shape[1:]) if case.rank == 1 else part


def last_sequence(case, arr):
    """`arr` cut to the case's last sequence (the last place of every other dimension)."""
    cut = tuple(slice(None) if d == case.norm_axis else slice(-1, None) for d in range(case.rank))
    return np.ascontiguousarray(np.asarray(arr)[cut])


@names_the_call
def check_self_batch(case, x, run, *, settled=True, nan_order="unspecified"):
    """self.batch: a sequence gets the same answer alone and in a batch. An input of one
    sequence is also run as a batch of three (itself, itself reversed, itself) and both places
    it holds are compared with it; an input of several sequences has its last one run alone.
    The same answer: values bit for bit (two NaNs of one sign match), indices exactly; with
    sorted=0, the same (index, value) pairs. Ties and NaN may go where the runtime likes, as
    long as it puts them there both times."""
    if settled and not open_data(x):
        return
    first = _call(run, case, x, nan_order)
    if _sequences(case) == 1:
        batch_case, dim, spots = batch_layout(case)
        batch = _call(run, batch_case, batch_input(case, x), nan_order)
        for spot in spots:
            part = tuple(at_spot(case, a, dim, spot) for a in batch)
            _compare(BATCH, case, first, part, ("for the row alone", f"in a batch (place {spot} of 3)"),
                     call=batch_case)
        return
    lone_case = case.with_(shape=last_sequence(case, x).shape)
    alone = _call(run, lone_case, last_sequence(case, x), nan_order)
    part = tuple(last_sequence(case, a) for a in first)
    _compare(BATCH, lone_case, part, alone, ("in the batch (its last row)", "for that row alone"), call=lone_case)


def _batch_sides(first, second, case0, case1):
    if _sequences(case0) == 1:
        _, dim, spots = batch_layout(case0)
        parts = [tuple(at_spot(case0, a, dim, s) for a in second) for s in spots]
        spot, part = next(((s, p) for s, p in zip(spots, parts)
                           if any(np.asarray(a).tobytes() != np.asarray(b).tobytes() for a, b in zip(first, p))),
                          (spots[0], parts[0]))
        return "first call (the row alone)", first, f"second call (in a batch, place {spot} of 3)", part
    return ("first call (in the batch, its last row)", tuple(last_sequence(case0, a) for a in first),
            "second call (that row alone)", second)


# -- top-(K-1) against top-K ---------------------------------------------------------------------

@names_the_call
def check_self_prefix(case, x, run, *, settled=True, nan_order="unspecified", max_k=None):
    """self.prefix: with sorted output, the answer for K-1 has the values of the first K-1
    places of the answer for K (the drawn K and K-1, or K = 1 and K = 2). Where ties are open
    a tied value may come from another place of the input in each call, so the indices are not
    compared and the values are compared as ties: numbers by value (-0.0 equals 0.0), NaN by
    its sign where ties are settled (a runtime that orders -NaN and NaN, or ties them and
    breaks the tie by index, picks the same one for both K), any NaN where they are open (a
    runtime may tie every NaN and pick another one for each K). A runtime whose choice for
    NaN does not depend on K passes; one that puts NaN first for K and last for K-1 does not.
    `max_k`: the largest K allowed (the literal DirectML text: below the axis size), default the
    axis size."""
    if not case.sorted or (settled and not open_data(x)):
        return
    if case.k >= 2:
        big_case, small_case = case, case.with_(k=case.k - 1)
    elif min(case.axis_size, case.axis_size if max_k is None else max_k) >= 2:
        small_case, big_case = case, case.with_(k=2)
    else:
        return
    made = {c: _call(run, c, x, nan_order) for c in (case, big_case if case is small_case else small_case)}
    big, small = made[big_case], made[small_case]
    head = tuple(np.take(a, np.arange(small_case.k), axis=case.norm_axis) for a in big)
    _compare(PREFIX, small_case, head, small,
             (f"in the first {small_case.k} places for K={big_case.k}", f"for K={small_case.k}"),
             call=small_case if case is big_case else big_case, values="tied", indices=False,
             nan_sign=settled)


def _prefix_sides(first, second, case0, case1):
    (big, big_case), (small, small_case) = sorted(((first, case0), (second, case1)), key=lambda p: -p[1].k)
    head = tuple(np.take(a, np.arange(small_case.k), axis=big_case.norm_axis) for a in big)
    return f"first {small_case.k} places of K={big_case.k}", head, f"K={small_case.k}", small


# -- the axis moved ------------------------------------------------------------------------------

def moved_case(case):
    """(the case with its axis moved one place on, the place it moved to)."""
    moved_to = (case.norm_axis + 1) % case.rank
    shape = list(case.shape)
    shape.insert(moved_to, shape.pop(case.norm_axis))
    return case.with_(shape=tuple(shape), axis=moved_to - case.rank if case.axis < 0 else moved_to), moved_to


@names_the_call
def check_self_axis(case, x, run, *, settled=True, nan_order="unspecified"):
    """self.axis: the axis moved one place on (a transpose) moves the answer the same way.
    The same answer after moving it back: values bit for bit (two NaNs of one sign match),
    indices exactly; with sorted=0, the same (index, value) pairs. Needs rank 2 or more."""
    if case.rank < 2 or (settled and not open_data(x)):
        return
    moved, moved_to = moved_case(case)
    first = _call(run, case, x, nan_order)
    second = _call(run, moved, np.ascontiguousarray(np.moveaxis(x, case.norm_axis, moved_to)), nan_order)
    back = tuple(np.moveaxis(a, moved_to, case.norm_axis) for a in second)
    _compare(AXIS, case, first, back, (f"on axis {case.norm_axis}", f"with the axis moved to {moved_to}"),
             call=moved)


def _axis_sides(first, second, case0, case1):
    back = tuple(np.moveaxis(a, case1.norm_axis, case0.norm_axis) for a in second)
    return "first call (original axis)", first, "second call (axis moved, moved back)", back


# -- K constant against K input ------------------------------------------------------------------

@names_the_call
def check_self_k_input(case, x, run, *, k_forms=(), nan_order="unspecified"):
    """self.k_input: K passed each of the first two ways the target can pass it (k_forms:
    Target.k_forms, its own way first; fewer than two: nothing to compare) gives the same
    answer: values bit for bit (two NaNs of one sign match), indices exactly; with sorted=0,
    the same (index, value) pairs. Checked on every input: no other property passes K another
    way."""
    if len(k_forms) < 2:
        return
    words = {"constant": "with K as a constant", "input": "with K as an input"}
    own, other = case.with_k_form(k_forms[0]), case.with_k_form(k_forms[1])
    first = _call(run, own, x, nan_order)
    second = _call(run, other, x, nan_order)
    _compare(K_INPUT, case, first, second, (words.get(k_forms[0], k_forms[0]), words.get(k_forms[1], k_forms[1])),
             call=other)


# -- the call repeated ---------------------------------------------------------------------------

@names_the_call
def check_self_repeat(case, x, run, *, settled=True, nan_order="unspecified"):
    """self.repeat: the same call twice gives the same answer bit for bit, values (NaN
    payloads included) and indices; with sorted=0, the same (index, value) pairs."""
    if settled and not open_data(x):
        return
    first = _call(run, case, x.copy(), nan_order)
    again = _call(run, case, x.copy(), nan_order)
    _compare(REPEAT, case, first, again, ("on run 1", "on run 2"), call=case, values="payload",
             failure_class=NONDETERMINISTIC)


PROPERTIES = (
    Property("self_batch", check_self_batch, (BATCH,), METAMORPHIC, True, group="self", self_consistency=True,
             words=((BATCH, "contradicts itself: answers a row alone and in a batch differently"),),
             relation=Relation(calls=2, sides=_batch_sides)),
    Property("self_prefix", check_self_prefix, (PREFIX,), METAMORPHIC, True, group="self", self_consistency=True,
             words=((PREFIX, "contradicts itself: the values for K-1 are not the first K-1 for K"),),
             relation=Relation(calls=2, sides=_prefix_sides)),
    Property("self_axis", check_self_axis, (AXIS,), METAMORPHIC, True, group="self", self_consistency=True,
             words=((AXIS, "contradicts itself: answers differently with the axis moved"),),
             relation=Relation(calls=2, sides=_axis_sides)),
    Property("self_k_input", check_self_k_input, (K_INPUT,), METAMORPHIC, True, group="self",
             self_consistency=True,
             words=((K_INPUT, "contradicts itself: answers differently with K as a constant and as an input"),),
             relation=Relation(calls=2, sides=lambda first, second, c0, c1: (
                 f"first call (K as {c0.k_form})", first, f"second call (K as {c1.k_form})", second))),
    Property("self_repeat", check_self_repeat, (REPEAT,), METAMORPHIC, True, group="self", self_consistency=True,
             words=((REPEAT, "contradicts itself: answers the same call differently when repeated"),),
             relation=Relation(calls=2, sides=lambda first, second, *_: (
                 "first call", first, "second call (repeated)", second))),
)
