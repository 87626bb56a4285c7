"""The values adversarial tensors are made of, per value type: small plain numbers first,
then extremes, ±0, ±inf, subnormals, pairs that collide when narrowed or widened, a few
irregular values, and NaN only when asked for.

`value_table(dtype)` orders them so that index 0 is the simplest (0), then 1, -1, 2, ...: a
draw of an index shrinks to the simplest value that still fails.
"""
from __future__ import annotations

import math
import zlib
from functools import lru_cache

import numpy as np
from hypothesis import strategies as st

from topkspec.spec import dtypes
from topkspec.strategies import arguments

_FLOAT_BITS = {"float16": 16, "float32": 32, "float64": 64, "bfloat16": 32}
# Plain values, simplest first (negatives left out for unsigned types).
_PLAIN = (0, 1, -1, 2, -2, 3, -3)
# How many irregular values of the type each table holds.
_IRREGULAR = 4


def special_values(dtype: str, *, allow_nan: bool = False) -> list:
    """Values of a type that break implementations: extremes, ±0, ±inf, the smallest normal
    and subnormal, and pairs that become equal when narrowed or widened to another type.

    - dtype: the value type name, such as "float32", "bfloat16" or "int8".
    - allow_nan: add NaN and -NaN (floating-point types); default False.

    Gives a list of Python numbers. Checks its arguments at once (InvalidStrategyArgument).

    >>> special_values("int8")
    [-128, -127, -1, 0, 1, 63, 64, 126, 127]
    >>> special_values("float")
    Traceback (most recent call last):
    ...
    topkspec.strategies.arguments.InvalidStrategyArgument: dtype='float' must be a value type name ...
    """
    arguments.check_dtype("dtype", dtype)
    arguments.check_bool("allow_nan", allow_nan)
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
    fin = finfo(dtype)
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


def finfo(dtype: str) -> dict:
    """max, tiny (smallest normal) and subnormal (smallest) of a float type, as floats."""
    dt = dtypes.numpy_dtype(dtype)
    if dtype == "bfloat16":
        import ml_dtypes

        info = ml_dtypes.finfo(dt)
    else:
        info = np.finfo(dt)
    return {"max": float(info.max), "tiny": float(info.tiny),
            "subnormal": float(info.smallest_subnormal)}


def elements(dtype: str, *, allow_nan: bool = False) -> st.SearchStrategy:
    """Single values of a type: small ones first (they shrink best), then the special values,
    then anything of the type.

    - dtype: the value type name, such as "float32", "bfloat16" or "int8".
    - allow_nan: NaN may be drawn; default False (no effect on integers).

    Draws Python numbers (int or float), shrinking towards 0. Arguments are checked when the
    strategy is first used (InvalidStrategyArgument).

    >>> value = elements("int8").example()
    >>> isinstance(value, int) and -128 <= value <= 127
    True
    >>> elements("int8", allow_nan=1).validate()
    Traceback (most recent call last):
    ...
    topkspec.strategies.arguments.InvalidStrategyArgument: allow_nan=1 must be True or False
    """
    def checked():
        arguments.check_dtype("dtype", dtype)
        arguments.check_bool("allow_nan", allow_nan)
        return _elements(dtype, allow_nan)
    return st.deferred(checked)


@lru_cache(maxsize=64)
def _elements(dtype: str, allow_nan: bool) -> st.SearchStrategy:
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


@lru_cache(maxsize=16)
def _powers_of_two(dtype: str) -> np.ndarray:
    """2**-e .. 2**e, e the largest power random values are scaled by (float16 tops out near
    2**16): multiplying by one of them is exact, and quicker than ldexp."""
    top = min(20, int(math.log2(finfo(dtype)["max"])) - 2)
    return 2.0 ** np.arange(-top, top + 1)


def random_values(rng, dtype: str, size: int) -> np.ndarray:
    """`size` values spread over the type's range (floats: a uniform number in [-1, 1) times
    2**e, e within the type's reach, both from one uniform draw per element). Element i
    depends only on the generator and i, not on `size`."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(int(info.min), int(info.max), size=size, dtype=dt, endpoint=True)
    powers = _powers_of_two(dtype)
    scaled = rng.random(size)
    scaled *= len(powers)
    exponent = scaled.astype(np.intp)
    scaled -= exponent  # the fraction: a uniform number in [0, 1)
    scaled *= 2.0
    scaled -= 1.0
    scaled *= powers[exponent]
    return scaled.astype(dt)


def _irregular(dtype: str) -> list:
    """A few fixed values of the type with no pattern to them (the same in every run)."""
    values = random_values(np.random.default_rng(zlib.crc32(dtype.encode())), dtype, _IRREGULAR)
    return values.tolist() if values.dtype.kind in "iu" else values.astype(np.float64).tolist()


def _special_entries(dtype: str, allow_nan: bool) -> list[tuple]:
    """The entries that are not plain numbers: NaN when allowed (first: it then starts the
    "specials" layout, so a NaN bug shrinks to a short array), ±0, ±inf, extremes,
    subnormals, colliding pairs."""
    if dtypes.numpy_dtype(dtype).kind in "iu":
        info = np.iinfo(dtypes.numpy_dtype(dtype))
        lo, hi = int(info.min), int(info.max)
        entries = [(v,) for v in (lo, hi, hi - 1, lo + 1, (hi + 1) // 2, (hi + 1) // 2 - 1)]
        entries.append((lo, hi))
        entries += [tuple(pair) for pair in collision_pairs(dtype)]
        entries += [(v,) for v in special_values(dtype)]
        return entries
    fin = finfo(dtype)
    entries = [(math.nan,), (-math.nan,), (math.nan, 1.0)] if allow_nan else []
    entries += [(-0.0, 0.0), (-0.0,), (0.0, -0.0), (math.inf,), (-math.inf,), (-math.inf, math.inf),
                (fin["max"],), (-fin["max"],), (fin["tiny"],), (-fin["tiny"],),
                (fin["subnormal"],), (-fin["subnormal"],), (fin["subnormal"], -fin["tiny"])]
    entries += [tuple(float(v) for v in pair) for pair in collision_pairs(dtype)]
    return entries


def _unique(entries) -> tuple:
    """Entries without repeats, by repr and sign: -0.0 == 0.0, and -NaN prints as NaN, yet
    each belongs in a table (a sign-aware NaN order tells -NaN from +NaN)."""
    seen = set()
    out = []
    for entry in entries:
        key = tuple((repr(v), math.copysign(1.0, v) if isinstance(v, float) else 1.0) for v in entry)
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return tuple(out)


@lru_cache(maxsize=64)
def value_table(dtype: str, allow_nan: bool = False) -> tuple[tuple, ...]:
    """Entries a tensor's pool of values is drawn from, simplest first: plain numbers
    (0, 1, -1, 2, ...), the special entries, a few irregular values. Each entry is a tuple of
    one value or of two that belong together (-0.0 with 0.0, a pair that collides when
    converted); index 0 is (0,)."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        plain = [(v,) for v in _PLAIN if info.min <= v <= info.max]
    else:
        plain = [(float(v),) for v in _PLAIN] + [(0.5,)]
    irregular = [(v,) for v in _irregular(dtype)]
    return _unique(plain + _special_entries(dtype, allow_nan) + irregular)


@lru_cache(maxsize=64)
def special_pool(dtype: str, allow_nan: bool = False) -> np.ndarray:
    """The special values of the type (NaN when allowed) as one read-only array."""
    values = [v for entry in _unique(_special_entries(dtype, allow_nan)) for v in entry]
    flat = to_array(values, dtype, (-1,))
    flat.setflags(write=False)
    return flat


def to_array(values, dtype: str, shape) -> np.ndarray:
    """Python numbers to an array of `dtype` (rounding to the nearest for bfloat16)."""
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        return np.array(values, dtype=dt).reshape(shape)
    return np.array(values, dtype=np.float64).astype(dt).reshape(shape)
