"""Adversarial input tensors for a case: ties, extremes, signed zeros, infinities, subnormals,
values that collide when narrowed or widened, and NaN only when asked for.

A tensor takes a few draws and numpy builds it, whatever its size:

1. the layout with the number of pool entries it uses, in one draw: "cycle" (the pool
   repeated in order: what every array shrinks to), "pool" (pool values at random places:
   heavy ties), "random" (values spread over the type), "random+pool" (pool values sprinkled
   over random ones), "ascending" and "descending" (sorted random values, pool values mixed
   in), "specials" (every special value of the type, over and over), "random+specials" (the
   special values sprinkled over random ones), "tie at K" (random values where the value
   after the K-th place equals the K-th, in every sequence); and, for runs that draw long
   axes (`long_axes`), "sparse specials" (random values with a few special or pool values at
   spread-out places, and the value after the K-th place tied with the K-th: the patterns
   stay few however long the axis, as kernels that switch paths on long rows meet them);
2. a seed for numpy (unused by "cycle");
3. the pool: POOL_ENTRIES entries, one draw each from `value_table(dtype)`, whose first
   entries are 0, 1, -1, 2, ..., drawn whatever the layout uses;
4. with `require_nan`, where the NaNs go (the first element first).

A failing tensor shrinks to a short cycle of the simplest values that still fail: [0.0, 0.0]
for a tie bug. Element i depends on the seed and i, not on the size, so the shrinker can cut
a failing array down without changing its first elements.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from hypothesis import event, strategies as st

from topkspec.strategies import arguments, cached
from topkspec.strategies.values import (  # noqa: F401 (collision_pairs, finfo: re-exported)
    collision_pairs, elements, finfo, random_values, special_pool, special_values, to_array, value_table,
)

# (layout, pool entries it uses), as often as they appear here; the first is what arrays shrink to.
LAYOUTS = (
    ("cycle", 1), ("cycle", 2), ("cycle", 3),
    ("pool", 2), ("pool", 3),
    ("random", 0), ("random", 0),
    ("random+pool", 1), ("random+pool", 2), ("random+pool", 3),
    ("ascending", 0), ("ascending", 2), ("descending", 0), ("descending", 2),
    ("specials", 0), ("random+specials", 0), ("tie at K", 0), ("tie at K", 2),
)
# Runs that draw long axes add layouts whose special values stay few however long the axis.
LONG_AXIS_LAYOUTS = LAYOUTS + (("sparse specials", 0), ("sparse specials", 3))
MODES = tuple(dict.fromkeys(mode for mode, _ in LONG_AXIS_LAYOUTS))
# Pool entries drawn for every layout (those it does not use shrink to 0 at once): a failing
# array the shrinker moves to another layout keeps its pool and the draws after it.
POOL_ENTRIES = max(entries for _, entries in LAYOUTS)
# Where NaNs go when every input must hold one.
NAN_PLACES = ("first", "one", "10%", "50%", "all")
_LAYOUTS, _NAN_PLACES = st.sampled_from(LAYOUTS), st.sampled_from(NAN_PLACES)
_LONG_AXIS_LAYOUTS = st.sampled_from(LONG_AXIS_LAYOUTS)
# How many special values a "sparse specials" array holds at most, whatever its size.
SPARSE_SPECIALS = 32
_SPRINKLE_SHARES = (0.01, 0.1, 0.5)
_SPECIAL_SHARES = (0.1, 0.5, 1.0)


def tie_density(x) -> str:
    """How many values of a tensor repeat, as a bucket for `event()` or a coverage count.

    - x: the tensor; a numpy array, or anything `numpy.asarray` takes.

    Gives "single" (one value or none), "all equal", "heavy ties" (at most 3 distinct values,
    or at most one distinct value in four), "some ties" or "no ties"; -0.0 ties with 0.0.

    >>> [tie_density(x) for x in ([1.0], [-0.0, 0.0], [1, 2, 1, 2, 3], [1, 2, 3, 4, 4], range(8))]
    ['single', 'all equal', 'heavy ties', 'some ties', 'no ties']
    """
    x = np.asarray(x)
    if x.size <= 1:
        return "single"
    flat = x.reshape(-1)
    if flat.dtype.kind not in "iu":
        flat = flat.astype(np.float64)
        flat = np.where(flat == 0, 0.0, flat)  # -0.0 ties with +0.0
    distinct = len(np.unique(flat))
    if distinct == 1:
        return "all equal"
    if distinct <= 3 or distinct * 4 <= flat.size:
        return "heavy ties"
    if distinct < flat.size:
        return "some ties"
    return "no ties"


class _Streams:
    """Independent generators per purpose (which pool value goes where, random values, where
    pool values go, where NaNs go), made when first used, so an array's first elements do not
    change when its size shrinks."""

    PURPOSES = ("choose", "spread", "sprinkle", "nan")

    def __init__(self, seed: int):
        self.seed = seed

    def __getattr__(self, name: str):
        rng = np.random.default_rng([self.seed, self.PURPOSES.index(name)])
        setattr(self, name, rng)
        return rng


def _sortable(values: np.ndarray) -> np.ndarray:
    """`values` as numpy sorts them quickly: 16-bit floats (numpy's float16 sort is slow,
    bfloat16 is not numpy's own) as float64, which orders them alike."""
    return values.astype(np.float64) if values.dtype.kind not in "iu" and values.dtype.itemsize < 4 else values


def _sorted(flat: np.ndarray, descending: bool) -> np.ndarray:
    # 8- and 16-bit integers: numpy's stable sort is a radix sort for them, 20 times quicker
    # than its default on 10,000 int8 values; integers come out the same whichever sort runs.
    radix = flat.dtype.kind in "iu" and flat.dtype.itemsize <= 2
    out = np.sort(_sortable(flat), kind="stable" if radix else None).astype(flat.dtype, copy=False)
    return out[::-1].copy() if descending else out


def _sprinkle(flat, pool, streams, shares) -> None:
    """Put values of `pool` in a share of `flat`'s places (in place)."""
    share = shares[int(streams.sprinkle.integers(len(shares)))]  # first: a fixed number of draws
    spots = streams.sprinkle.random(flat.size) < share
    flat[spots] = pool[streams.choose.integers(0, len(pool), size=int(spots.sum()))]


def _tie_at_k(flat: np.ndarray, case) -> np.ndarray:
    """`flat` with, in every sequence, the value after the K-th place set to the K-th value
    (the places as the case's direction orders them)."""
    n, k = case.axis_size, case.k
    if k >= n:
        return flat
    rows = np.moveaxis(flat.reshape(case.shape), case.norm_axis, -1)
    kth, after = (n - k, n - k - 1) if case.largest else (k - 1, k)
    # Only the two places matter: a partition finds them in linear time.
    order = np.argpartition(_sortable(rows), (min(kth, after), max(kth, after)), axis=-1)
    rows = rows.copy()
    np.put_along_axis(rows, order[..., after:after + 1],
                      np.take_along_axis(rows, order[..., kth:kth + 1], axis=-1), axis=-1)
    return np.moveaxis(rows, -1, case.norm_axis).reshape(-1)


@lru_cache(maxsize=64)
def _entries(dtype: str, allow_nan: bool) -> st.SearchStrategy[tuple]:
    return st.sampled_from(value_table(dtype, allow_nan))


def _sparse(flat, values, streams) -> None:
    """Put a few of `values` (1 to SPARSE_SPECIALS) at places spread over `flat` (in place):
    each place a share of the size, so the places move with it when the array shrinks."""
    count = 1 + int(streams.sprinkle.integers(SPARSE_SPECIALS))
    spots = (streams.sprinkle.random(count) * flat.size).astype(np.intp)
    flat[spots] = values[streams.choose.integers(0, len(values), size=count)]


def _build(draw, case, allow_nan: bool, long_axes: bool = False):
    """(flat array, layout, streams): see the module text."""
    dtype, size = case.dtype, math.prod(case.shape)
    mode, entries = draw(_LONG_AXIS_LAYOUTS if long_axes else _LAYOUTS)
    streams = _Streams(cached.seed(draw))
    table = _entries(dtype, allow_nan)
    drawn = [draw(table) for _ in range(POOL_ENTRIES)]
    pool = to_array([v for entry in drawn[:entries] for v in entry], dtype, (-1,)) if entries else None
    if mode == "cycle":
        return np.tile(pool, -(-size // len(pool)))[:size], mode, streams
    if mode == "pool":
        return pool[streams.choose.integers(0, len(pool), size=size)], mode, streams
    if mode == "specials":  # every special value, in table order for seed 0, over and over
        specials = special_pool(dtype, allow_nan)
        if streams.seed:
            specials = specials[streams.choose.permutation(len(specials))]
        return np.tile(specials, -(-size // len(specials)))[:size], mode, streams
    flat = random_values(streams.spread, dtype, size)
    if mode == "sparse specials":
        specials = special_pool(dtype, allow_nan)
        _sparse(flat, specials if pool is None else np.concatenate([specials, pool]), streams)
        return _tie_at_k(flat, case), mode, streams
    if mode == "random+specials":
        _sprinkle(flat, special_pool(dtype, allow_nan), streams, _SPECIAL_SHARES)
    elif pool is not None:
        _sprinkle(flat, pool, streams, _SPRINKLE_SHARES)
    if mode in ("ascending", "descending"):
        flat = _sorted(flat, mode == "descending")
    elif mode == "tie at K":
        flat = _tie_at_k(flat, case)
    return flat, mode, streams


def _put_nans(draw, flat: np.ndarray, streams) -> np.ndarray:
    """`flat` with NaN put in: at the first element, at one drawn position, in a share of the
    elements or in all; quiet NaNs, of either sign but for the first."""
    place = draw(_NAN_PLACES)
    flat = flat.copy()
    rng = streams.nan
    if place == "first":
        flat[0] = np.nan
        return flat
    if place == "one":
        spots = np.zeros(flat.size, dtype=bool)
        spots[draw(cached.integers(0, flat.size - 1))] = True
    elif place == "all":
        spots = np.ones(flat.size, dtype=bool)
    else:
        spots = rng.random(flat.size) < (0.1 if place == "10%" else 0.5)
        spots[int(rng.integers(0, flat.size))] = True  # never none
    count = int(spots.sum())
    flat[spots] = (np.where(rng.random(count) < 0.5, -1.0, 1.0) * np.nan).astype(flat.dtype)
    return flat


def draw_array(draw, case, *, allow_nan: bool = False, require_nan: bool = False,
               long_axes: bool = False) -> np.ndarray:
    """Draw an input for `case` with a composite's `draw` (a few draws, whatever the size);
    `long_axes` adds the layouts for runs that draw long axes."""
    flat, mode, streams = _build(draw, case, allow_nan or require_nan, long_axes)
    if require_nan and flat.dtype.kind not in "iu" and flat.size > 0:
        flat = _put_nans(draw, flat, streams)
    event(f"array={mode}")
    return flat.reshape(case.shape)


def arrays_for(case, *, allow_nan: bool = False, require_nan: bool = False) -> st.SearchStrategy[np.ndarray]:
    """Input tensors for a case, adversarial on purpose: ties, extremes, ±0, ±inf, subnormals.

    - case: the `topkspec.spec.Case` whose value type and shape the tensors have.
    - allow_nan: floating-point tensors may hold NaN; default False (no effect on integers).
    - require_nan: floating-point tensors hold at least one NaN; default False (no effect on integers).

    Draws numpy arrays, shrinking towards a short cycle of the plainest values (0, 1, -1, ...).
    Arguments are checked when the strategy is first used (InvalidStrategyArgument).

    >>> from topkspec.spec import Case
    >>> x = arrays_for(Case("onnx:24", "TopK", "float16", (2, 8), axis=1, k=3)).example()
    >>> x.dtype, x.shape
    (dtype('float16'), (2, 8))
    >>> arrays_for((2, 8)).validate()
    Traceback (most recent call last):
    ...
    topkspec.strategies.arguments.InvalidStrategyArgument: case=(2, 8) must be a topkspec.spec.Case
    """
    def checked():
        arguments.check_case("case", case)
        arguments.check_bool("allow_nan", allow_nan)
        arguments.check_bool("require_nan", require_nan)

        @st.composite
        def array(draw):
            return draw_array(draw, case, allow_nan=allow_nan, require_nan=require_nan)

        return array()
    return st.deferred(checked)


__all__ = ["LAYOUTS", "LONG_AXIS_LAYOUTS", "MODES", "NAN_PLACES", "arrays_for", "collision_pairs", "draw_array", "elements",
           "special_values", "tie_density", "to_array", "value_table"]
