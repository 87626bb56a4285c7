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
