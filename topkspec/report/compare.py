"""What a report compares: the side-by-side table of expected against actual, lined up as the
failure was observed (its relation, `Failure.relation`)."""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.spec.reference import reference_topk
from topkspec.properties.catalogue import RELATIONS
from topkspec.properties.sequences import keys, nan_mask, rows, same_bits, show
from topkspec.repro.calls import expected_result

TABLE_ROWS = 40  # rows of the expected/actual table before it is cut


def nan_rule_sides(case, x, actual):
    """(expected, actual) as the NaN rule (out.nan.unspecified) compares them, in the actual
    result's layout: NaN may go anywhere, so the expected side keeps the actual NaNs where they
    came back, and asks, in the other places, for the top non-NaN values in order (with the
    reference's index where the actual value is not the one asked for). With sorted=0 both
    sides list the non-NaN values first, sorted by direction, as the rule compares them."""
    values, indices = (np.array(a) for a in actual)
    vr, ir = (rows(case, a)[0].copy() for a in (values, indices))
    full_v, full_i = (rows(case, a)[0] for a in reference_topk(x, axis=case.norm_axis, k=case.axis_size,
                                                              largest=case.largest))
    if not case.sorted:  # per sequence the non-NaN values first, by direction (stable), then the NaNs
        for r in range(vr.shape[0]):
            kept = np.flatnonzero(~nan_mask(vr[r]))
            order = np.concatenate([kept[np.argsort(-keys(vr[r][kept]) if case.largest else keys(vr[r][kept]),
                                                    kind="stable")], np.flatnonzero(nan_mask(vr[r]))])
            vr[r], ir[r] = vr[r][order], ir[r][order]
    ev, ei = vr.copy(), ir.copy()
    for r in range(vr.shape[0]):
        want_v, want_i = (a[~nan_mask(full_v[r])] for a in (full_v[r], full_i[r]))
        places = np.flatnonzero(~nan_mask(vr[r]))[:want_v.size]
        wrong = places[keys(vr[r][places]) != keys(want_v[:places.size])]
        at_rank = np.searchsorted(places, wrong)  # which of the top non-NaN values belongs there
        ev[r, wrong], ei[r, wrong] = want_v[at_rank], want_i[at_rank]

    def back(a, like):  # rows to the result's shape and axis
        moved = np.moveaxis(like, case.norm_axis, -1)
        return np.moveaxis(a.reshape(moved.shape), -1, case.norm_axis)
    return (back(ev, values), back(ei, indices)), (back(vr, values), back(ir, indices))


def compared_outputs(failure, relation: str):
    """(left title, left, right title, right) for the side-by-side table, or None."""
    outs = failure.outputs
    if relation == "result" and outs and outs[-1] is not None and "out.nan.unspecified" in failure.violation.rules:
        case, x = failure.calls[-1]
        if np.shape(outs[-1][0]) == case.out_shape and np.shape(outs[-1][1]) == case.out_shape:
            expected, actual = nan_rule_sides(case, x, outs[-1])
            return ("expected (NaN where it came back)", expected,
                    "actual" if case.sorted else "actual (non-NaN values sorted, as sorted=0 allows)",
                    actual)
    if relation == "result" and outs and outs[-1] is not None:
        expected = expected_result(failure.calls[-1][0], failure.calls[-1][1])
        if expected is not None:
            return "expected", expected, "actual", outs[-1]
    if relation in RELATIONS and len(outs) >= 2 and None not in outs[:2]:
        cases = [case for case, _ in failure.calls[:2]]
        return RELATIONS[relation].sides(outs[0], outs[1], cases[0], cases[-1])
    return None


def where_text(where) -> str:
    """'sequence (0, 2), position 1'; 'position 1' for a rank-1 input; '' when unknown."""
    if not isinstance(where, dict):
        return ""
    parts = []
    if where.get("sequence"):
        parts.append(f"sequence {tuple(where['sequence'])}")
    if "position" in where:
        parts.append(f"position {where['position']}")
    if "output" in where:
        parts.append(f"the {where['output']} output")
    return ", ".join(parts)


def side_by_side(case, left_title, left, right_title, right) -> str:
    """A markdown table of the two results per sequence position, differences marked."""
    (lv, li), (rv, ri) = left, right
    if lv.shape != rv.shape or li.shape != ri.shape:
        return (f"Shapes differ: {left_title}: values {list(lv.shape)}, indices {list(li.shape)}; "
                f"{right_title}: values {list(rv.shape)}, indices {list(ri.shape)}.\n")
    note = ""
    if lv.dtype != rv.dtype or li.dtype != ri.dtype:
        note = f"Types differ: {left_title}: {lv.dtype}/{li.dtype}; {right_title}: {rv.dtype}/{ri.dtype}.\n\n"
    axis = case.norm_axis
    rows = [np.moveaxis(a, axis, -1).reshape(-1, a.shape[axis]) if a.ndim else a.reshape(1, 1)
            for a in (lv, li, rv, ri)]
    value_differs = ~same_bits(rows[0], rows[2].astype(rows[0].dtype, copy=False), nan_equal=True) \
        if rows[0].dtype == rows[2].dtype else np.ones(rows[0].shape, bool)
    differs = value_differs | (rows[1].astype(np.int64) != rows[3].astype(np.int64))
    lines = [note + f"| sequence | position | {left_title}: value | index | {right_title}: value | index | |",
             "|---|---|---|---|---|---|---|"]
    shown = 0
    for r in range(rows[0].shape[0]):
        if not differs[r].any() and rows[0].shape[0] > 1:
            continue  # only the sequences that differ
        for p in range(rows[0].shape[1]):
            if shown == TABLE_ROWS:
                lines.append(f"| … | | | | | | {int(differs.sum())} position(s) differ in all |")
                return "\n".join(lines) + "\n"
            mark = "**≠**" if differs[r, p] else ""
            lines.append(f"| {r} | {p} | {show(rows[0][r, p])} | {show(rows[1][r, p])} | "
                         f"{show(rows[2][r, p])} | {show(rows[3][r, p])} | {mark} |")
            shown += 1
    return "\n".join(lines) + "\n"


def array_text(x, limit: int = 64) -> str:
    """'float32[2, 3] = [1.0, …]' (flattened in C order when it has more than one dimension)."""
    x = np.asarray(x)
    flat = x.reshape(-1)
    shown = ", ".join(show(v) for v in flat[:limit])
    more = f", … ({flat.size - limit} more)" if flat.size > limit else ""
    order = " (flattened, C order)" if x.ndim > 1 else ""
    return f"{dtypes.name_of(x.dtype)}{list(x.shape)}{order} = [{shown}{more}]"
