"""The worker's protocol and the DirectML descriptor's binary form. Standard library only.

Frames on the worker's standard streams, little-endian:

    request   u32 length (of what follows), u32 command, payload
    reply     u32 length (of what follows), u32 status (an HRESULT), u32 stage, payload

The worker writes one reply as soon as it starts (stage DEVICE): status S_OK and a JSON payload
describing the device (adapter, feature level, per-type support), or the failing HRESULT and
the step that failed. Then it answers requests in order:

    CREATE   payload: an operator descriptor. Reply: status = the HRESULT of
             IDMLDevice::CreateOperator, payload = f64 microseconds it took.
    EXECUTE  payload: an operator descriptor, u64 input size, the input bytes. Reply: status
             S_OK and payload = u64 size + bytes of OutputValueTensor, the same for
             OutputIndexTensor, then f64 microseconds to create, to compile and initialize
             (0 when the compiled operator was cached) and to execute; or the failing HRESULT
             with the stage that failed.
    EXECUTE_LAYOUT  the same, laid out as applications do: an operator descriptor (its Strides and
             TotalTensorSizeInBytes as the layout gives them), u32 DML_EXECUTION_FLAGS, u32 graph
             (1: compiled inside a graph, an identity before and after the TopK, with
             IDMLDevice1::CompileGraph), per tensor u64 binding offset and u64 buffer bytes, u32
             fill (the byte the output buffers hold before the call), then u64 size and the input
             buffer's bytes. Reply: as EXECUTE's, each output buffer whole (guard bytes included).
    CRASH, HANG   the worker crashes or stops answering (tests of the suite's isolation).
    QUIT     the worker answers S_OK and exits.

An operator descriptor is u32 operator type, Axis, K, AxisDirection, then the three tensors
(InputTensor, OutputValueTensor, OutputIndexTensor), each u32 tensor type (1 = buffer),
DataType, Flags, DimensionCount, has_strides, u64 TotalTensorSizeInBytes, u32
GuaranteedBaseOffsetAlignment, u32 Sizes[DimensionCount] and, when has_strides,
u32 Strides[DimensionCount]. The worker puts every field into DML_BUFFER_TENSOR_DESC and
DML_TOP_K(1)_OPERATOR_DESC exactly as it arrives, so DirectML sees the descriptor as written.

`encode_descriptor` maps the descriptor JSON (docs/spec.md) onto that form. JSON that no C struct can hold
(a missing member, a member the struct lacks, a negative or fractional UINT, a Strides list
whose length differs from the DimensionCount) raises `Inexpressible`: such a descriptor can
never reach DirectML, so only `topkspec validate` judges it.
"""
from __future__ import annotations

import struct

WORKER_PROTOCOL = 1

CMD_CREATE = 2
CMD_EXECUTE = 3
CMD_CRASH = 4
CMD_HANG = 5
CMD_QUIT = 6
CMD_EXECUTE_LAYOUT = 8

STAGES = {0: "none", 1: "CreateOperator", 2: "CompileOperator", 3: "initialize", 4: "execute",
          5: "read back", 6: "device", 7: "protocol"}
STAGE_CREATE = 1
STAGE_DEVICE = 6
STAGE_PROTOCOL = 7

S_OK = 0
# HRESULTs a DirectML call may return, by value (winerror.h).
HRESULT_NAMES = {
    0x00000000: "S_OK",
    0x00000001: "S_FALSE",
    0x80004001: "E_NOTIMPL",
    0x80004002: "E_NOINTERFACE",
    0x80004003: "E_POINTER",
    0x80004004: "E_ABORT",
    0x80004005: "E_FAIL",
    0x8000FFFF: "E_UNEXPECTED",
    0x80070005: "E_ACCESSDENIED",
    0x80070006: "E_HANDLE",
    0x8007000E: "E_OUTOFMEMORY",
    0x80070057: "E_INVALIDARG",
    0x8007007E: "HRESULT_FROM_WIN32(ERROR_MOD_NOT_FOUND)",
    0x8007007F: "HRESULT_FROM_WIN32(ERROR_PROC_NOT_FOUND)",
    0x800700C1: "HRESULT_FROM_WIN32(ERROR_BAD_EXE_FORMAT)",
    0x80070002: "HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)",
    0x80070003: "HRESULT_FROM_WIN32(ERROR_PATH_NOT_FOUND)",
    0x80070216: "HRESULT_FROM_WIN32(ERROR_ARITHMETIC_OVERFLOW)",
    0x887A0001: "DXGI_ERROR_INVALID_CALL",
    0x887A0002: "DXGI_ERROR_NOT_FOUND",
    0x887A0004: "DXGI_ERROR_UNSUPPORTED",
    0x887A0005: "DXGI_ERROR_DEVICE_REMOVED",
    0x887A0006: "DXGI_ERROR_DEVICE_HUNG",
    0x887A0007: "DXGI_ERROR_DEVICE_RESET",
    0x887A0020: "DXGI_ERROR_DRIVER_INTERNAL_ERROR",
    0x887A002D: "DXGI_ERROR_SDK_COMPONENT_MISSING",
}

UINT_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
INT_MIN = -(2**31)

OPERATOR_TYPES = {"TOP_K": 71, "TOP_K1": 112}
DATA_TYPES = {"FLOAT32": 1, "FLOAT16": 2, "UINT32": 3, "UINT16": 4, "UINT8": 5, "INT32": 6,
              "INT16": 7, "INT8": 8, "FLOAT64": 9, "UINT64": 10, "INT64": 11}
DATA_TYPE_NAMES = {v: k for k, v in DATA_TYPES.items()}
ELEMENT_SIZES = {1: 4, 2: 2, 3: 4, 4: 2, 5: 1, 6: 4, 7: 2, 8: 1, 9: 8, 10: 8, 11: 8}
NUMPY_TYPES = {1: "float32", 2: "float16", 3: "uint32", 4: "uint16", 5: "uint8", 6: "int32",
               7: "int16", 8: "int8", 9: "float64", 10: "uint64", 11: "int64"}
DIRECTIONS = {"INCREASING": 0, "DECREASING": 1}
TENSORS = ("InputTensor", "OutputValueTensor", "OutputIndexTensor")
TENSOR_FIELDS = ("DataType", "Sizes", "Strides", "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment",
                 "Flags")
OPERATOR_MEMBERS = {
    "TOP_K": ("InputTensor", "OutputValueTensor", "OutputIndexTensor", "Axis", "K"),
    "TOP_K1": ("InputTensor", "OutputValueTensor", "OutputIndexTensor", "Axis", "K", "AxisDirection"),
}


class Inexpressible(ValueError):
    """JSON that no DML_*_OPERATOR_DESC can hold, so DirectML can never be asked about it."""


class ProtocolError(RuntimeError):
    """A frame that does not follow the protocol."""


def hresult_name(status: int) -> str:
    """"E_INVALIDARG (0x80070057)" for 0x80070057."""
    status &= 0xFFFFFFFF
    name = HRESULT_NAMES.get(status)
    return f"{name} (0x{status:08X})" if name else f"HRESULT 0x{status:08X}"


def failed(status: int) -> bool:
    return bool(status & 0x80000000)


# -- descriptors ------------------------------------------------------------------------------

def _strip(text: str, prefix: str) -> str:
    text = text.strip()
    return text[len(prefix):] if text.upper().startswith(prefix) else text


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _uint(value, what: str, limit: int = UINT_MAX) -> int:
    if not _is_int(value) or not 0 <= value <= limit:
        raise Inexpressible(f"{what} = {value!r} is not a {'UINT64' if limit > UINT_MAX else 'UINT'}")
    return value


def _enum(value, what: str, names: dict, prefix: str) -> int:
    """A C enum member: one of its names (or short names), or any int an enum can hold."""
    if isinstance(value, str):
        name = _strip(value, prefix).upper()
        if name in names:
            return names[name]
        raise Inexpressible(f"{what} = {value!r} names no {prefix.rstrip('_')} value")
    if not _is_int(value) or not INT_MIN <= value <= UINT_MAX:
        raise Inexpressible(f"{what} = {value!r} is not an enum value")
    return value & 0xFFFFFFFF


def operator_name(desc) -> str:
    if not isinstance(desc, dict):
        raise Inexpressible("a DirectML descriptor is a JSON object")
    value = desc.get("Type")
    if _is_int(value):
        for name, number in OPERATOR_TYPES.items():
            if number == value:
                return name
    if isinstance(value, str):
        name = _strip(value, "DML_OPERATOR_").upper()
        if name in OPERATOR_TYPES:
            return name
    raise Inexpressible(f"Type {value!r} is neither DML_OPERATOR_TOP_K nor DML_OPERATOR_TOP_K1")


def calc_buffer_tensor_size(data_type: int, sizes, strides=None) -> int:
    """What DMLCalcBufferTensorSize computes: bytes up to the last element addressed by the
    sizes and strides (packed when there are none), rounded up to 4. Types DirectML does not
    know count 4 bytes an element."""
    from topkspec.spec.checks import implied_size_bytes

    if any(s == 0 for s in sizes):
        return 0
    return implied_size_bytes(sizes, strides, ELEMENT_SIZES.get(data_type, 4), 4)


def _tensor(tensor, name: str) -> tuple:
    if not isinstance(tensor, dict):
        raise Inexpressible(f"{name} is not a tensor desc")
    unknown = sorted(set(tensor) - set(TENSOR_FIELDS))
    if unknown:
        raise Inexpressible(f"DML_BUFFER_TENSOR_DESC has no member {unknown[0]} ({name})")
    for member in ("DataType", "Sizes"):
        if member not in tensor:
            raise Inexpressible(f"{name}.{member} is missing")
    data_type = _enum(tensor["DataType"], f"{name}.DataType", DATA_TYPES, "DML_TENSOR_DATA_TYPE_")
    sizes = tensor["Sizes"]
    if not isinstance(sizes, list):
        raise Inexpressible(f"{name}.Sizes is not a list")
    sizes = [_uint(s, f"{name}.Sizes[{i}]") for i, s in enumerate(sizes)]
    strides = tensor.get("Strides")
    if strides is not None:
        if not isinstance(strides, list):
            raise Inexpressible(f"{name}.Strides is not a list")
        if len(strides) != len(sizes):
            raise Inexpressible(f"{name}.Strides has {len(strides)} entries but DimensionCount is {len(sizes)}: "
                                f"DML_BUFFER_TENSOR_DESC reads DimensionCount strides")
        strides = [_uint(s, f"{name}.Strides[{i}]") for i, s in enumerate(strides)]
    flags = _uint(tensor.get("Flags", 0), f"{name}.Flags")
    total = tensor.get("TotalTensorSizeInBytes")
    total = calc_buffer_tensor_size(data_type, sizes, strides) if total is None else \
        _uint(total, f"{name}.TotalTensorSizeInBytes", UINT64_MAX)
    alignment = _uint(tensor.get("GuaranteedBaseOffsetAlignment", 0), f"{name}.GuaranteedBaseOffsetAlignment")
    return data_type, flags, sizes, strides, total, alignment


def encode_descriptor(desc) -> bytes:
    """The binary form of a DirectML descriptor in the JSON of docs/spec.md (names, short names or enum values);
    raises Inexpressible when no C struct can hold it. FeatureLevel is not part of the struct:
    DirectML judges a descriptor at the device's own feature level."""
    op = operator_name(desc)
    body = desc.get("Desc")
    if not isinstance(body, dict):
        raise Inexpressible("Desc is not an object")
    members = OPERATOR_MEMBERS[op]
    unknown = sorted(set(body) - set(members))
    if unknown:
        raise Inexpressible(f"DML_{op}_OPERATOR_DESC has no member {unknown[0]}")
    missing = [m for m in members if m not in body]
    if missing:
        raise Inexpressible(f"DML_{op}_OPERATOR_DESC member {missing[0]} is missing")
    axis = _uint(body["Axis"], "Axis")
    k = _uint(body["K"], "K")
    direction = 0
    if op == "TOP_K1":
        direction = _enum(body["AxisDirection"], "AxisDirection", DIRECTIONS, "DML_AXIS_DIRECTION_")
    out = [struct.pack("<4I", OPERATOR_TYPES[op], axis, k, direction)]
    for name in TENSORS:
        data_type, flags, sizes, strides, total, alignment = _tensor(body[name], name)
        out.append(struct.pack("<5IQI", 1, data_type, flags, len(sizes), strides is not None, total, alignment))
        out.append(struct.pack(f"<{len(sizes)}I", *sizes))
        if strides is not None:
            out.append(struct.pack(f"<{len(strides)}I", *strides))
    return b"".join(out)


def decode_descriptor(data: bytes) -> dict:
    """The fields of an encoded descriptor (for tests and messages)."""
    op_type, axis, k, direction = struct.unpack_from("<4I", data, 0)
    at = 16
    tensors = []
    for _ in TENSORS:
        kind, data_type, flags, count, has_strides, total, alignment = struct.unpack_from("<5IQI", data, at)
        at += struct.calcsize("<5IQI")
        sizes = list(struct.unpack_from(f"<{count}I", data, at))
        at += 4 * count
        strides = None
        if has_strides:
            strides = list(struct.unpack_from(f"<{count}I", data, at))
            at += 4 * count
        tensors.append({"TensorType": kind, "DataType": data_type, "Flags": flags, "Sizes": sizes,
                        "Strides": strides, "TotalTensorSizeInBytes": total,
                        "GuaranteedBaseOffsetAlignment": alignment})
    if at != len(data):
        raise ProtocolError(f"{len(data) - at} bytes left after the descriptor")
    return {"Type": op_type, "Axis": axis, "K": k, "AxisDirection": direction,
            **dict(zip(TENSORS, tensors))}


def case_descriptor(case) -> dict:
    """The DirectML JSON descriptor of a DirectML Case: packed tensors, or the Strides and
    TotalTensorSizeInBytes of the case's layout (spec.layouts)."""
    from topkspec.spec.layouts import buffer_plan, layout_of

    plan = buffer_plan(case) if not layout_of(case).is_plain else None

    def tensor(dtype, sizes, t):
        out = {"DataType": dtype.upper(), "Sizes": list(sizes)}
        entry = plan[t] if plan else None
        if entry and entry["strides"] is not None:
            out["Strides"] = list(entry["strides"])
            out["TotalTensorSizeInBytes"] = entry["total"]
        return out

    out_sizes = list(case.out_shape) if 0 <= case.norm_axis < case.rank else list(case.shape)
    body = {"InputTensor": tensor(case.dtype, case.shape, 0),
            "OutputValueTensor": tensor(case.dtype, out_sizes, 1),
            "OutputIndexTensor": tensor(case.index_dtype, out_sizes, 2),
            "Axis": case.axis, "K": case.k}
    if case.op == "TOP_K1":
        body["AxisDirection"] = "DECREASING" if case.largest else "INCREASING"
    return {"Type": case.op, "Desc": body}


# -- frames -----------------------------------------------------------------------------------

def request(command: int, payload: bytes = b"") -> bytes:
    return struct.pack("<II", 4 + len(payload), command) + payload


def execute_payload(descriptor: bytes, data: bytes) -> bytes:
    return descriptor + struct.pack("<Q", len(data)) + data


def layout_fields(*, flags: int, graph: bool, offsets, buffers, fill: int) -> bytes:
    """What EXECUTE_LAYOUT puts between the descriptor and the input: the call's layout."""
    parts = [struct.pack("<II", flags, int(graph))]
    parts += [struct.pack("<QQ", offset, size) for offset, size in zip(offsets, buffers)]
    return b"".join(parts) + struct.pack("<I", fill)


def parse_reply(body: bytes) -> tuple[int, int, bytes]:
    """(status, stage, payload) of a reply body (the frame without its length)."""
    if len(body) < 8:
        raise ProtocolError(f"reply of {len(body)} bytes is shorter than its header")
    status, stage = struct.unpack_from("<II", body, 0)
    return status, stage, body[8:]


def parse_outputs(payload: bytes) -> tuple[bytes, bytes, tuple]:
    """(values bytes, indices bytes, (create_us, compile_us, execute_us)) of an EXECUTE reply."""
    at = 0
    parts = []
    for _ in range(2):
        if len(payload) < at + 8:
            raise ProtocolError("EXECUTE reply is cut short")
        (size,) = struct.unpack_from("<Q", payload, at)
        at += 8
        if len(payload) < at + size:
            raise ProtocolError("EXECUTE reply is cut short")
        parts.append(payload[at:at + size])
        at += size
    timings = struct.unpack_from("<3d", payload, at) if len(payload) >= at + 24 else (0.0, 0.0, 0.0)
    return parts[0], parts[1], timings
