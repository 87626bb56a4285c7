"""Strides arithmetic for DirectML's buffer tensors: packed strides, each element's offset, the
size DMLCalcBufferTensorSize gives, and whether two elements share an address. Standard library
only, so the validator's check of overlapping outputs loads nothing more (spec.layouts builds
on it)."""
from __future__ import annotations


def packed_strides(sizes) -> tuple:
    out, step = [], 1
    for size in reversed(sizes):
        out.append(step)
        step *= size
    return tuple(reversed(out))


def element_offsets(sizes, strides) -> list[int]:
    """The element offset of each logical element, in row-major order of `sizes`."""
    strides = packed_strides(sizes) if strides is None else strides
    offsets = [0]
    for size, stride in zip(sizes, strides):
        offsets = [base + i * stride for base in offsets for i in range(size)]
    return offsets


def total_size(sizes, strides, itemsize: int) -> int:
    """DMLCalcBufferTensorSize: bytes up to one past the last element, rounded up to 4."""
    if any(s == 0 for s in sizes):
        return 0
    strides = packed_strides(sizes) if strides is None else strides
    last = sum((s - 1) * st for s, st in zip(sizes, strides))
    return ((last + 1) * itemsize + 3) // 4 * 4


def overlapping(sizes, strides) -> bool:
    """Whether two elements of a tensor with these sizes and strides share an address."""
    if strides is None:
        return False
    dims = sorted((st, s) for s, st in zip(sizes, strides) if s > 1)
    if any(st == 0 for st, _ in dims):
        return True
    reach = 0  # the farthest offset the dimensions with smaller strides reach
    for stride, size in dims:
        if stride <= reach:
            break
        reach += (size - 1) * stride
    else:
        return False  # each stride steps past everything the smaller ones address
    count = 1
    for size in sizes:
        count *= size
    if count > 1 << 22:
        return True  # interleaved strides over more elements than can be enumerated: held as overlapping
    offsets = element_offsets(sizes, strides)
    return len(set(offsets)) != len(offsets)
