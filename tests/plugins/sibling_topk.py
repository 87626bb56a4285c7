"""A module beside the plug-in file: imported by file_plugin.py by its plain name."""
import numpy as np


def numpy_topk(x, *, axis, k, largest):
    """TopK by stable argsort; raises ValueError to reject K or axis out of range."""
    x = np.asarray(x)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} out of range for rank {x.ndim}")
    if not 1 <= k <= x.shape[axis]:
        raise ValueError(f"k {k} out of range for size {x.shape[axis]}")
    key = ~x if x.dtype.kind in "iu" and largest else (-x if largest else x)
    order = np.argsort(key, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices.astype(np.uint32)


def strict_library_topk(x, *, axis, k, largest):
    """As a library that checks its arguments might: TypeError for K out of range."""
    if not 1 <= k <= np.shape(x)[axis]:
        raise TypeError(f"k={k} is not a valid count for an axis of {np.shape(x)[axis]}")
    return numpy_topk(x, axis=axis, k=k, largest=largest)


def nan_order_varies_with_k(x, *, axis, k, largest):
    """Right for a 1-D input, but with NaN present it puts the NaNs first in an order that
    turns with K: each result is a valid top K (NaN order is unspecified), though a smaller K's
    indices are no prefix of a larger K's."""
    x = np.asarray(x)
    nan = np.flatnonzero(np.isnan(x))
    if x.ndim != 1 or not nan.size:
        return numpy_topk(x, axis=axis, k=k, largest=largest)
    rest = np.flatnonzero(~np.isnan(x))
    ordered = rest[np.argsort(-x[rest] if largest else x[rest], kind="stable")]
    indices = np.concatenate([np.roll(nan, k), ordered])[:k]
    return x[indices], indices.astype(np.uint32)


def wrong_direction_for_small_k(x, *, axis, k, largest):
    """Picks the other end for K below 3: a prefix bug that NaN in the input does not hide."""
    return numpy_topk(x, axis=axis, k=k, largest=largest if k >= 3 else not largest)
