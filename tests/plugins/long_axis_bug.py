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


FIRST = 1 << 16


def first_65536_only(x, *, axis, k, largest=True):
    """Looks only at the first 65,536 elements of the axis, as a kernel that tiles a row into
    one block of shared memory and never loads the next may: K of those, whatever comes after."""
    x = np.asarray(x)
    head = np.take(x, np.arange(min(FIRST, x.shape[axis])), axis=axis)
    return reference_topk(head, axis=axis, k=min(k, head.shape[axis]), largest=largest)
