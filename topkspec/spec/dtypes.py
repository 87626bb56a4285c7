"""Value and index type names shared by the spec, the strategies and the targets.

Standard library only: numpy (and ml_dtypes for bfloat16) load on first use.
The canonical name of a type is its numpy name ("float32", "uint64", "bfloat16").
"""
from __future__ import annotations

from functools import lru_cache

# DirectML DML_TENSOR_DATA_TYPE enum values (DirectML.h) by canonical name.
DML_DATA_TYPE_VALUES = {
    "float32": 1,
    "float16": 2,
    "uint32": 3,
    "uint16": 4,
    "uint8": 5,
    "int32": 6,
    "int16": 7,
    "int8": 8,
    "float64": 9,
    "uint64": 10,
    "int64": 11,
}

# Canonical name -> DirectML short name ("float32" -> "FLOAT32").
DML_NAMES = {name: name.upper() for name in DML_DATA_TYPE_VALUES}
DML_NAME_TO_CANONICAL = {v: k for k, v in DML_NAMES.items()}

# ONNX TensorProto.DataType values by canonical name (onnx.proto).
ONNX_ELEM_TYPES = {
    "float32": 1,
    "uint8": 2,
    "int8": 3,
    "uint16": 4,
    "int16": 5,
    "int32": 6,
    "int64": 7,
    "float16": 10,
    "float64": 11,
    "uint32": 12,
    "uint64": 13,
    "bfloat16": 16,
}
# The spellings ONNX uses in type constraints: tensor(float), tensor(double), ...
ONNX_TYPE_STRINGS = {
    "float32": "float",
    "float64": "double",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
}

FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")
SIGNED_INT_TYPES = ("int8", "int16", "int32", "int64")
UNSIGNED_INT_TYPES = ("uint8", "uint16", "uint32", "uint64")
ALL_VALUE_TYPES = FLOAT_TYPES + SIGNED_INT_TYPES + UNSIGNED_INT_TYPES

ALIASES = {  # other names of value types, in lower case (the input forms export them)
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "bf16": "bfloat16",
}


def canonical(name: str) -> str:
    """Canonical name for a numpy, DirectML (FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT32) or ONNX spelling.

    Raises ValueError for a name that is none of those.
    """
    if not isinstance(name, str):
        raise ValueError(f"data type must be a string, got {name!r}")
    text = name.strip()
    if text.startswith("tensor(") and text.endswith(")"):
        text = text[len("tensor("):-1]
    if text.upper().startswith("DML_TENSOR_DATA_TYPE_"):
        text = text[len("DML_TENSOR_DATA_TYPE_"):]
    lowered = text.lower()
    lowered = ALIASES.get(lowered, lowered)
    if lowered in ALL_VALUE_TYPES:
        return lowered
    raise ValueError(f"unknown data type {name!r}")


def is_float(name: str) -> bool:
    return canonical(name) in FLOAT_TYPES


def is_unsigned(name: str) -> bool:
    return canonical(name) in UNSIGNED_INT_TYPES


def numpy_dtype(name: str):
    """The numpy dtype for a canonical name (bfloat16 through ml_dtypes)."""
    import numpy as np

    name = canonical(name)
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def name_of(dtype) -> str:
    """Canonical name of a numpy dtype (or anything numpy.dtype accepts)."""
    import numpy as np

    return _name_of_dtype(np.dtype(dtype))


@lru_cache(maxsize=64)
def _name_of_dtype(dt) -> str:
    # every output of every call is named, so each dtype's name is worked out once
    if dt.name == "bfloat16":
        return "bfloat16"
    return canonical(dt.name)


def itemsize(name: str) -> int:
    sizes = {"8": 1, "16": 2, "32": 4, "64": 8}
    return sizes[canonical(name).lstrip("abcdefghijklmnopqrstuvwxyz")]
