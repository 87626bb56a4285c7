"""A framework as a user plugs it in with its contract declared in a few lines: values only,
the largest K only, in no particular order, refusing K above the axis size. `partition_topk` is
correct; `clamping_topk` breaks one promised point (it clamps K instead of refusing it)."""
import numpy as np

from topkspec.spec.contracts import own_contract
from topkspec.targets.base import CallableTarget

CONTRACT = own_contract(
    "partition_topk", url="https://example.org/partition-topk", title="partition_topk reference",
    sorted=("never", "The k values come back in no particular order."),
    smallest=("not_offered", "Only the k largest values are returned."),
    indices=("not_returned", "Returns the values only."),
    k_above_axis=("refused", "Raises ValueError when k is larger than the axis."))


def partition_topk(x, *, axis, k, largest):
    if not 0 <= axis < x.ndim or not 0 < k <= x.shape[axis]:
        raise ValueError("k or axis out of range")
    n = x.shape[axis]
    # A stable sort copies elements as they are: np.partition's SIMD selection can hand back
    # -0.0 for a +0.0 of the input (found with NaN and zeros in one row), which no input holds.
    return np.take(np.sort(x, axis=axis, kind="stable"), range(n - k, n), axis=axis)


def clamping_topk(x, *, axis, k, largest):
    if not 0 <= axis < x.ndim:
        raise ValueError("axis out of range")
    return partition_topk(x, axis=axis, k=min(k, x.shape[axis]), largest=largest)


good = CallableTarget(partition_topk, name="partition_topk", contract=CONTRACT)
clamping = CallableTarget(clamping_topk, name="clamping_topk", contract=CONTRACT)
