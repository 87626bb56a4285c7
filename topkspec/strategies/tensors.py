"""Adversarial input tensors for a case: ties, extremes, signed zeros, infinities, subnormals,
values that collide when narrowed or widened, and NaN only when asked for.

Small tensors are drawn element by element so a counterexample shrinks to a short readable
array; large ones draw a small pool of values and a seed, and numpy builds the array.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import event, strategies as st

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


def _finfo(dtype: str) -> dict:
    dt = dtypes.numpy_dtype(dtype)
    if dtype == "bfloat16":
        import ml_dtypes

        info = ml_dtypes.finfo(dt)
    else:
        info = np.finfo(dt)
    return {"max": float(info.max), "tiny": float(info.tiny),
            "subnormal": float(info.smallest_subnormal)}


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
    """`size` values spread over the type's range (floats: normal scale with wide exponents)."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(int(info.min), int(info.max), size=size, dtype=dt, endpoint=True)
    top = min(20, int(math.log2(_finfo(dtype)["max"])) - 2)  # float16 tops out near 2**16
    scale = np.exp2(rng.integers(-top, top, size=size)).astype(np.float64)
    return (rng.standard_normal(size) * scale).astype(dt)


_PATTERNS = ("pool", "random", "random+pool", "ascending", "descending")


@st.composite
def _large_array(draw, dtype, shape, allow_nan):
    size = math.prod(shape)
    pattern = draw(st.sampled_from(_PATTERNS))
    pool = to_array(draw(st.lists(elements(dtype, allow_nan=allow_nan), min_size=1, max_size=8)),
                    dtype, (-1,))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if pattern == "pool":
        flat = rng.choice(pool, size=size)
    else:
        flat = _random_values(rng, dtype, size)
        if pattern == "random+pool":  # a few pool values sprinkled over random data
            spots = rng.random(size) < draw(st.sampled_from([0.01, 0.1, 0.5]))
            flat[spots] = rng.choice(pool, size=int(spots.sum()))
        elif pattern in ("ascending", "descending"):
            flat = np.sort(flat) if flat.dtype.kind in "iu" else np.sort(flat.astype(np.float64))
            flat = flat.astype(pool.dtype)
            if pattern == "descending":
                flat = flat[::-1].copy()
    event(f"large array pattern={pattern}")
    return flat.reshape(shape)


@st.composite
def _small_array(draw, dtype, shape, allow_nan):
    size = math.prod(shape)
    element = elements(dtype, allow_nan=allow_nan)
    # Elements from a small pool give ties; the pool shrinks to one value, so a counterexample
    # shrinks towards a constant array before anything else.
    from_pool = draw(st.sampled_from([True, False]))
    if from_pool:
        pool = draw(st.lists(element, min_size=1, max_size=3))
        values = draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))
    else:
        values = draw(st.lists(element, min_size=size, max_size=size))
    return to_array(values, dtype, shape)


def arrays_for(case, *, allow_nan: bool = False) -> st.SearchStrategy[np.ndarray]:
    """Input tensors of the case's value type and shape, adversarial on purpose."""
    shape = tuple(case.shape)
    size = math.prod(shape)
    if size <= SMALL_SIZE:
        strategy = _small_array(case.dtype, shape, allow_nan)
    else:
        strategy = _large_array(case.dtype, shape, allow_nan)

    def label(x):
        event(f"ties={tie_density(x)}")
        if allow_nan and x.dtype.kind not in "iu":
            event(f"NaN present={bool(np.isnan(x.astype(np.float64)).any())}")
        return x

    return strategy.map(label)
