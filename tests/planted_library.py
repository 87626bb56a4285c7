"""A stand-in for a runtime library that planted targets call (tests/planted_by_bug.py): its
frames are the library's own, not the adapter's."""
import numpy as np

from topkspec.spec.reference import reference_topk


def _chunks(x):
    return tuple(np.array_split(x, 2)) if x.ndim >= 3 else x


def top_k(x, *, axis, k, largest=True):
    """Fails inside its own code on input of rank 3 or more: `'tuple' object has no attribute 'ndim'`."""
    parts = _chunks(x)
    if parts.ndim == 0:
        raise ValueError("x must not be a scalar")
    return reference_topk(x, axis=axis, k=k, largest=largest)


def top_k_checked(x, *, axis, k, largest=True):
    """Refuses K above 1 with an error that names the argument."""
    if k > 1:
        raise ValueError(f"k must be 1 in this library, got k={k}")
    return reference_topk(x, axis=axis, k=k, largest=largest)


def top_k_typed(x, *, axis, k, largest=True):
    """Has no kernel for uint32 and uint64, and says so naming the type."""
    if x.dtype in (np.uint32, np.uint64):
        raise TypeError(f"unsupported dtype {x.dtype.name} for top_k")
    return reference_topk(x, axis=axis, k=k, largest=largest)


def top_k_unpacking(x, *, axis, k, largest=True):
    """Unpacks the wrong number of values once K spans the whole axis: Python's own ValueError,
    raised in the library's code (dask's argtopk over one-element chunks failed in this way)."""
    if k == x.shape[axis]:
        values, indices = np.array_split(x, 3, axis=axis)
    return reference_topk(x, axis=axis, k=k, largest=largest)
