"""Which adversarial patterns a drawn (case, x) holds, computed with numpy from the example
itself (no extra draws), and how often a sample of examples holds each.

    from topkspec.strategies.coverage import patterns_of, tally
    patterns_of(case, x)   # {"K = 1", "long axis (>= 1024)", "signed zeros", ...}

Value patterns are counted per value type (a pattern that cannot occur in a type, such as an
infinity among integers, is left out for it); shape and K patterns over the whole sample.
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from topkspec.spec import dtypes

# Patterns of the values, per value type ("floats" only: no integer type has them).
VALUE_PATTERNS = ("ties at K-th (ordinary values)", "type extremes", "signed zeros", "infinities",
                  "subnormals", "NaN")
FLOAT_ONLY = frozenset({"signed zeros", "infinities", "subnormals", "NaN"})
# Patterns of the case: K, sizes, rank and axis.
SHAPE_PATTERNS = ("K = 1", "K = n-1", "K = n", "long axis (>= 1024)", "many rows (>= 32), long axis",
                  "rank >= 5 with unit dims", "non-last axis")

LONG_AXIS = 1024
MANY_ROWS = 32


def applies(pattern: str, dtype: str) -> bool:
    """Whether `pattern` can occur in values of `dtype`."""
    return pattern not in FLOAT_ONLY or dtypes.numpy_dtype(dtype).kind not in "iu"


def _limits(dtype: str):
    """(lowest, highest, smallest normal or None) of the type, as the type's own scalars."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min), int(info.max), None
    if dtype == "bfloat16":
        import ml_dtypes

        info = ml_dtypes.finfo(dt)
    else:
        info = np.finfo(dt)
    return -float(info.max), float(info.max), float(info.tiny)


def shape_patterns(case) -> set[str]:
    n, k, rank = case.axis_size, case.k, case.rank
    found = set()
    if k == 1:
        found.add("K = 1")
    if n >= 2 and k == n - 1:
        found.add("K = n-1")
    if k == n:
        found.add("K = n")
    rows = math.prod(case.shape) // max(n, 1)
    if n >= LONG_AXIS:
        found.add("long axis (>= 1024)")
        if rows >= MANY_ROWS:
            found.add("many rows (>= 32), long axis")
    if rank >= 5 and 1 in case.shape:
        found.add("rank >= 5 with unit dims")
    if case.norm_axis != rank - 1:
        found.add("non-last axis")
    return found


def _ordinary(v, low, high, tiny) -> np.ndarray:
    """Finite, nonzero, normal values that are not the type's extremes."""
    ok = (v != 0) & (v != low) & (v != high)
    if tiny is not None:
        ok &= np.isfinite(v) & (np.abs(v) >= tiny)
    return ok


def value_patterns(case, x: np.ndarray) -> set[str]:
    found = set()
    if x.size == 0:
        return found
    low, high, tiny = _limits(case.dtype)
    floating = tiny is not None
    v = x.astype(np.float64) if floating else x
    if ((v == low) | (v == high)).any():
        found.add("type extremes")
    if floating:
        zeros = v == 0
        if zeros.any():
            signs = np.signbit(v[zeros])
            if signs.any() and not signs.all():
                found.add("signed zeros")
        if np.isinf(v).any():
            found.add("infinities")
        if ((v != 0) & (np.abs(v) < tiny)).any():
            found.add("subnormals")
        if np.isnan(v).any():
            found.add("NaN")
    n, k = case.axis_size, case.k
    if k < n:  # a tie that straddles the K-th place of some sequence
        rows = np.sort(np.moveaxis(v, case.norm_axis, -1).reshape(-1, n), axis=-1)
        if floating:  # NaN sorts last; leave rows with NaN out
            rows = rows[~np.isnan(rows).any(axis=-1)]
        if case.largest:
            kth, beyond = rows[:, n - k], rows[:, n - k - 1]
        else:
            kth, beyond = rows[:, k - 1], rows[:, k]
        if ((kth == beyond) & _ordinary(kth, low, high, tiny)).any():
            found.add("ties at K-th (ordinary values)")
    return found


def patterns_of(case, x: np.ndarray) -> set[str]:
    """Every pattern (case, x) holds."""
    return shape_patterns(case) | value_patterns(case, x)


def tally(drawn) -> dict:
    """Share of the examples (in %) holding each pattern: shape patterns over all of them,
    value patterns per value type over the examples of that type, and where any example sits
    in an ONNX graph, the share of each graph context (Case.context).

    {"examples": N, "shape": {pattern: %}, "values": {pattern: {dtype: %}},
     "dtypes": {dtype: examples}, "graphs": {context: %} (only where some case has one)}"""
    per_type = Counter()
    shape = Counter()
    values = Counter()
    contexts = Counter()
    for case, x in drawn:
        per_type[case.dtype] += 1
        contexts[getattr(case, "context", None)] += 1
        shape.update(shape_patterns(case))
        values.update((p, case.dtype) for p in value_patterns(case, x))
    total = sum(per_type.values())
    return {
        "examples": total,
        "shape": {p: round(100 * shape[p] / total, 1) if total else 0.0 for p in SHAPE_PATTERNS},
        "values": {p: {t: round(100 * values[(p, t)] / count, 1)
                       for t, count in sorted(per_type.items()) if applies(p, t)}
                   for p in VALUE_PATTERNS},
        "dtypes": dict(sorted(per_type.items())),
        **({"graphs": _graph_shares(contexts, total)} if any(contexts) else {}),
    }


def _graph_shares(contexts: Counter, total: int) -> dict:
    """{graph context as a person reads it: share in %} (spec.graphs), the one-node model first."""
    from topkspec.spec import graphs

    return {graphs.describe(name): round(100 * contexts[name] / total, 1) for name in (None, *graphs.CONTEXTS)
            if name is None or name in contexts}


def format_tally(group: str, table: dict, *, floor: float = 2.0) -> str:
    """A table a person reads; shares below `floor` % are marked with '!'."""
    types = list(table["dtypes"])
    lines = [f"{group}: {table['examples']} examples"]
    for pattern, share in table["shape"].items():
        lines.append(f"  {pattern:<32} {share:5.1f}%{' !' if share < floor else ''}")
    for context, share in table.get("graphs", {}).items():  # the ONNX graph around the TopK
        lines.append(f"  graph: {context:<57} {share:5.1f}%")
    width = max([8] + [len(t) for t in types])
    lines.append("  " + " " * 32 + " ".join(f"{t:>{width}}" for t in types))
    for pattern, shares in table["values"].items():
        cells = []
        for t in types:
            if t not in shares:
                cells.append(f"{'-':>{width}}")
            else:
                mark = "!" if shares[t] < floor else " "
                cells.append(f"{shares[t]:>{width - 1}.1f}{mark}")
        lines.append(f"  {pattern:<32}" + " ".join(cells))
    return "\n".join(lines)
