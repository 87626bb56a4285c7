"""The spec's tables as plain data: enums, feature levels, support tables, opset tables.

Everything here is JSON-ready (dicts, lists, strings, ints) and goes into the export as is.
"""
from __future__ import annotations

# The public documents the rules cite, by id: title, address, the spec family and the
# operators each describes. Sections and quoted sentences are in `citations`.
DML_TOP_K1_DOC = "dml-top-k1"
DML_TOP_K1_HISTORY = "dml-top-k1-history"
DML_TOP_K_DOC = "dml-top-k"
DML_BUFFER_TENSOR_DOC = "dml-buffer-tensor-desc"
DML_FEATURE_LEVEL_DOC = "dml-feature-level"
ONNX_TOPK_DOC = "onnx-topk"
ONNX_CHANGELOG_DOC = "onnx-changelog"
DML_STRIDES_DOC = "dml-strides"
DML_BUFFER_BINDING_DOC = "dml-buffer-binding"
DML_CONSTANTS_DOC = "dml-constants"
DML_EXECUTION_FLAGS_DOC = "dml-execution-flags"
DML_COMPILE_GRAPH_DOC = "dml-compile-graph"


def _dml_page(title: str, url: str) -> dict:
    """A DirectML page both TopK operators cite."""
    return {"title": title, "url": url, "family": "dml", "ops": ["TOP_K", "TOP_K1"]}


DOCUMENTS = {
    DML_TOP_K1_DOC: {
        "title": "DML_TOP_K1_OPERATOR_DESC structure (directml.h)",
        "url": "https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_top_k1_operator_desc",
        "family": "dml", "ops": ["TOP_K1"]},
    DML_TOP_K1_HISTORY: {
        "title": "DML_TOP_K1_OPERATOR_DESC structure (directml.h), earlier revisions of the page source",
        "url": "https://github.com/MicrosoftDocs/sdk-api/commits/docs/sdk-api-src/content/directml/"
               "ns-directml-dml_top_k1_operator_desc.md",
        "family": "dml", "ops": ["TOP_K1"]},
    DML_TOP_K_DOC: {
        "title": "DML_TOP_K_OPERATOR_DESC structure (directml.h)",
        "url": "https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_top_k_operator_desc",
        "family": "dml", "ops": ["TOP_K"]},
    DML_BUFFER_TENSOR_DOC: _dml_page("DML_BUFFER_TENSOR_DESC structure (directml.h)",
                       "https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_buffer_tensor_desc"),
    DML_FEATURE_LEVEL_DOC: _dml_page("DML_FEATURE_LEVEL enumeration (directml.h)",
                       "https://learn.microsoft.com/en-us/windows/win32/api/directml/ne-directml-dml_feature_level"),
    DML_STRIDES_DOC: _dml_page("Using strides to express padding and memory layout",
                       "https://learn.microsoft.com/en-us/windows/ai/directml/dml-strides"),
    DML_BUFFER_BINDING_DOC: _dml_page("DML_BUFFER_BINDING structure (directml.h)",
                       "https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_buffer_binding"),
    DML_CONSTANTS_DOC: _dml_page("DirectML constants",
                       "https://learn.microsoft.com/en-us/windows/ai/directml/directml-constants"),
    DML_EXECUTION_FLAGS_DOC: _dml_page("DML_EXECUTION_FLAGS enumeration (directml.h)",
                       "https://learn.microsoft.com/en-us/windows/win32/api/directml/ne-directml-dml_execution_flags"),
    DML_COMPILE_GRAPH_DOC: _dml_page("IDMLDevice1::CompileGraph method (directml.h)",
                       "https://learn.microsoft.com/en-us/windows/win32/api/directml/nf-directml-idmldevice1-compilegraph"),
    ONNX_TOPK_DOC: {
        "title": "ONNX operator TopK (all versions)",
        "url": "https://onnx.ai/onnx/operators/onnx__TopK.html",
        "family": "onnx", "ops": ["TopK"]},
    ONNX_CHANGELOG_DOC: {
        "title": "ONNX operator changelog",
        "url": "https://github.com/onnx/onnx/blob/main/docs/Changelog.md",
        "family": "onnx", "ops": ["TopK"]},
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
         "sources": [DML_TOP_K1_DOC, DML_TOP_K1_HISTORY]},
        {"since": "3_1", "ranks": [1, 2, 3, 4, 5, 6, 7, 8], "value_types": _EIGHT,
         "index_types": ["UINT32"], "sources": [DML_TOP_K1_DOC, DML_TOP_K1_HISTORY]},
        {"since": "5_0", "ranks": [1, 2, 3, 4, 5, 6, 7, 8], "value_types": _TEN,
         "index_types": ["UINT32", "UINT64"], "sources": [DML_TOP_K1_DOC]},
    ],
    "TOP_K": [
        {"since": "2_0", "ranks": [4], "value_types": ["FLOAT32", "FLOAT16"],
         "index_types": ["UINT32"], "sources": [DML_TOP_K_DOC]},
        {"since": "2_1", "ranks": [4], "value_types": _EIGHT, "index_types": ["UINT32"],
         "sources": [DML_TOP_K_DOC]},
        {"since": "3_1", "ranks": [1, 2, 3, 4, 5, 6, 7, 8], "value_types": _EIGHT,
         "index_types": ["UINT32"], "sources": [DML_TOP_K_DOC]},
        {"since": "5_0", "ranks": [1, 2, 3, 4, 5, 6, 7, 8], "value_types": _TEN,
         "index_types": ["UINT32", "UINT64"], "sources": [DML_TOP_K_DOC]},
    ],
}

# The fields each DirectML descriptor has (the JSON form mirrors the C structs).
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
          "T": _ONNX_FLOATS, "I": ["int64"], "sources": [ONNX_TOPK_DOC]},
    "10": {"attributes": {"axis": -1}, "required_attributes": [], "k_from": "input",
           "T": _ONNX_FLOATS, "I": ["int64"], "sources": [ONNX_TOPK_DOC]},
    "11": {"attributes": {"axis": -1, "largest": 1, "sorted": 1}, "required_attributes": [],
           "k_from": "input", "T": _ONNX_NUMERIC, "I": ["int64"], "sources": [ONNX_TOPK_DOC]},
    "24": {"attributes": {"axis": -1, "largest": 1, "sorted": 1}, "required_attributes": [],
           "k_from": "input", "T": ["bfloat16"] + _ONNX_NUMERIC, "I": ["int64"],
           "sources": [ONNX_TOPK_DOC, ONNX_CHANGELOG_DOC]},
}

# The revisions of the DML_TOP_K1_OPERATOR_DESC page, what each claims, and where they differ.
# Keyed by the newest table each revision has; "document" is where to read it.
REVISION_2_1 = "2_1 revision (early 2021)"
REVISION_3_1 = "3_1 revision (April 2021)"
REVISION_5_0 = "current page (5_0 table)"
DML_REVISIONS = {
    REVISION_2_1: {
        "what": "the page as published until early 2021 (ms.date 11/04/2020): one table, DML_FEATURE_LEVEL_2_1, 4-D only",
        "document": DML_TOP_K1_HISTORY,
        "tables": ["2_1 (4-D only)"],
        "tensor_constraints": [
            "InputTensor and OutputValueTensor must have the same DataType.",
            "OutputIndexTensor and OutputValueTensor must have the same Sizes.",
        ],
    },
    REVISION_3_1: {
        "what": "the page from April 2021: the DML_FEATURE_LEVEL_3_1 table (1 to 8 dimensions) above the 2_1 table",
        "document": DML_TOP_K1_HISTORY,
        "tables": ["3_1 (1 to 8 dims)", "2_1 (4-D)"],
        "tensor_constraints": [
            "InputTensor, OutputIndexTensor, and OutputValueTensor must have the same DimensionCount.",
            "InputTensor and OutputValueTensor must have the same DataType.",
        ],
    },
    REVISION_5_0: {
        "what": "the current page: adds the DML_FEATURE_LEVEL_5_0 table",
        "document": DML_TOP_K1_DOC,
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
            REVISION_2_1: "OutputIndexTensor and OutputValueTensor must have the same Sizes",
            REVISION_3_1: "InputTensor, OutputIndexTensor and OutputValueTensor must have the same DimensionCount",
            REVISION_5_0: "same as the 3_1 revision",
        },
        "rules": ["dml.shape.outputs_same_sizes", "dml.rank.same"],
        "resolution": "both are enforced: the Sizes claim is implied by the per-output shape rules of every revision, and the DimensionCount claim only forbids what the shape rules already forbid",
    },
    {
        "topic": "supported dimension counts",
        "claims": {
            REVISION_2_1: "4 only (one table)",
            REVISION_3_1: "1 to 8 from DML_FEATURE_LEVEL_3_1, 4 at 2_1",
            REVISION_5_0: "1 to 8 from DML_FEATURE_LEVEL_3_1, 4 at 2_1",
        },
        "rules": ["dml.rank.supported"],
        "resolution": "tables are cumulative by feature level; the older revision describes 2_1 only",
    },
    {
        "topic": "64-bit types",
        "claims": {
            REVISION_5_0: "INT64/UINT64 values and UINT64 indices from DML_FEATURE_LEVEL_5_0",
            REVISION_3_1: "no 5_0 table",
            REVISION_2_1: "no 5_0 table",
        },
        "rules": ["dml.dtype.value_supported", "dml.dtype.index_supported"],
        "resolution": "the newest revision adds a row; older revisions predate the level",
    },
]

# The four worked examples of the DML_TOP_K1_OPERATOR_DESC page ("Examples").
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

# The check kinds descriptor rules use, in words: what a validator in another language implements
# from the export (checks.CHECK_KINDS pairs each with its code here).
CHECK_KIND_MEANINGS = {
    "outputs_distinct": "Each tensor in `tensors` that has Strides gives each of its elements its own offset: the offsets sum(index[d] * Strides[d]) over every index within Sizes are all different.",
    "dml_fields": "FeatureLevel, when present, reads as a feature level by input_forms; Desc is an object; it has exactly the members dml_desc_fields[Type]; tensor members are objects; Axis and K are integers in [0, 2**32-1]; AxisDirection is an integer or a string.",
    "dml_tensor_fields": "Each tensor in `tensors` has every dml_tensor_fields.required field and only required or optional fields; DataType is a key of dml_data_types; Sizes and Strides are lists of integers in [0, 2**32-1]; TotalTensorSizeInBytes, GuaranteedBaseOffsetAlignment and Flags are non-negative integers.",
    "dml_operator_available": "dml_support[Type] has a row whose `since` level is at or below the profile's feature level.",
    "sizes_min": "Every entry of Sizes of each tensor in `tensors` is at least `min`.",
    "same_rank": "The tensors in `tensors` have Sizes of the same length.",
    "rank_in_table": "For the newest dml_support[Type] row at or below the feature level, the length of Sizes of each tensor in `tensors` is in the row's `ranks`.",
    "dtype_in_table": "For the newest dml_support[Type] row at or below the feature level, the DataType of each tensor in `tensors` is in the row's `column` list.",
    "same_dtype": "The tensors in `tensors` have the same DataType.",
    "axis_below_rank": "Axis is less than the length of the Sizes of `tensor`.",
    "k_min": "K (DirectML) or k (ONNX; the single element when k is a list) is at least `min`.",
    "k_max_axis_size": "With n the size of `tensor` (DirectML tensor desc, or ONNX X) along the axis (ONNX: axis attribute, default -1, plus the rank when negative): K <= n when `inclusive`, else K < n.",
    "enum": "When Desc has `field`, its value is one of `values`.",
    "output_sizes": "The Sizes of `tensor` equal the Sizes of `input` with the entry at Axis replaced by K.",
    "same_sizes": "The tensors in `tensors` have equal Sizes.",
    "strides_length": "Each tensor in `tensors` that has Strides has as many Strides as Sizes.",
    "total_size_min": "Each tensor in `tensors` that has TotalTensorSizeInBytes has it at least the implied size: elements = product(Sizes) without Strides, else 1 + sum((size-1)*stride); bytes = elements * dml_data_type_sizes[DataType], rounded up to a multiple of `round_to`.",
    "alignment": "Each tensor in `tensors` whose GuaranteedBaseOffsetAlignment is present and nonzero has it a power of two and at least dml_data_type_sizes[DataType] (the element size in bytes).",
    "onnx_fields": "opset is present and an integer of at least 1 (input_forms: a profile given by the caller fills a missing one); op_type is 'TopK'; the only keys are op_type, opset, X, k, K, attributes; X is an object with only dtype (a string) and shape (null, or a list whose entries are non-negative integers or null); k is present and an integer, a list of integers, or null; K (optional: the input tensor K as a model declares it) is an object with only dtype (a string) and shape (a list of non-negative integers or null where unknown); attributes (optional) is an object of integers.",
    "onnx_attrs_allowed": "Every attribute name is a key of onnx_versions[version].attributes, where version is the profile's resolved TopK version.",
    "onnx_k_attribute_matches": "When the attributes have k, it equals k.",
    "onnx_dtype_in_table": "X.dtype (canonical name) is in onnx_versions[version][`column`].",
    "signed_axis_in_range": "With r the length of X.shape, the axis attribute (default -1) is in [-r, r-1].",
    "k_single": "When k is a list it has exactly one element. When K is given: the version takes k from input K (onnx_versions[version].k_from is 'input'), K.dtype is 'int64', K.shape has exactly one entry, and that entry is 1 or null.",
    "onnx_bool_attrs": "Each attribute in `attributes` that is present has a value in `values`.",
}
