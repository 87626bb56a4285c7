"""One DirectML TopK on a worker: a DirectML case and its input in, the two outputs out, or
the stage and HRESULT of the refusal; and a descriptor as written put to CreateOperator alone.
The targets turn what these raise into their own errors (Rejected, TargetCrashed)."""
from __future__ import annotations

import math

import numpy as np

from topkspec.directml.worker import protocol

# A device that is gone cannot answer again: these end the worker like a crash.
DEVICE_LOST = {0x887A0005, 0x887A0006, 0x887A0007, 0x887A0020}


class Refused(Exception):
    """DirectML refused the call (the stage and HRESULT in the message), or answered with
    outputs too short for the case."""


class DeviceLost(Exception):
    """The device was lost during the call: the worker has been ended."""


def run_case(started_worker, case, x, stats, kept: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of `case` (a DirectML case) on `x`, on the worker `started_worker()`
    gives (asked for once the case is known to have a C form). Counts the call, its compile
    and its microseconds in `stats`; a case with a layout (spec.layouts) keeps its whole output
    buffers in `kept["buffers"]` (layout_call.OutputBuffers; None for a plain call). Raises
    protocol.Inexpressible when no C struct holds it."""
    kept = {} if kept is None else kept
    kept["buffers"] = None
    from topkspec.directml.client import layout_call
    from topkspec.spec.layouts import layout_of

    plan = fields = None
    if layout_of(case).is_plain:
        encoded = protocol.encode_descriptor(protocol.case_descriptor(case))
        data = np.ascontiguousarray(np.asarray(x, dtype=np.dtype(case.dtype))).tobytes()
    else:
        encoded, fields, data, plan = layout_call.encode_call(case, x)
    worker = started_worker()
    status, stage, values, indices, timings = worker.execute(encoded, data, layout=fields)
    stats["calls"] += 1
    if timings[1]:
        stats["compiled"] += 1
    for key, micros in zip(("create_us", "compile_us", "execute_us"), timings):
        stats[key] += micros
    if protocol.failed(status):
        where = protocol.STAGES.get(stage, f"stage {stage}")
        if (status & 0xFFFFFFFF) in DEVICE_LOST:
            worker.kill()
            raise DeviceLost(f"directml: {where} returned {protocol.hresult_name(status)}: the device was lost")
        raise Refused(f"directml: {where} returned {protocol.hresult_name(status)}")
    shape = tuple(case.out_shape) if 0 <= case.norm_axis < case.rank else tuple(case.shape)
    if plan is not None:
        kept["buffers"] = layout_call.OutputBuffers(values, indices, plan)
        try:
            return (layout_call.read_output(values, plan[1], case.dtype, shape),
                    layout_call.read_output(indices, plan[2], case.index_dtype, shape))
        except ValueError as exc:
            raise Refused(f"directml: {exc}") from None
    kept["buffers"] = None
    count = math.prod(shape)
    return _array(values, case.dtype, count, shape), _array(indices, case.index_dtype, count, shape)


def _array(data: bytes, dtype: str, count: int, shape) -> np.ndarray:
    dt = np.dtype(dtype)
    if len(data) < count * dt.itemsize:
        raise Refused(f"directml: an output of {len(data)} bytes cannot hold {count} {dtype} elements")
    return np.frombuffer(data, dtype=dt, count=count).reshape(shape).copy()


def create_operator(started_worker, descriptor) -> dict | None:
    """DirectML's verdict on a JSON descriptor, exactly as written: {"accepted", "detail",
    "hresult", "micros"}; None when no C struct can hold it (see protocol.Inexpressible), and
    then no worker is started."""
    try:
        encoded = protocol.encode_descriptor(descriptor)
    except protocol.Inexpressible:
        return None
    status, micros = started_worker().create(encoded)
    return {"accepted": not protocol.failed(status), "detail": protocol.hresult_name(status),
            "hresult": status & 0xFFFFFFFF, "micros": micros}
