"""A TopK that is wrong only on axes longer than 8192 (twice the strategies' default room),
as a kernel that switches to another algorithm on long rows may be: it returns the last K
indices' values in reverse."""
import numpy as np

from topkspec.spec.reference import reference_topk


def reversed_above_8192(x, *, axis, k, largest=True):
    values, indices = reference_topk(x, axis=axis, k=k, largest=largest)
    if np.shape(x)[axis] > 8192 and k > 1:
        values, indices = np.flip(values, axis=axis), np.flip(indices, axis=axis)
    return values, indices
