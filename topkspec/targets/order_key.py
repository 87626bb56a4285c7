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
`LargestOnlyTarget` is the adapter around such a runtime: it probes each value type once and
runs the smallest form through the key.
"""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import AdapterError, Rejected, Target, describe_error, first_line, selects_largest


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


class LargestOnlyTarget(Target):
    """A target whose runtime's TopK selects only the largest: subclasses give `top_k(key, k,
    axis, sorted_)`, the runtime's own call (numpy in and out, a refusal raised as Rejected),
    `adapter` (how its adapter errors are named) and `refuses` (how a probe's refusal starts)."""
    #: The runtime selects the largest only; the adapter answers the smallest K through an exact
    #: order-reversing key (its contract says "not offered"; the cases still run, judged so).
    smallest_by_key = True

    adapter = "adapter"
    refuses = "top_k refuses"
    support_fields = ("dtype", "op", "largest")

    def __init__(self):
        self._support: dict = {}

    def top_k(self, key: np.ndarray, k: int, axis: int, sorted_: bool):
        raise NotImplementedError

    def _step(self, step, what: str):
        return adapter_step(step, f"{self.adapter}, {what}")

    def supports(self, case):
        """Probed once per (type, direction) with a tiny known-good call of the type that reaches
        top_k (the key's type for the smallest form): a refusal is Rejected, a valid descriptor
        rejected unless declared known."""
        largest = selects_largest(case)
        signature = (case.dtype, largest)
        if signature not in self._support:
            probe = np.arange(3).astype(dtypes.numpy_dtype(case.dtype))
            key = probe if largest else self._step(lambda: smallest_key(probe), "the smallest-K key")
            try:
                self.top_k(key, 1, 0, True)
                self._support[signature] = None
            except Rejected as exc:
                first = first_line(exc, empty="")
                self._support[signature] = (f"{self.refuses} {dtypes.name_of(key.dtype)}"
                                            f"{'' if largest else f' (the smallest-K key of {case.dtype})'}: "
                                            f"{first}")
        if self._support[signature]:
            raise Rejected(self._support[signature])
        return None

    def run(self, case, x):
        x = np.ascontiguousarray(x)
        largest = selects_largest(case)
        sorted_ = bool(case.sorted) if case.family == "onnx" else True
        key = x if largest else self._step(lambda: smallest_key(x), "the smallest-K key")
        values, indices = self.top_k(key, int(case.k), int(case.axis), sorted_)
        if not largest:  # the input's own elements at the indices, not the key's
            values = self._step(lambda: np.take_along_axis(x, indices, axis=case.norm_axis),
                                "gathering the smallest values")
        return values, indices
