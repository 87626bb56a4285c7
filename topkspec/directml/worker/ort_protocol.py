"""The ONNX Runtime worker's requests and replies (ort_worker.c), on the frames of protocol.py.
Standard library only.

    LOAD   payload: an ONNX model (bytes). Reply: S_OK and u32 session id; or E_FAIL at stage
           LOAD with u32 OrtErrorCode and ONNX Runtime's message.
    RUN    payload: u32 session id, u32 input count, u32 output count; per input its name
           (u32 length + UTF-8), u32 ONNX element type, u32 rank, i64 dims[rank], u64 size and
           the bytes; per output its name. Reply: S_OK and per output u32 element type, u32 rank,
           i64 dims[rank], u64 size and the bytes, then f64 microseconds Run took; or E_FAIL at
           stage RUN with the OrtErrorCode and message.

CRASH, HANG and QUIT are protocol.py's.
"""
from __future__ import annotations

import struct

from topkspec.directml.worker.protocol import ProtocolError

CMD_LOAD = 8
CMD_RUN = 9
STAGE_LOAD = 8
STAGE_RUN = 9

# OrtErrorCode (onnxruntime_c_api.h), as ONNX Runtime's Python binding names them in its messages.
ERROR_CODES = {1: "FAIL", 2: "INVALID_ARGUMENT", 3: "NO_SUCHFILE", 4: "NO_MODEL", 5: "ENGINE_ERROR",
               6: "RUNTIME_EXCEPTION", 7: "INVALID_PROTOBUF", 8: "MODEL_LOADED", 9: "NOT_IMPLEMENTED",
               10: "INVALID_GRAPH", 11: "EP_FAIL"}


class OnnxRuntimeError(RuntimeError):
    """ONNX Runtime refused: its error code and its own message, worded as its Python binding
    words them ("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : ...")."""

    def __init__(self, code: int, message: str):
        self.code = code
        self.message = message
        super().__init__(f"[ONNXRuntimeError] : {code} : {ERROR_CODES.get(code, 'UNKNOWN')} : {message}")


def parse_error(payload: bytes) -> OnnxRuntimeError:
    code = struct.unpack_from("<I", payload)[0] if len(payload) >= 4 else 1
    return OnnxRuntimeError(code, payload[4:].decode("utf-8", "replace"))


def _name(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<I", len(data)) + data


def run_payload(session: int, inputs, outputs) -> bytes:
    """`inputs`: (name, element type, dims, bytes) each; `outputs`: names."""
    parts = [struct.pack("<3I", session, len(inputs), len(outputs))]
    for name, element_type, dims, data in inputs:
        parts += [_name(name), struct.pack(f"<II{len(dims)}qQ", element_type, len(dims), *dims, len(data)), data]
    parts += [_name(name) for name in outputs]
    return b"".join(parts)


def parse_outputs(payload: bytes, count: int):
    """([(element type, dims, bytes)] * count, microseconds) of a RUN reply."""
    at, out = 0, []
    try:
        for _ in range(count):
            element_type, rank = struct.unpack_from("<II", payload, at)
            at += 8
            dims = struct.unpack_from(f"<{rank}q", payload, at)
            at += 8 * rank
            (size,) = struct.unpack_from("<Q", payload, at)
            at += 8
            if len(payload) < at + size:
                raise ProtocolError("RUN reply is cut short")
            out.append((element_type, tuple(dims), payload[at:at + size]))
            at += size
        (micros,) = struct.unpack_from("<d", payload, at)
    except struct.error:
        raise ProtocolError("RUN reply is cut short") from None
    return out, micros
