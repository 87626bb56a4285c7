"""The exact order-reversing key for runtimes whose TopK selects only the largest.

The smallest K of `x` are the largest K of `smallest_key(x)`; the values are then gathered
from `x` by the indices, so they are the input's own bits. Negating is no such key (it
overflows a signed minimum, wraps unsigned types and splits -0.0 from +0.0), so:
integers take bitwise not (~x is -x - 1 signed, max - x unsigned), and floats their bits as
a signed integer of the same width made monotonic in the value (negative numbers with their
magnitude bits flipped), both zeros mapped to 0 (they stay tied) and every NaN to the top
(NaN comes last in the smallest form, as the reference has it), then bitwise not. All integer
work, so a runtime that flushes subnormals in float comparisons sees them apart.

KEY_SOURCE gives the same key as source text for a report's standalone repro.py.
"""
from __future__ import annotations

import numpy as np

from topkspec.targets.base import AdapterError, describe_error


def smallest_key(x: np.ndarray) -> np.ndarray:
    """A key whose largest entries are the smallest entries of `x` (see the module text)."""
    x = np.ascontiguousarray(x)
    if x.dtype.kind in "iu":
        return ~x
    signed = np.dtype(f"int{x.dtype.itemsize * 8}")
    top = np.iinfo(signed).max
    bits = x.view(signed)
    magnitude = bits & top
    infinity = np.array(np.inf, dtype=x.dtype).view(signed)
    monotonic = np.where(bits < 0, bits ^ top, bits)
    monotonic = np.where(magnitude == 0, np.zeros_like(monotonic), monotonic)  # -0.0 ties +0.0
    monotonic = np.where(magnitude > infinity, np.full_like(monotonic, top), monotonic)  # NaN on top
    return ~monotonic


_FLOAT_KEY = '''

def smallest_first(x):
    """The run's exact order-reversing key: the smallest K of x are the largest K of the key."""
    signed = np.dtype(f"int{x.dtype.itemsize * 8}")
    top = np.iinfo(signed).max
    bits = x.view(signed)
    key = np.where(bits < 0, bits ^ top, bits)
    key = np.where((bits & top) == 0, np.zeros_like(key), key)  # -0.0 ties +0.0
    inf = np.array(np.inf, dtype=x.dtype).view(signed)
    return ~np.where((bits & top) > inf, np.full_like(key, top), key)  # NaN last
'''

_INTEGER_KEY = '''

def smallest_first(x):
    """The run's exact order-reversing key: bitwise not (-x - 1, or max - x unsigned)."""
    return ~x
'''


def key_source(integer: bool) -> str:
    """`smallest_first(x)` as source text, for an integer or a float value type."""
    return _INTEGER_KEY if integer else _FLOAT_KEY


def adapter_step(step, what: str):
    """step(), with any failure raised as the adapter's own (AdapterError, naming `what`)."""
    try:
        return step()
    except Exception as exc:
        raise AdapterError(f"{what}: {describe_error(exc)}") from exc
