"""The spec's tables as plain data: enums, feature levels, support tables, opset tables.

Everything here is JSON-ready (dicts, lists, strings, ints) and goes into the export as is.
"""
from __future__ import annotations

# The seed documents, cited by file name; DOCUMENTS below says what each is.
SEED_000 = "000_43822984bd15bf69.txt"
SEED_001 = "001_b941b3246e3b3809.txt"
SEED_002 = "002_d935dd9ebf786b51.txt"
SEED_003 = "003_1079f37dfcc847e1.txt"
SEED_004 = "004_3ac2297bdd06c5f7.txt"
DESIGN = "DESIGN.md"
ONNX_SCHEMA_24 = "onnx.defs.get_schema('TopK', 24) (installed onnx package)"
DML_TOP_K_PAGE = "DML_TOP_K_OPERATOR_DESC page (DirectML docs, outside the seeds), as DESIGN.md records it"
DML_BUFFER_TENSOR_PAGE = "DML_BUFFER_TENSOR_DESC page (DirectML docs, outside the seeds)"

# What each seed document is, for readers who do not have the files at hand.
DOCUMENTS = {
    SEED_000: "DirectML DML_TOP_K1_OPERATOR_DESC page (English; 3_1 and 2_1 tables, worked examples)",
    SEED_001: "ONNX TopK operator, versions 11, 10 and 1",
    SEED_002: "DirectML DML_TOP_K1_OPERATOR_DESC, older revision (German translation beside the English)",
    SEED_003: "DirectML DML_TOP_K1_OPERATOR_DESC, newest revision (adds the 5_0 table)",
    SEED_004: "DirectML DML_TOP_K1_OPERATOR_DESC, 3_1 revision (Russian translation beside the English)",
    DESIGN: "topkspec design decisions",
}

DML_OPERATOR_TYPES = {"TOP_K": 71, "TOP_K1": 112}
DML_AXIS_DIRECTIONS = {"INCREASING": 0, "DECREASING": 1}

# DML_TENSOR_DATA_TYPE values by DirectML short name.
DML_DATA_TYPES = {
    "FLOAT32": 1, "FLOAT16": 2, "UINT32": 3, "UINT16": 4, "UINT8": 5, "INT32": 6,
    "INT16": 7, "INT8": 8, "FLOAT64": 9, "UINT64": 10, "INT64": 11,
}

# DML_FEATURE_LEVEL values by short name ("3_1" -> 0x3100).
DML_FEATURE_LEVELS = {
    "1_0": 0x1000, "2_0": 0x2000, "2_1": 0x2100, "3_0": 0x3000, "3_1": 0x3100,
    "4_0": 0x4000, "4_1": 0x4100, "5_0": 0x5000, "5_1": 0x5100, "5_2": 0x5200,
    "6_0": 0x6000, "6_1": 0x6100, "6_2": 0x6200, "6_3": 0x6300, "6_4": 0x6400,
}

_EIGHT = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
_TEN = ["FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]

# Tensor support per operator: rows keyed by the level they arrive at. Cumulative: a level
# uses the newest row at or below it. Each row gives the dimension counts, the value types
# (InputTensor and OutputValueTensor) and the index types (OutputIndexTensor).
DML_SUPPORT = {
    "TOP_K1": [
        {"since": "2_1", "ranks": [4], "value_types": _EIGHT, "index_types": ["UINT32"],
         "sources": [SEED_000, SEED_002, SEED_003, SEED_004]},
        {"since": "3_1", "ranks": [1, 2, 3, 4, 5, 6, 7, 8], "value_types": _EIGHT,
         "index_types": ["UINT32"], "sources": [SEED_000, SEED_003, SEED_004]},
        {"since": "5_0", "ranks": [1, 2, 3, 4, 5, 6, 7, 8], "value_types": _TEN,
         "index_types": ["UINT32", "UINT64"], "sources": [SEED_003]},
    ],
    "TOP_K": [
        {"since": "2_0", "ranks": [4], "value_types": ["FLOAT32", "FLOAT16"],
         "index_types": ["UINT32"], "sources": [DML_TOP_K_PAGE]},
        {"since": "2_1", "ranks": [4], "value_types": _EIGHT, "index_types": ["UINT32"],
         "sources": [DML_TOP_K_PAGE]},
        {"since": "3_1", "ranks": [1, 2, 3, 4, 5, 6, 7, 8], "value_types": _EIGHT,
         "index_types": ["UINT32"], "sources": [DML_TOP_K_PAGE]},
        {"since": "5_0", "ranks": [1, 2, 3, 4, 5, 6, 7, 8], "value_types": _TEN,
         "index_types": ["UINT32", "UINT64"], "sources": [DML_TOP_K_PAGE]},
    ],
}

# The fields each DirectML descriptor has (DESIGN.md's JSON mirrors the C structs).
DML_DESC_FIELDS = {
    "TOP_K": ["InputTensor", "OutputValueTensor", "OutputIndexTensor", "Axis", "K"],
    "TOP_K1": ["InputTensor", "OutputValueTensor", "OutputIndexTensor", "Axis", "K", "AxisDirection"],
}
DML_TENSOR_FIELDS = {
    "required": ["DataType", "Sizes"],
    "optional": ["Strides", "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment", "Flags"],
}

# ONNX TopK versions: the attributes each has, whether k is an attribute or input K,
# and the type constraints T (values) and I (indices).
_ONNX_FLOATS = ["float64", "float32", "float16"]
_ONNX_NUMERIC = _ONNX_FLOATS + ["int16", "int32", "int64", "int8", "uint16", "uint32", "uint64", "uint8"]
ONNX_VERSIONS = {
    "1": {"attributes": {"axis": -1, "k": None}, "required_attributes": ["k"], "k_from": "attribute",
          "T": _ONNX_FLOATS, "I": ["int64"], "sources": [SEED_001]},
    "10": {"attributes": {"axis": -1}, "required_attributes": [], "k_from": "input",
           "T": _ONNX_FLOATS, "I": ["int64"], "sources": [SEED_001]},
    "11": {"attributes": {"axis": -1, "largest": 1, "sorted": 1}, "required_attributes": [],
           "k_from": "input", "T": _ONNX_NUMERIC, "I": ["int64"], "sources": [SEED_001]},
    "24": {"attributes": {"axis": -1, "largest": 1, "sorted": 1}, "required_attributes": [],
           "k_from": "input", "T": ["bfloat16"] + _ONNX_NUMERIC, "I": ["int64"],
           "sources": [ONNX_SCHEMA_24]},
}

# What each seed revision of the DirectML page claims, and where they differ.
DML_REVISIONS = {
    SEED_002: {
        "what": "older revision (de-DE machine translation, English beside it), ms.date 11/04/2020, handed off 02/10/2021",
        "tables": ["2_1 (4-D only)"],
        "tensor_constraints": [
            "InputTensor and OutputValueTensor must have the same DataType.",
            "OutputIndexTensor and OutputValueTensor must have the same Sizes.",
        ],
    },
    SEED_004: {
        "what": "DML_FEATURE_LEVEL_3_1 revision (ru-RU machine translation, English beside it), handed off 04/21/2021",
        "tables": ["3_1 (1 to 8 dims)", "2_1 (4-D)"],
        "tensor_constraints": [
            "InputTensor, OutputIndexTensor, and OutputValueTensor must have the same DimensionCount.",
            "InputTensor and OutputValueTensor must have the same DataType.",
        ],
    },
    SEED_000: {
        "what": "English page, DML_FEATURE_LEVEL_3_1 and 2_1 tables, the four worked examples",
        "tables": ["3_1 (1 to 8 dims)", "2_1 (4-D)"],
        "tensor_constraints": [
            "InputTensor, OutputIndexTensor, and OutputValueTensor must have the same DimensionCount.",
            "InputTensor and OutputValueTensor must have the same DataType.",
        ],
    },
    SEED_003: {
        "what": "newest page, plain text: adds the DML_FEATURE_LEVEL_5_0 table",
        "tables": ["5_0 (1 to 8 dims, INT64/UINT64 values, UINT64 indices)", "3_1", "2_1"],
        "tensor_constraints": [
            "InputTensor, OutputIndexTensor, and OutputValueTensor must have the same DimensionCount.",
            "InputTensor and OutputValueTensor must have the same DataType.",
        ],
    },
}
DML_REVISION_DIFFERENCES = [
    {
        "topic": "tensor constraint between the outputs",
        "claims": {
            SEED_002: "OutputIndexTensor and OutputValueTensor must have the same Sizes",
            SEED_004: "InputTensor, OutputIndexTensor and OutputValueTensor must have the same DimensionCount",
            SEED_000: "same as " + SEED_004,
            SEED_003: "same as " + SEED_004,
        },
        "rules": ["dml.shape.outputs_same_sizes", "dml.rank.same"],
        "resolution": "both are enforced: the Sizes claim is implied by the per-output shape rules of every revision, and the DimensionCount claim only forbids what the shape rules already forbid",
    },
    {
        "topic": "supported dimension counts",
        "claims": {
            SEED_002: "4 only (one table)",
            SEED_004: "1 to 8 from DML_FEATURE_LEVEL_3_1, 4 at 2_1",
            SEED_000: "1 to 8 from DML_FEATURE_LEVEL_3_1, 4 at 2_1",
            SEED_003: "1 to 8 from DML_FEATURE_LEVEL_3_1, 4 at 2_1",
        },
        "rules": ["dml.rank.supported"],
        "resolution": "tables are cumulative by feature level; the older revision describes 2_1 only",
    },
    {
        "topic": "64-bit types",
        "claims": {
            SEED_003: "INT64/UINT64 values and UINT64 indices from DML_FEATURE_LEVEL_5_0",
            SEED_000: "no 5_0 table",
            SEED_004: "no 5_0 table",
            SEED_002: "no 5_0 table",
        },
        "rules": ["dml.dtype.value_supported", "dml.dtype.index_supported"],
        "resolution": "the newest revision adds a row; older revisions predate the level",
    },
]

# The four worked examples of the DirectML page (seed 000, "Examples").
_EX_INPUT_A = [[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]]
_EX_INPUT_B = [[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]]
DML_WORKED_EXAMPLES = [
    {"name": "Example 1", "input": _EX_INPUT_A, "sizes": [1, 1, 3, 4], "axis": 3, "k": 2,
     "direction": "DECREASING",
     "values": [[[[11, 10], [9, 8], [7, 6]]]], "indices": [[[[3, 2], [2, 3], [3, 2]]]]},
    {"name": "Example 2. Using a different axis", "input": _EX_INPUT_A, "sizes": [1, 1, 3, 4],
     "axis": 2, "k": 2, "direction": "DECREASING",
     "values": [[[[4, 5, 10, 11], [3, 2, 9, 8]]]], "indices": [[[[2, 2, 0, 0], [1, 1, 1, 1]]]]},
    {"name": "Example 3. Tied values", "input": _EX_INPUT_B, "sizes": [1, 1, 3, 4], "axis": 3,
     "k": 3, "direction": "DECREASING",
     "values": [[[[3, 2, 2], [5, 5, 4], [6, 6, 6]]]], "indices": [[[[3, 1, 2], [2, 3, 1], [0, 1, 2]]]]},
    {"name": "Example 4. Increasing axis direction", "input": _EX_INPUT_B, "sizes": [1, 1, 3, 4],
     "axis": 3, "k": 3, "direction": "INCREASING",
     "values": [[[[1, 2, 2], [3, 4, 5], [6, 6, 6]]]], "indices": [[[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]]},
]
