"""Adversarial input tensors for a case: ties, extremes, signed zeros, infinities, subnormals,
values that collide when narrowed or widened, and NaN only when asked for.

Small tensors are drawn element by element so a counterexample shrinks to a short readable
array; large ones draw a small pool of values and a seed, and numpy builds the array.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from hypothesis import event, strategies as st

from topkspec.strategies import cached

from topkspec import dtypes

# Up to this many elements a tensor is drawn element by element (and shrinks element-wise).
SMALL_SIZE = 32

_FLOAT_BITS = {"float16": 16, "float32": 32, "float64": 64, "bfloat16": 32}


def special_values(dtype: str, *, allow_nan: bool = False) -> list:
    """Values of `dtype` that break implementations: extremes, ±0, ±inf, the smallest normal
    and subnormal, and pairs that become equal when narrowed or widened to another type."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        values = {0, 1, lo, hi, hi - 1, lo + 1, (hi + 1) // 2, (hi + 1) // 2 - 1}
        if dt.kind == "i":
            values |= {-1}
        bits = dt.itemsize * 8
        if bits >= 32:
            values |= {2**24, 2**24 + 1}  # equal after rounding to float32
        if bits == 64:
            values |= {2**53, 2**53 + 1, hi - 2}  # equal after rounding to float64
            if dt.kind == "i":
                values |= {-(2**53) - 1, -(2**53)}
        if bits >= 16:
            values |= {2048, 2049}  # equal after rounding to float16
        return sorted(v for v in values if lo <= v <= hi)
    fin = _finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, fin["max"], -fin["max"],
              fin["tiny"], -fin["tiny"], fin["subnormal"], -fin["subnormal"]]
    if dtype == "float32":
        values += [1.0 + 2.0**-12, 1.0 + 2.0**-11, 2049.0, 2048.0,  # equal in float16
                   1.0 + 2.0**-9]  # equal to 1.0 in bfloat16
    if dtype == "float64":
        values += [1.0 + 2.0**-30, 16777217.0, 16777216.0]  # equal in float32
    if allow_nan:
        values += [math.nan, -math.nan]
    return values


def collision_pairs(dtype: str) -> list[list]:
    """Pairs of distinct values of `dtype` that become equal when converted to a narrower type
    (or to the float type of the same width), for implementations that compute in another type."""
    pairs = {
        "float64": [[1.0, 1.0 + 2.0**-30], [16777216.0, 16777217.0]],  # equal in float32
        "float32": [[1.0, 1.0 + 2.0**-12], [2048.0, 2049.0],  # equal in float16
                    [1.0, 1.0 + 2.0**-9]],  # equal in bfloat16
        "float16": [[1.0, 1.0 + 2.0**-10], [-0.0, 0.0]],
        "bfloat16": [[1.0, 1.0 + 2.0**-7], [-0.0, 0.0]],
        "int64": [[2**53, 2**53 + 1], [2**63 - 2, 2**63 - 1], [-(2**63), 0]],
        "uint64": [[2**53, 2**53 + 1], [2**64 - 2, 2**64 - 1], [2**63, 0]],
        "int32": [[2**24, 2**24 + 1], [-(2**31), 0]],
        "uint32": [[2**24, 2**24 + 1], [2**31, 0]],
        "int16": [[2048, 2049], [-(2**15), 0]],
        "uint16": [[2048, 2049], [2**15, 0]],
        "int8": [[-128, 0], [-128, 127]],  # -(-128) overflows back to -128
        "uint8": [[128, 0], [255, 1]],
    }
    return pairs[dtypes.canonical(dtype)]


def _finfo(dtype: str) -> dict:
    dt = dtypes.numpy_dtype(dtype)
    if dtype == "bfloat16":
        import ml_dtypes

        info = ml_dtypes.finfo(dt)
    else:
        info = np.finfo(dt)
    return {"max": float(info.max), "tiny": float(info.tiny),
            "subnormal": float(info.smallest_subnormal)}


@lru_cache(maxsize=64)
def elements(dtype: str, *, allow_nan: bool = False) -> st.SearchStrategy:
    """One element as a Python number: small ones first (they shrink best), then the
    special values, then anything of the type."""
    dt = dtypes.numpy_dtype(dtype)
    specials = special_values(dtype, allow_nan=allow_nan)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        small = st.integers(max(int(info.min), -3), 3)
        general = st.integers(int(info.min), int(info.max))
    else:
        small = st.integers(-3, 3).map(float)
        general = st.floats(width=_FLOAT_BITS[dtype], allow_nan=allow_nan, allow_subnormal=True)
    return st.one_of(small, st.sampled_from(specials), general)


def to_array(values, dtype: str, shape) -> np.ndarray:
    """Python numbers to an array of `dtype` (rounding to the nearest for bfloat16)."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        return np.array(values, dtype=dt).reshape(shape)
    return np.array(values, dtype=np.float64).astype(dt).reshape(shape)


def tie_density(x: np.ndarray) -> str:
    """Bucket for how many values repeat: "single", "all equal", "heavy ties" (at most 3
    distinct or a quarter of the size), "some ties", "no ties"."""
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


def _random_values(rng, dtype: str, size: int) -> np.ndarray:
    """`size` values spread over the type's range (floats: normal scale with wide exponents).
    Element i depends only on the generator and i, not on `size`."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(int(info.min), int(info.max), size=size, dtype=dt, endpoint=True)
    top = min(20, int(math.log2(_finfo(dtype)["max"])) - 2)  # float16 tops out near 2**16
    u = rng.random((size, 3))  # one row per element keeps element i independent of size
    scale = np.exp2(np.floor(u[:, 0] * 2 * top) - top)
    normal = np.sqrt(-2 * np.log1p(-u[:, 1])) * np.cos(2 * np.pi * u[:, 2])  # Box-Muller
    return (normal * scale).astype(dt)


# How an array is built. "cycle": the pool repeated in order (every pool value sits in the
# first positions, so a failing array shrinks to a short one); "pool": values drawn at random
# from the pool (ties in random places); "direct": each element drawn on its own (small arrays
# only; larger ones read it as "pool"); the rest start from random values of the type.
# The pool is drawn first and "cycle" is the first mode, so whatever the size, a counterexample
# shrinks towards a short array of a few plain values.
MODES = ("cycle", "pool", "direct", "random", "random+pool", "ascending", "descending")


def _streams(seed: int):
    """Independent generators per purpose, so an array's first elements do not change when
    its size shrinks (the shrinker can then cut a failing array down)."""
    return [np.random.default_rng([seed, purpose]) for purpose in range(3)]


@lru_cache(maxsize=64)
def _pools(dtype: str, allow_nan: bool) -> st.SearchStrategy[list]:
    """A pool of 1 to 6 values, or a pair of values that collide when converted."""
    return st.one_of(st.lists(elements(dtype, allow_nan=allow_nan), min_size=1, max_size=6),
                     st.sampled_from(collision_pairs(dtype)).flatmap(st.permutations))


def _build_array(draw, dtype, shape, allow_nan):
    size = math.prod(shape)
    element = elements(dtype, allow_nan=allow_nan)
    pool_values = draw(_pools(dtype, allow_nan))
    mode = draw(cached.sampled(MODES))
    seed = draw(cached.integers(0, 2**32 - 1))
    if mode == "direct" and size > SMALL_SIZE:
        mode = "pool"
    event(f"array mode={mode}")
    if mode == "direct":
        values = draw(st.lists(st.one_of(st.sampled_from(pool_values), element), min_size=size, max_size=size))
        return to_array(values, dtype, shape)
    pool = to_array(pool_values, dtype, (-1,))
    choose, spread, sprinkle = _streams(seed)
    if mode == "cycle":
        return np.resize(pool, size).reshape(shape)
    if mode == "pool":
        return pool[choose.integers(0, len(pool), size=size)].reshape(shape)
    flat = _random_values(spread, dtype, size)
    if mode == "random+pool":  # a few pool values sprinkled over random data
        spots = sprinkle.random(size) < draw(cached.sampled((0.01, 0.1, 0.5)))
        flat[spots] = pool[choose.integers(0, len(pool), size=int(spots.sum()))]
    elif mode in ("ascending", "descending"):
        flat = np.sort(flat) if flat.dtype.kind in "iu" else np.sort(flat.astype(np.float64)).astype(pool.dtype)
        if mode == "descending":
            flat = flat[::-1].copy()
    return flat.reshape(shape)


def _put_nans(draw, x):
    """`x` with NaN put in: one at a drawn position (shrinks to position 0), or a share of the
    elements, quiet NaNs of either sign."""
    x = x.copy()
    flat = x.reshape(-1)
    share = draw(cached.sampled((0.0, 0.1, 0.5, 1.0)))
    if share == 0.0:
        spots = np.zeros(flat.size, dtype=bool)
        spots[draw(cached.integers(0, flat.size - 1))] = True
    else:
        rng = np.random.default_rng(draw(cached.integers(0, 2**32 - 1)))
        spots = rng.random(flat.size) < share
        spots[int(rng.integers(0, flat.size))] = True  # never none
    signs = np.where(np.random.default_rng(int(spots.sum())).random(int(spots.sum())) < 0.5, -1.0, 1.0)
    flat[spots] = (signs * np.nan).astype(flat.dtype)
    return x


def draw_array(draw, case, *, allow_nan: bool = False, require_nan: bool = False) -> np.ndarray:
    """Draw an input for `case` with a composite's `draw`. Builds no strategy per call, which
    keeps generation fast: the strategies it draws from are made once per type."""
    x = _build_array(draw, case.dtype, tuple(case.shape), allow_nan or require_nan)
    floating = x.dtype.kind not in "iu"
    if require_nan and floating and x.size > 0:
        x = _put_nans(draw, x)
    event(f"ties={tie_density(x)}")
    if (allow_nan or require_nan) and floating:
        event(f"NaN present={bool(np.isnan(x.astype(np.float64)).any())}")
    return x


def arrays_for(case, *, allow_nan: bool = False, require_nan: bool = False) -> st.SearchStrategy[np.ndarray]:
    """Input tensors of the case's value type and shape, adversarial on purpose. With
    `require_nan`, floating-point inputs always hold at least one NaN."""
    return st.composite(lambda draw: draw_array(draw, case, allow_nan=allow_nan, require_nan=require_nan))()
