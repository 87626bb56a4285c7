"""Valid TopK cases for a profile: every operator, value type, rank, axis position, direction and K.

Draw order: operator, value type, the switches (direction, sorted, index type, axis sign),
then rank before shape, axis position, the axis size, the other sizes, and K. Each shrinks
towards the plainest choice (the first operator, float32, largest, sorted, rank 1, axis 0,
small sizes, K = 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from hypothesis import event, strategies as st

from topkspec.strategies import cached

from topkspec import spec
from topkspec.spec import Case

DEFAULT_MAX_AXIS_SIZE = 4096
DEFAULT_MAX_TOTAL = 20000
# Axis lengths where algorithms switch paths: around powers of two up to 4096.
_POWER_OF_TWO_NEIGHBOURS = sorted({2**p + d for p in range(2, 13) for d in (-1, 0, 1)})


@dataclass(frozen=True)
class _OpPlan:
    """What one operator allows at a profile, after the caller's filters."""
    op: str
    value_types: tuple
    index_types: tuple
    ranks: tuple


def _plain_first(types):
    """float32 first, so a counterexample shrinks to the most familiar value type."""
    return tuple(sorted(types, key=lambda t: (t != "float32",)))


def plans_for(profile, *, ops=None, dtypes=None, ranks=None, max_rank=8) -> tuple[_OpPlan, ...]:
    """The operators of `profile` with their allowed types and ranks, filtered by the arguments.

    Raises ValueError when the filters leave nothing to draw."""
    prof = spec.parse_profile(profile)
    wanted_ops = spec.ops(prof) if ops is None else [op for op in ops if op in spec.ops(prof)]
    plans = []
    for op in wanted_ops:
        values = spec.value_types(prof, op)
        if dtypes is not None:
            values = [t for t in values if t in set(dtypes)]
        op_ranks = [r for r in (spec.ranks(prof, op) if ranks is None else ranks) if r <= max_rank]
        if values and op_ranks:
            plans.append(_OpPlan(op, _plain_first(values), tuple(spec.index_types(prof, op)),
                                 tuple(sorted(op_ranks))))
    if not plans:
        raise ValueError(f"no operator of {prof.name} matches ops={ops!r}, dtypes={dtypes!r}, "
                         f"max_rank={max_rank}")
    return tuple(plans)


def k_position(k: int, n: int) -> str:
    """Where K sits in 1..n: "n", "n-1", "1" or "middle" (the first that applies)."""
    if k == n:
        return "n"
    if k == n - 1:
        return "n-1"
    if k == 1:
        return "1"
    return "middle"


@lru_cache(maxsize=256)
def axis_sizes(max_axis_size: int, min_size: int = 1) -> st.SearchStrategy[int]:
    """Axis lengths: short ones first (they shrink best), then lengths around powers of two,
    then anything up to `max_axis_size`."""
    top = max(min_size, max_axis_size)
    near_powers = [n for n in _POWER_OF_TWO_NEIGHBOURS if min_size <= n <= top]
    branches = [st.integers(min_size, min(top, 8))]
    if near_powers:
        branches.append(st.sampled_from(near_powers))
    branches.append(st.integers(min_size, top))
    return st.one_of(branches)


@lru_cache(maxsize=8192)
def ks_for(n: int, *, strict_doc: bool = False) -> st.SearchStrategy[int]:
    """K in 1..n (1..n-1 under strict_doc), with 1, n-1 and n drawn often."""
    top = n - 1 if strict_doc else n
    edges = sorted({k for k in (1, top - 1, top) if 1 <= k <= top})
    return st.one_of(st.sampled_from(edges), st.integers(1, top))


@lru_cache(maxsize=128)
def _other_size(cap: int) -> st.SearchStrategy[int]:
    """One non-axis size: 1 to 3 mostly, up to `cap`."""
    return st.one_of(st.integers(1, min(cap, 3)), st.integers(1, cap))


def _other_sizes(draw, count: int, budget: int) -> list[int]:
    """Sizes of the non-axis dimensions, small mostly, their product at most `budget`."""
    sizes = []
    for _ in range(count):
        cap = max(1, budget)
        size = draw(_other_size(min(cap, 64)))
        sizes.append(size)
        budget //= size
    return sizes


@st.composite
def _cases(draw, profile, plans, max_axis_size, max_total, strict_doc):
    prof = spec.parse_profile(profile)
    plan = draw(cached.sampled(plans))
    dtype = draw(cached.sampled(plan.value_types))
    # The switches come before the shape: choices drawn early vary most across a run.
    if prof.family == "dml":
        largest = True if plan.op == "TOP_K" else draw(cached.sampled((True, False)))
        sorted_ = True
        index_dtype = draw(cached.sampled(plan.index_types))
        negative_axis = False
    else:
        has_direction = prof.opset not in ("1", "10")
        largest = draw(cached.sampled((True, False))) if has_direction else True
        sorted_ = draw(cached.sampled((True, False))) if has_direction else True
        index_dtype = "int64"
        negative_axis = draw(cached.sampled((False, True)))
    rank = draw(cached.sampled(plan.ranks))
    axis = draw(cached.integers(0, rank - 1))
    strict_dml = strict_doc and prof.family == "dml"
    n = draw(axis_sizes(min(max_axis_size, max_total), min_size=2 if strict_dml else 1))
    others = _other_sizes(draw, rank - 1, max_total // n)
    shape = tuple(others[:axis] + [n] + others[axis:])
    k = draw(ks_for(n, strict_doc=strict_dml))
    written_axis = axis - rank if negative_axis else axis

    event(f"op={plan.op}")
    event(f"dtype={dtype}")
    event(f"rank={rank}")
    event(f"axis position={'last' if axis == rank - 1 else 'first' if axis == 0 else 'middle'}")
    event(f"K position={k_position(k, n)}")
    event(f"direction={'largest' if largest else 'smallest'}")
    return Case(profile=prof.name, op=plan.op, dtype=dtype, shape=shape, axis=written_axis, k=k,
                largest=largest, sorted=sorted_, index_dtype=index_dtype)


def valid_cases(profile, *, ops=None, dtypes=None, max_rank=8, max_axis_size=DEFAULT_MAX_AXIS_SIZE,
                max_total=DEFAULT_MAX_TOTAL, strict_doc=False, ranks=None) -> st.SearchStrategy[Case]:
    """Cases the spec allows at `profile` ("dml:3.1", "onnx:11", ...): `spec.validate` finds
    nothing wrong with any of them (under `strict_doc` too when it is set).

    ops, dtypes: keep only these operators / value types. ranks: draw only these ranks
    (default: what the profile allows). Shapes hold at most `max_total` elements with at most
    `max_axis_size` along the axis."""
    plans = plans_for(profile, ops=ops, dtypes=dtypes, ranks=ranks, max_rank=max_rank)
    return _cases(spec.parse_profile(profile).name, plans, max_axis_size, max_total, strict_doc)


def any_valid_case() -> st.SearchStrategy[Case]:
    """A valid case at any standard profile (what `st.from_type(Case)` draws)."""
    return st.sampled_from(spec.STANDARD_PROFILES).flatmap(valid_cases)
