"""Plain functions that place NaN three ways, each otherwise correct (numbers in order, ties in
index order): `nan_last` puts every NaN below every number, `nan_first` above every number
whatever its sign (numpy's sort order), `total_order` as IEEE 754 totalOrder (+NaN above every
number, -NaN below). Each passes a run whose contract leaves NaN unspecified."""
import numpy as np

from topkspec.spec.nan_order import reference_topk_nan


def _placed(order):
    def topk(x, *, axis, k, largest):
        if not 0 <= axis < x.ndim or not 1 <= k <= x.shape[axis]:
            raise ValueError("k or axis out of range")
        return reference_topk_nan(x, axis=axis, k=k, largest=largest, order=order)
    topk.__name__ = topk.__qualname__ = f"nan_{order}"
    return topk


nan_last = _placed("smallest")
nan_first = _placed("largest")
total_order = _placed("totalorder")
