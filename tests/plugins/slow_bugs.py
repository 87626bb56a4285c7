"""A slow function with a bug: a run against it lasts long enough to be interrupted after the
bug was found."""
import time

from topkspec.spec.reference import reference_topk


def slow_and_ignores_direction(x, *, axis, k, largest):
    time.sleep(0.01)
    return reference_topk(x, axis=axis, k=k, largest=True)
