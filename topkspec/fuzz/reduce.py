"""A TopK-aware reducer that finishes what Hypothesis's shrinker leaves: it works on the concrete
case and input, not on Hypothesis's draws, so it can take a failing sequence out of 32 rows or a
failing element out of a long axis, which no draw of the strategies can express.

    case, x, steps = reduce_case(case, x, still_fails, seconds=10.0, log=print)

Passes, repeated until a whole round keeps nothing (a local minimum: no single step of any pass
makes a smaller case that still fails) or the time or call budget is spent:

1. rows: keep one half, then one index, of each dimension but the axis;
2. the axis: take out chunks of it (halves, quarters, ... single elements), K lowered with it
   where it would exceed the axis size;
3. the rank: drop a dimension of size 1 (not the axis);
4. K: 1, then half, then one less;
5. values: every element to 0, then element by element to 0, 1 or -1 (simplest first; -0.0
   counts as less simple than 0.0).

A step is kept only when the candidate is valid at the case's profile and `still_fails(case, x)`
is True; the predicate decides what "the same failure" means (the run's: same target, rule and
class). Deterministic: the candidates and their order depend on the case and input alone.
"""
from __future__ import annotations

import math
import time

import numpy as np

from topkspec import spec

DEFAULT_SECONDS = 10.0
DEFAULT_CALLS = 2000
# Element by element only below this size: larger inputs are cut down by the shape passes first.
_ELEMENTWISE = 256


class _Budget:
    def __init__(self, seconds: float, calls: int):
        self.end = time.perf_counter() + seconds
        self.calls = calls

    def spent(self) -> bool:
        return self.calls <= 0 or time.perf_counter() >= self.end


def _valid(case, strict_doc: bool) -> bool:
    try:
        return spec.is_valid(spec.descriptor(case), case.profile, strict_doc=strict_doc)
    except (ValueError, KeyError, TypeError):
        return False


def _with_axis(case, shape, norm_axis: int, **changes):
    """`case` with `shape`, its axis at `norm_axis` (negative again when it was written so)."""
    axis = norm_axis - len(shape) if case.axis < 0 else norm_axis
    return case.with_(shape=tuple(shape), axis=axis, **changes)


def _rows(case, x):
    """Candidates with fewer rows: one half, then one index, of each dimension but the axis."""
    for dim, size in enumerate(case.shape):
        if dim == case.norm_axis or size <= 1:
            continue
        keeps = [slice(0, size // 2), slice(size // 2, size)] if size > 2 else []
        keeps += [slice(i, i + 1) for i in range(size)]
        for keep in keeps:
            index = [slice(None)] * case.rank
            index[dim] = keep
            part = x[tuple(index)]
            shape = list(case.shape)
            shape[dim] = part.shape[dim]
            yield f"rows: dimension {dim} to {keep.start}..{keep.stop - 1}", _with_axis(case, shape, case.norm_axis), part


def _axis(case, x):
    """Candidates with a shorter axis: chunks taken out, largest first (K capped at the size)."""
    n = case.axis_size
    width = n // 2
    while width >= 1:
        for start in range(0, n, width):
            keep = [i for i in range(n) if not start <= i < start + width]
            if not keep:
                continue
            part = np.take(x, keep, axis=case.norm_axis)
            shape = list(case.shape)
            shape[case.norm_axis] = len(keep)
            yield (f"axis: elements {start}..{min(n, start + width) - 1} out",
                   _with_axis(case, shape, case.norm_axis, k=min(case.k, len(keep))), part)
        width //= 2


def _rank(case, x):
    """Candidates of a lower rank: a dimension of size 1 (not the axis) dropped."""
    for dim, size in enumerate(case.shape):
        if dim == case.norm_axis or size != 1:
            continue
        shape = case.shape[:dim] + case.shape[dim + 1:]
        axis = case.norm_axis - (dim < case.norm_axis)
        yield f"rank: dimension {dim} dropped", _with_axis(case, shape, axis), x.reshape(shape)


def _k(case, x):
    for k in dict.fromkeys((1, case.k // 2, case.k - 1)):
        if 1 <= k < case.k:
            yield f"K: {k}", case.with_(k=k), x


def _simplicity(value) -> int:
    """0.0 < -0.0 < 1 < -1 < anything else (NaN included)."""
    number = float(value)  # bfloat16 and every integer type alike
    if number == 0:
        return 1 if math.copysign(1.0, number) < 0 else 0
    return 2 if number == 1 else 3 if number == -1 else 4


def _targets(dtype) -> list:
    """The simple values of `dtype`, simplest first."""
    unsigned = np.dtype(dtype).kind == "u"
    return [dtype.type(0), dtype.type(1)] + ([] if unsigned else [dtype.type(-1)])


def _values(case, x):
    """Candidates with simpler values: all to 0, then each element to 0, 1 or -1."""
    flat = x.reshape(-1)
    if flat.size == 0:
        return
    zero = np.zeros_like(x)
    if not np.array_equal(zero.view(np.uint8), x.view(np.uint8)):
        yield "values: all 0", case, zero
    if flat.size > _ELEMENTWISE:
        return
    simple = _targets(x.dtype)
    for i in range(flat.size):
        rank = _simplicity(flat[i])
        for value in simple:
            if _simplicity(value) >= rank:
                break
            candidate = flat.copy()
            candidate[i] = value
            yield f"values: element {i} to {value}", case, candidate.reshape(x.shape)


PASSES = (_rows, _axis, _rank, _k, _values)


def reduce_case(case, x, still_fails, *, seconds: float = DEFAULT_SECONDS, calls: int = DEFAULT_CALLS,
                strict_doc: bool = False, log=None):
    """(case, x, steps): the smallest case and input the passes reach from (case, x) while
    `still_fails(case, x)` holds (see the module text); `steps` lists what each kept step did.
    Stops after `seconds` or `calls` predicate calls, keeping what it has. `log(line)` is told
    each kept step."""
    budget = _Budget(seconds, calls)
    x = np.asarray(x)
    steps: list[str] = []
    progress = True
    while progress and not budget.spent():
        progress = False
        for make in PASSES:
            found = True
            while found and not budget.spent():  # a pass runs again on what it kept
                found = False
                for what, candidate, data in make(case, x):
                    if budget.spent():
                        break
                    if not _valid(candidate, strict_doc):
                        continue
                    budget.calls -= 1
                    if still_fails(candidate, np.ascontiguousarray(data)):
                        case, x = candidate, np.ascontiguousarray(data)
                        steps.append(f"{what} -> {case.describe()} ({math.prod(case.shape)} elements)")
                        if log is not None:
                            log(f"reduce: {steps[-1]}")
                        found = progress = True
                        break
    return case, x, steps
