"""Valid TopK cases for a profile: every operator, value type, rank, axis position, direction and K.

A case takes a handful of draws, each shrinking towards the plainest choice, and each a value
that keeps its meaning when the shrinker lowers a draw before it (a size is drawn as a size, not
as an index into a list that changes with the kind of shape):

1. the operator, value type and switches together (direction, sorted, index type, axis
   sign): the first operator, float32, largest, sorted, the first index type, a
   non-negative axis first;
2. the rank (the lowest first);
3. the kind of shape: short axes first; then lengths around powers of two, any length below
   1024, long axes, and long axes over MANY_ROWS rows;
4. the axis (0 first);
5. the axis size, from `low` (1; 2 under strict_doc) up to the kind's reach, so a failing
   size keeps its value when the shrinker moves it to a shorter kind that reaches it
   (lengths around powers of two are 2**p + d, p and d shrinking to 2**1 + 0);
6. each other size on its own, shrinking to 1 (the first at least MANY_ROWS under "many
   rows": a lower kind lets it shrink);
7. where K sits (1 first; then the axis size, one less, anywhere), and K itself only when
   it sits anywhere.

`CaseDrawer` makes every strategy it draws from once; `case_drawer(...)(draw)` draws a case
inside another composite without a nested one.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from hypothesis import event, strategies as st

from topkspec import spec
from topkspec.spec import Case
from topkspec.strategies import arguments, cached

DEFAULT_MAX_AXIS_SIZE = 4096
# Room for long axes over many rows: 32 rows of 2048.
DEFAULT_MAX_TOTAL = 65536
LONG_AXIS = 1024
MANY_ROWS = 32
# Axis lengths where algorithms switch paths: around powers of two up to 4096, and further
# when a run draws longer axes (GPU kernels switch paths far above it: 2**16, 2**20).
_POWER_OF_TWO_NEIGHBOURS = sorted({2**p + d for p in range(2, 13) for d in (-1, 0, 1)})


def near_powers_of_two(top: int) -> list[int]:
    """Lengths around powers of two from 3 up to `top` (at least the 4096 list)."""
    if top <= _POWER_OF_TWO_NEIGHBOURS[-1]:
        return _POWER_OF_TWO_NEIGHBOURS
    return sorted({2**p + d for p in range(2, top.bit_length()) for d in (-1, 0, 1)})
# Shapes by kind, as often as they appear here; the first is what a shape shrinks to.
SHAPE_KINDS = ("short",) * 6 + ("power of two",) * 4 + ("any",) * 2 + ("long",) * 2 + ("many rows",) * 4
# A non-axis size: 1 to 4 mostly, up to WIDE_DIM one time in four.
WIDE_DIM = 33
# At most this many sequences (the product of the other sizes), and elements, per kind of
# shape: long axes come over a few rows, or over MANY_ROWS and more in their own kind (whose
# axes below 1024 come as "long" ones do).
_MAX_ROWS = {"short": 512, "power of two": 64, "any": 64, "long": 8, "many rows": MANY_ROWS}
_MAX_ELEMENTS = {"short": 4096, "power of two": 16384, "any": 16384, "long": 16384}
# Where K sits in 1..top: at 1, at top, one below it, or anywhere (drawn again).
K_PLACES = ("1", "top", "top-1", "anywhere")
_K_PLACES = st.sampled_from(K_PLACES)


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
    """The operators of a profile that valid cases draw, each with the value types, index types
    and ranks it allows there, narrowed by the other arguments.

    - profile: the spec profile, such as "dml:5.0" or "onnx:24".
    - ops: keep only these operators; default None, every one of the profile.
    - dtypes: keep only these value types; default None, every one an operator takes.
    - ranks: keep only these ranks; default None, every one the profile allows.
    - max_rank: keep no rank above it; default 8, at least 1.

    Gives a tuple of plans (`op`, `value_types` with float32 first, `index_types`, `ranks`). Checks
    its arguments at once; InvalidStrategyArgument when the filters leave nothing to draw.

    >>> [(plan.op, plan.ranks) for plan in plans_for("dml:5.0", dtypes=["int8"], max_rank=2)]
    [('TOP_K', (1, 2)), ('TOP_K1', (1, 2))]
    """
    prof = arguments.check_filters(profile, ops, dtypes, max_rank, ranks)
    return arguments.check_plans(prof, _plans(prof, ops, dtypes, ranks, max_rank), ops, dtypes, ranks, max_rank)


def _plans(prof, ops, dtypes, ranks, max_rank, any_rank=False) -> tuple[_OpPlan, ...]:
    """The plans for checked arguments; `any_rank`: `ranks` instead of the profile's (the
    breakers draw ranks the profile lacks)."""
    wanted_ops = spec.ops(prof) if ops is None else [op for op in ops if op in spec.ops(prof)]
    plans = []
    for op in wanted_ops:
        values = [t for t in spec.value_types(prof, op) if dtypes is None or t in dtypes]
        allowed = ranks if any_rank and ranks is not None else [
            r for r in spec.ranks(prof, op) if ranks is None or r in ranks]
        op_ranks = [r for r in allowed if r <= max_rank]
        if values and op_ranks:
            plans.append(_OpPlan(op, _plain_first(values), tuple(spec.index_types(prof, op)),
                                 tuple(sorted(op_ranks))))
    return tuple(plans)


def k_position(k: int, n: int) -> str:
    """Where K sits among the axis's places, as the case events report it.

    - k: K; an integer from 1 to `n`.
    - n: the axis size; an integer, at least 1.

    Gives "n", "n-1", "1" or "middle", the first that applies. Checks its arguments at once
    (InvalidStrategyArgument).

    >>> [k_position(k, 5) for k in (5, 4, 1, 3)]
    ['n', 'n-1', '1', 'middle']
    """
    arguments.check_k(k, n)
    if k == n:
        return "n"
    if k == n - 1:
        return "n-1"
    if k == 1:
        return "1"
    return "middle"


def axis_sizes(max_axis_size: int, min_size: int = 1) -> st.SearchStrategy[int]:
    """Axis lengths: short ones first (they shrink best), then lengths around powers of two,
    then any length in range.

    - max_axis_size: the longest length drawn; an integer, at least 1 and at least `min_size`.
    - min_size: the shortest length drawn; default 1, at least 1.

    Draws integers from `min_size` to `max_axis_size`, shrinking towards `min_size`.

    >>> n = axis_sizes(64).example()
    >>> 1 <= n <= 64
    True
    >>> axis_sizes(4, min_size=5).validate()
    Traceback (most recent call last):
    ...
    topkspec.strategies.arguments.InvalidStrategyArgument: max_axis_size=4 must be at least min_size=5
    """
    def checked():
        arguments.check_int("min_size", min_size, at_least=1)
        arguments.check_int("max_axis_size", max_axis_size, at_least=1)
        if max_axis_size < min_size:
            arguments.fail("max_axis_size", max_axis_size, f"must be at least min_size={min_size}")
        return _axis_sizes(max_axis_size, min_size)
    return st.deferred(checked)


@lru_cache(maxsize=256)
def _axis_sizes(top: int, min_size: int) -> st.SearchStrategy[int]:
    near_powers = [n for n in near_powers_of_two(top) if min_size <= n <= top]
    branches = [st.integers(min_size, min(top, 8))]
    if near_powers:
        branches.append(st.sampled_from(near_powers))
    branches.append(st.integers(min_size, top))
    return st.one_of(branches)


def ks_for(n: int, *, strict_doc: bool = False) -> st.SearchStrategy[int]:
    """K for an axis of `n` elements, with 1, n-1 and n (the top K) drawn often.

    - n: the axis size; an integer, at least 1 (at least 2 under `strict_doc`).
    - strict_doc: the literal DirectML text, K below the axis size; default False.

    Draws integers from 1 to n (to n-1 under `strict_doc`), shrinking towards 1.

    >>> k = ks_for(8, strict_doc=True).example()
    >>> 1 <= k <= 7
    True
    """
    def checked():
        arguments.check_bool("strict_doc", strict_doc)
        arguments.check_int("n", n, at_least=2 if strict_doc else 1)
        return _ks_for(n, strict_doc)
    return st.deferred(checked)


@lru_cache(maxsize=8192)
def _ks_for(n: int, strict_doc: bool) -> st.SearchStrategy[int]:
    top = n - 1 if strict_doc else n
    edges = sorted({k for k in (1, top - 1, top) if 1 <= k <= top})
    return st.one_of(st.sampled_from(edges), st.integers(1, top))


# Options a _Choice lists; a longer range is kept as a range.
_LISTED_OPTIONS = 1 << 16


class _Choice:
    """A draw of one of `options` (none when there is only one), its strategy made once."""

    def __init__(self, options):
        # A long range stays one (Hypothesis samples from it alike, without listing a million
        # sizes); shorter ones are listed, as the default shapes always were (a strategy's
        # label comes from what it samples, and the search mutates by labels).
        long_range = isinstance(options, range) and len(options) > _LISTED_OPTIONS
        self.options = options if long_range else tuple(options)
        self.strategy = st.sampled_from(self.options) if len(self.options) > 1 else None

    def __call__(self, draw):
        return self.options[0] if self.strategy is None else draw(self.strategy)


def _switches(prof, op: str, index_types: tuple) -> tuple:
    """(largest, sorted, index type, negative axis) combinations, the plainest first."""
    if prof.family == "dml":
        directions = (True,) if op == "TOP_K" else (True, False)
        return tuple((largest, True, index, False) for index in index_types for largest in directions)
    flags = (True, False) if prof.opset not in ("1", "10") else (True,)
    return tuple((largest, sorted_, "int64", negative)
                 for negative in (False, True) for sorted_ in flags for largest in flags)


def _dims(draw, count: int, budget: int, first_rows: bool, small: st.SearchStrategy, wide) -> list[int]:
    """The non-axis sizes, each an integer draw of its own that shrinks to 1, their product at
    most `budget`; with `first_rows`, the first one draws at least MANY_ROWS (while the budget
    holds them). Each size is a value, not an index into a list: when the shrinker lowers an
    earlier draw (the kind of shape, the axis size), a size that still fits keeps its value."""
    sizes = []
    left = budget
    for number in range(count):
        top = max(1, left)
        if number == 0 and first_rows and top >= MANY_ROWS:
            size = draw(cached.integers(MANY_ROWS, top))
        else:  # mostly small, sometimes up to WIDE_DIM
            size = min(draw(small if draw(wide) else cached.integers(1, min(top, WIDE_DIM))), top)
        sizes.append(size)
        left //= size
    return sizes


class CaseDrawer:
    """Draws valid cases of one profile (see the module text); every strategy it draws from
    is made once, here."""

    def __init__(self, profile, plans, max_axis_size: int, max_total: int, strict_doc: bool):
        self.prof = spec.parse_profile(profile)
        self.max_total = max_total
        self.strict = strict_doc and self.prof.family == "dml"  # DirectML's text: K < n
        self.low = 2 if self.strict else 1
        self.top = max(self.low, min(max_axis_size, max_total))
        # operator, value type and switches in one draw; the rank, the kind of shape, the axis
        self.heads = _Choice((plan, dtype, switches) for plan in plans for dtype in plan.value_types
                             for switches in _switches(self.prof, plan.op, plan.index_types))
        self.ranks = {plan.op: _Choice(plan.ranks) for plan in plans}
        self.kinds = _Choice(SHAPE_KINDS)
        self.axes = {rank: _Choice(range(rank)) for plan in plans for rank in plan.ranks}
        # Axis sizes per kind of shape, each drawn as a value from `low` up to the kind's reach
        # (the reaches grow with the kind), so a failing size keeps its value when the shrinker
        # moves it to a shorter kind that reaches it.
        rows_top = max(self.low, max_total // MANY_ROWS)
        # Beyond the default room, each kind of shape may fill it (long axes over a few rows).
        self.caps = _MAX_ELEMENTS if max_total <= DEFAULT_MAX_TOTAL else {}
        reach = lambda top: cached.integers(self.low, max(self.low, min(self.top, top)))  # noqa: E731
        self.sizes = {"short": reach(8), "any": reach(LONG_AXIS - 1), "long": reach(self.top),
                      # long axes over many rows are what that kind is for (3 draws in 4);
                      # the shorter branch first: a long axis the bug does not need shrinks
                      "many rows": st.one_of(reach(LONG_AXIS - 1), *[cached.integers(min(LONG_AXIS, self.top), max(
                          min(LONG_AXIS, self.top), min(2 * LONG_AXIS, rows_top, self.top)))] * 3)}
        # Lengths around powers of two: 2**p + d, p from 1 and d in -1..1 each shrinking (to 2).
        self.exponents = cached.integers(1, max(1, self.top.bit_length() - 1))
        self.offsets = cached.integers(-1, 1)
        self.small_dims = cached.integers(1, 4)
        self.wide = cached.integers(0, 3)  # 1 in 4 non-axis sizes reaches up to WIDE_DIM (at 0: shrinks)

    @staticmethod
    def _k(draw, top: int) -> int:
        """K in 1..top: at 1, at top, one below, or anywhere."""
        if top == 1:
            return 1
        place = draw(_K_PLACES)
        if place == "anywhere":
            return draw(cached.integers(1, top))
        return {"1": 1, "top": top, "top-1": top - 1}[place]

    def __call__(self, draw) -> Case:
        plan, dtype, (largest, sorted_, index_dtype, negative_axis) = self.heads(draw)
        rank = self.ranks[plan.op](draw)
        kind = self.kinds(draw)
        axis = self.axes[rank](draw)
        if kind == "power of two":  # the axis size
            n = min(self.top, max(self.low, 2 ** draw(self.exponents) + draw(self.offsets)))
        else:
            n = draw(self.sizes[kind])
        # Many rows only under long axes (what the kind is for); shorter ones as "long" has them.
        many_rows = kind == "many rows" and rank > 1 and n >= LONG_AXIS and n * MANY_ROWS <= self.max_total
        # Axes longer than the default room come over a few rows, as "long" ones do.
        caps = kind if many_rows or (kind != "many rows" and n <= DEFAULT_MAX_TOTAL) else "long"
        room = min(self.max_total, self.caps.get(caps, self.max_total))
        others = _dims(draw, rank - 1, min(room // n, _MAX_ROWS[caps]), many_rows, self.small_dims, self.wide)
        k = self._k(draw, n - 1 if self.strict else n)

        event(f"op={plan.op}")
        event(f"dtype={dtype}")
        event(f"rank={rank}")
        event(f"axis position={'last' if axis == rank - 1 else 'first' if axis == 0 else 'middle'}")
        event(f"K position={k_position(k, n)}")
        event(f"direction={'largest' if largest else 'smallest'}")
        event(f"shape={kind}")
        return Case(profile=self.prof.name, op=plan.op, dtype=dtype, shape=tuple(others[:axis] + [n] + others[axis:]),
                    axis=axis - rank if negative_axis else axis, k=k, largest=largest, sorted=sorted_,
                    index_dtype=index_dtype)


def case_drawer(profile, *, ops=None, dtypes=None, max_rank=8, max_axis_size=DEFAULT_MAX_AXIS_SIZE,
                max_total=DEFAULT_MAX_TOTAL, strict_doc=False, ranks=None, any_rank=False) -> CaseDrawer:
    """A function of a composite's `draw` giving a valid case (what `valid_cases` draws), for
    arguments already checked; `any_rank`: draw `ranks` whether or not the profile allows them."""
    as_tuple = lambda items: None if items is None else tuple(items)  # noqa: E731
    return _case_drawer(profile, as_tuple(ops), as_tuple(dtypes), max_rank, max_axis_size, max_total,
                        strict_doc, as_tuple(ranks), any_rank)


@lru_cache(maxsize=64)
def _case_drawer(profile, ops, dtypes, max_rank, max_axis_size, max_total, strict_doc, ranks,
                 any_rank) -> CaseDrawer:
    # Made once per arguments: a drawer lists every axis size it may draw, and a run plans
    # its groups (most with the same arguments) once per target.
    prof = spec.parse_profile(profile)
    plans = arguments.check_plans(prof, _plans(prof, ops, dtypes, ranks, max_rank, any_rank), ops, dtypes, ranks,
                                  max_rank)
    return CaseDrawer(profile, plans, max_axis_size, max_total, strict_doc)


def check_case_arguments(profile, ops, dtypes, max_rank, max_axis_size, max_total, strict_doc, ranks) -> None:
    """Raise InvalidStrategyArgument naming the first bad argument of valid_cases or case_and_input."""
    prof = arguments.check_filters(profile, ops, dtypes, max_rank, ranks)
    arguments.check_sizes(prof, max_axis_size, max_total, strict_doc)
    arguments.check_plans(prof, _plans(prof, ops, dtypes, ranks, max_rank), ops, dtypes, ranks, max_rank,
                          every_name=True)


def valid_cases(profile, *, ops=None, dtypes=None, max_rank=8, max_axis_size=DEFAULT_MAX_AXIS_SIZE,
                max_total=DEFAULT_MAX_TOTAL, strict_doc=False, ranks=None) -> st.SearchStrategy[Case]:
    """TopK cases the spec allows at a profile: `spec.validate` finds nothing wrong with any.

    - profile: the spec profile, such as "dml:3.1" or "onnx:11".
    - ops: draw only these operators, each one of the profile's; default None, every one.
    - dtypes: draw only these value types, each one some operator takes; default None, every one.
    - max_rank: draw no rank above it; default 8, at least 1.
    - max_axis_size: the longest axis drawn; default 4096, at least 1 (2 under `strict_doc`).
    - max_total: the most elements of a shape; default 65536, at least 1 (2 under `strict_doc`).
    - strict_doc: the literal DirectML text, K below the axis size; default False, no effect on ONNX.
    - ranks: draw only these ranks, each one the profile allows; default None, every one.

    Draws `topkspec.spec.Case` values, shrinking towards float32, rank 1, short axes and K = 1.
    Arguments are checked when the strategy is first used (InvalidStrategyArgument).

    >>> from topkspec import spec
    >>> case = valid_cases("onnx:24", dtypes=["int8"], max_rank=2).example()
    >>> case.dtype, case.rank <= 2, spec.validate(case)
    ('int8', True, [])
    >>> valid_cases("dml:2.1", ranks=[2]).validate()
    Traceback (most recent call last):
    ...
    topkspec.strategies.arguments.InvalidStrategyArgument: ranks=[2] names 2, which no valid case at dml:2.1 has ...
    """
    def checked():
        check_case_arguments(profile, ops, dtypes, max_rank, max_axis_size, max_total, strict_doc, ranks)
        drawer = case_drawer(profile, ops=ops, dtypes=dtypes, max_rank=max_rank, max_axis_size=max_axis_size,
                             max_total=max_total, strict_doc=strict_doc, ranks=ranks)

        @st.composite
        def valid_case(draw):
            return drawer(draw)

        return valid_case()
    return st.deferred(checked)


def any_valid_case() -> st.SearchStrategy[Case]:
    """Valid cases at every standard profile (what `st.from_type(Case)` draws).

    Takes no arguments. Draws `topkspec.spec.Case` values, the profile first (shrinking towards
    the first of `spec.STANDARD_PROFILES`), then a case as `valid_cases(profile)` draws it.

    >>> from topkspec import spec
    >>> case = any_valid_case().example()
    >>> case.profile in spec.STANDARD_PROFILES, spec.validate(case)
    (True, [])
    """
    return st.sampled_from(spec.STANDARD_PROFILES).flatmap(valid_cases)
