"""One DirectML TopK laid out as applications lay it out (spec.layouts): the input written into
its buffer at its binding offset through its strides, the outputs read back through theirs from
whole buffers that were filled with the guard byte before the call. What the call leaves in
those buffers is kept (`OutputBuffers`), so the layout properties can look at every byte."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topkspec.directml.worker import protocol
from topkspec.spec.layouts import GUARD_BYTE, buffer_plan, layout_of
from topkspec.spec.layouts import offset_array as _offsets


@dataclass(frozen=True)
class OutputBuffers:
    """The two output buffers after a call, whole: `values`, `indices` (bytes), the plan that
    says where the elements lie in them (spec.layouts.buffer_plan) and the guard byte they held
    before the call."""

    values: bytes
    indices: bytes
    plan: tuple
    fill: int = GUARD_BYTE


def input_buffer(case, x, plan) -> bytes:
    """The input's buffer: zeros, with each logical element at its binding offset plus its
    strided place (a broadcast stride writes one place many times, with the same value)."""
    entry = plan[0]
    raw = np.zeros(entry["buffer"], dtype=np.uint8)
    dt = np.dtype(case.dtype)
    view = raw[entry["offset"]:entry["offset"] + entry["total"]].view(dt) if entry["total"] else raw[:0].view(dt)
    values = np.ascontiguousarray(np.asarray(x, dtype=dt)).ravel()
    if values.size:
        view[_offsets(entry)] = values
    return raw.tobytes()


def read_output(buffer: bytes, entry, dtype: str, shape) -> np.ndarray:
    """The output's elements, read through its strides from the whole buffer."""
    dt = np.dtype(dtype)
    need = entry["offset"] + entry["total"]
    if len(buffer) < need:
        raise ValueError(f"an output buffer of {len(buffer)} bytes cannot hold a tensor ending at byte {need}")
    view = np.frombuffer(buffer, dtype=np.uint8)[entry["offset"]:need].view(dt)
    count = int(np.prod(shape)) if len(shape) else 1
    if not count:
        return np.zeros(shape, dt)
    return view[_offsets(entry)].reshape(shape).copy()


def encode_call(case, x) -> tuple[bytes, bytes, bytes, tuple]:
    """(descriptor, layout fields, input buffer, plan) of a case with a layout."""
    layout = layout_of(case)
    plan = tuple(buffer_plan(case, layout))
    descriptor = protocol.encode_descriptor(protocol.case_descriptor(case))
    fields = protocol.layout_fields(flags=layout.flags, graph=layout.graph, offsets=[p["offset"] for p in plan],
                                    buffers=[p["buffer"] for p in plan], fill=GUARD_BYTE)
    return descriptor, fields, input_buffer(case, x, plan), plan
