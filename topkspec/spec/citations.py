"""The sentences the rules stand on: each a public document (by id, see tables.DOCUMENTS), a
section of it and the sentence quoted word for word (English).

ONNX quotes name the TopK versions whose text holds them (`versions`), so a report at one
opset quotes that version. The ONNX text is the operator schema's own (`onnx.defs`), which the
documentation page shows; tests check every ONNX quote against the installed schemas.
"""
from __future__ import annotations

from topkspec.spec.tables import (
    DML_BUFFER_TENSOR_DOC, DML_FEATURE_LEVEL_DOC, DML_TOP_K1_DOC, DML_TOP_K1_HISTORY, DML_TOP_K_DOC,
    ONNX_TOPK_DOC,
)


def quote(doc: str, section: str, text: str, *, versions=None, note: str = "") -> dict:
    """A citation: the document, its section and the deciding sentence."""
    cited = {"doc": doc, "section": section, "quote": text}
    if versions is not None:
        cited["versions"] = list(versions)
    if note:
        cited["note"] = note
    return cited


# ---- DML_TOP_K1_OPERATOR_DESC (the current page) ----------------------------------------
_SHAPE = ("This tensor must have sizes equal to the InputTensor, except for the dimension specified by "
          "the Axis parameter, which must have a size equal to K.")
_TIES = ("In cases where two or more elements in the top-K have the same value (that is, when there "
         "is a tie), the indices of both elements are included, and are guaranteed to be ordered by "
         "ascending element index.")
_INDEX_BASE = ("The indices returned in this tensor are measured relative to the beginning of their "
               "sequence (as opposed to the beginning of the tensor).")
_AXIS = "This value must be less than the DimensionCount of the InputTensor."
_K = ("K must be greater than 0, but less than the number of elements in the InputTensor along the "
      "dimension specified by Axis.")
_SAME_RANK = "InputTensor, OutputIndexTensor, and OutputValueTensor must have the same DimensionCount."
_SAME_DTYPE = "InputTensor and OutputValueTensor must have the same DataType."
_SEQUENCE = ("A sequence refers to one of the sets of elements that exist along the Axis dimension of "
             "the InputTensor.")


class K1:
    SUMMARY = quote(DML_TOP_K1_DOC, "Summary",
                    "Selects the largest or smallest K elements from each sequence along an axis of the "
                    "InputTensor, and returns the values and indices of those elements in the "
                    "OutputValueTensor and OutputIndexTensor, respectively.")
    SEQUENCE = quote(DML_TOP_K1_DOC, "Summary", _SEQUENCE)
    SYNTAX = quote(DML_TOP_K1_DOC, "Syntax",
                   "struct DML_TOP_K1_OPERATOR_DESC { const DML_TENSOR_DESC *InputTensor; const "
                   "DML_TENSOR_DESC *OutputValueTensor; const DML_TENSOR_DESC *OutputIndexTensor; UINT "
                   "Axis; UINT K; DML_AXIS_DIRECTION AxisDirection; };")
    SELECT = quote(DML_TOP_K1_DOC, "Members: OutputValueTensor",
                   "The top K elements are selected based on whether they are the largest or the "
                   "smallest, depending on the value of AxisDirection.")
    VALUE_SHAPE = quote(DML_TOP_K1_DOC, "Members: OutputValueTensor", _SHAPE)
    ORDER = quote(DML_TOP_K1_DOC, "Members: OutputValueTensor",
                  "The K values selected from each input sequence are guaranteed to be sorted descending "
                  "(largest to smallest) if AxisDirection is DML_AXIS_DIRECTION_DECREASING. Otherwise, the "
                  "opposite is true and the values selected are guaranteed to be sorted ascending "
                  "(smallest to largest).")
    INDEX_SHAPE = quote(DML_TOP_K1_DOC, "Members: OutputIndexTensor", _SHAPE)
    INDEX_BASE = quote(DML_TOP_K1_DOC, "Members: OutputIndexTensor", _INDEX_BASE)
    TIES = quote(DML_TOP_K1_DOC, "Members: OutputIndexTensor",
                 _TIES + " Note that this is true irrespective of the value of AxisDirection.")
    AXIS = quote(DML_TOP_K1_DOC, "Members: Axis", _AXIS)
    K = quote(DML_TOP_K1_DOC, "Members: K", _K)
    DIRECTION = quote(DML_TOP_K1_DOC, "Members: AxisDirection",
                      "If set to DML_AXIS_DIRECTION_INCREASING, then this operator returns the smallest K "
                      "elements in order of increasing value. Otherwise, it returns the largest K elements "
                      "in decreasing order.")
    DIRECTION_ENUM = quote(DML_TOP_K1_DOC, "Members: AxisDirection",
                           "A value from the DML_AXIS_DIRECTION enumeration.")
    REMARKS = quote(DML_TOP_K1_DOC, "Remarks",
                    "When AxisDirection is set to DML_AXIS_DIRECTION_DECREASING, this operator is "
                    "equivalent to DML_TOP_K_OPERATOR_DESC.")
    AVAILABILITY = quote(DML_TOP_K1_DOC, "Availability", "This operator was introduced in DML_FEATURE_LEVEL_2_1.")
    SAME_RANK = quote(DML_TOP_K1_DOC, "Tensor constraints", _SAME_RANK)
    SAME_DTYPE = quote(DML_TOP_K1_DOC, "Tensor constraints", _SAME_DTYPE)
    SUPPORT_5_0 = quote(DML_TOP_K1_DOC, "Tensor support: DML_FEATURE_LEVEL_5_0 and above",
                        "InputTensor | Input | 1 to 8 | FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, "
                        "UINT32, UINT16, UINT8; OutputIndexTensor | Output | 1 to 8 | UINT64, UINT32")
    SUPPORT_3_1 = quote(DML_TOP_K1_DOC, "Tensor support: DML_FEATURE_LEVEL_3_1 and above",
                        "InputTensor | Input | 1 to 8 | FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, "
                        "UINT8; OutputIndexTensor | Output | 1 to 8 | UINT32")
    SUPPORT_2_1 = quote(DML_TOP_K1_DOC, "Tensor support: DML_FEATURE_LEVEL_2_1 and above",
                        "InputTensor | Input | 4 | FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, "
                        "UINT8; OutputIndexTensor | Output | 4 | UINT32")
    # The older revision (the page's source history): its one tensor constraint between outputs.
    SAME_SIZES_2021 = quote(DML_TOP_K1_HISTORY, "Tensor constraints (revision of early 2021)",
                            "OutputIndexTensor and OutputValueTensor must have the same Sizes.",
                            note="Later revisions replace it with the same-DimensionCount constraint.")


# ---- DML_TOP_K_OPERATOR_DESC --------------------------------------------------------------
class TOPK:
    SUMMARY = quote(DML_TOP_K_DOC, "Summary",
                    "Selects the largest K elements from each sequence along an axis of the InputTensor, "
                    "and returns the values and indices of those elements in the OutputValueTensor and "
                    "OutputIndexTensor, respectively.")
    SEQUENCE = quote(DML_TOP_K_DOC, "Summary", _SEQUENCE)
    SYNTAX = quote(DML_TOP_K_DOC, "Syntax",
                   "struct DML_TOP_K_OPERATOR_DESC { const DML_TENSOR_DESC *InputTensor; const "
                   "DML_TENSOR_DESC *OutputValueTensor; const DML_TENSOR_DESC *OutputIndexTensor; UINT "
                   "Axis; UINT K; };")
    VALUE_SHAPE = quote(DML_TOP_K_DOC, "Members: OutputValueTensor", _SHAPE)
    ORDER = quote(DML_TOP_K_DOC, "Members: OutputValueTensor",
                  "The K values selected from each input sequence are guaranteed to be sorted descending "
                  "(largest to smallest).")
    INDEX_SHAPE = quote(DML_TOP_K_DOC, "Members: OutputIndexTensor", _SHAPE)
    INDEX_BASE = quote(DML_TOP_K_DOC, "Members: OutputIndexTensor", _INDEX_BASE)
    TIES = quote(DML_TOP_K_DOC, "Members: OutputIndexTensor", _TIES)
    AXIS = quote(DML_TOP_K_DOC, "Members: Axis", _AXIS)
    K = quote(DML_TOP_K_DOC, "Members: K", _K)
    AVAILABILITY = quote(DML_TOP_K_DOC, "Availability", "This operator was introduced in DML_FEATURE_LEVEL_2_0.",
                         note="This spec's tables start DML_OPERATOR_TOP_K at DML_FEATURE_LEVEL_1_0, a level "
                              "below the one the page names.")
    SAME_RANK = quote(DML_TOP_K_DOC, "Tensor constraints", _SAME_RANK)
    SAME_DTYPE = quote(DML_TOP_K_DOC, "Tensor constraints", _SAME_DTYPE)
    SUPPORT = quote(DML_TOP_K_DOC, "Tensor support",
                    "DML_FEATURE_LEVEL_2_0 and above: InputTensor | Input | 4 | FLOAT32, FLOAT16; the 2_1, "
                    "3_1 and 5_0 tables as for DML_TOP_K1_OPERATOR_DESC")


# ---- DML_BUFFER_TENSOR_DESC and DML_FEATURE_LEVEL -----------------------------------------
class BUFFER:
    SIZES = quote(DML_BUFFER_TENSOR_DOC, "Members: Sizes",
                  "Specifying a size of zero in any dimension is invalid, and will result in an error.")
    STRIDES = quote(DML_BUFFER_TENSOR_DOC, "Members: DimensionCount",
                    "This member determines the size of the Sizes and Strides arrays (if provided).")
    SYNTAX = quote(DML_BUFFER_TENSOR_DOC, "Syntax",
                   "struct DML_BUFFER_TENSOR_DESC { DML_TENSOR_DATA_TYPE DataType; DML_TENSOR_FLAGS Flags; "
                   "UINT DimensionCount; const UINT *Sizes; const UINT *Strides; UINT64 "
                   "TotalTensorSizeInBytes; UINT GuaranteedBaseOffsetAlignment; };")
    STRIDES_OPTIONAL = quote(DML_BUFFER_TENSOR_DOC, "Members: Strides",
                             "If Strides is not specified, each dimension in the tensor is considered to be "
                             "contiguously packed, with no additional padding.")
    TOTAL_SIZE = quote(DML_BUFFER_TENSOR_DOC, "Members: TotalTensorSizeInBytes",
                       "TotalTensorSizeInBytes must be at least as large as the minimum implied size given "
                       "the sizes, strides, and data type of the tensor.")
    ALIGNMENT = quote(DML_BUFFER_TENSOR_DOC, "Members: GuaranteedBaseOffsetAlignment",
                      "If specified, this value must be a power of two that is at least as large as the "
                      "element size.")
    ALIGNMENT_16 = quote(DML_BUFFER_TENSOR_DOC, "Members: GuaranteedBaseOffsetAlignment",
                         "Buffer tensors always have a minimum alignment of 16 bytes.")


class LEVELS:
    CUMULATIVE = quote(DML_FEATURE_LEVEL_DOC, "Summary",
                       "Feature levels in DirectML are strict supersets of one another. This means that every "
                       "feature level necessarily supports everything that exists in every feature level "
                       "below (earlier than) it.")


# ---- ONNX TopK ------------------------------------------------------------------------------
V1, V10, V11, V24 = ["1"], ["10"], ["11"], ["24"]
ALL = ["1", "10", "11", "24"]
FROM_10, FROM_11 = ["10", "11", "24"], ["11", "24"]
_AT = {"1": "TopK - 1", "10": "TopK - 10", "11": "TopK - 11", "24": "TopK - 24"}


class ONNX:
    SUMMARY_11 = quote(ONNX_TOPK_DOC, "Summary",
                       "Retrieve the top-K largest or smallest elements along a specified axis.", versions=FROM_11)
    SUMMARY_1 = quote(ONNX_TOPK_DOC, "Summary", "Retrieve the top-K elements along a specified axis.",
                      versions=["1", "10"])
    LARGEST = quote(ONNX_TOPK_DOC, "Summary",
                    'If "largest" is 1 (the default value) then the k largest elements are returned.',
                    versions=FROM_11)
    SORTED = quote(ONNX_TOPK_DOC, "Summary",
                   'If "sorted" is 1 (the default value) then the resulting k elements will be sorted.',
                   versions=FROM_11)
    UNSORTED = quote(ONNX_TOPK_DOC, "Summary",
                     "If \"sorted\" is 0, order of returned 'Values' and 'Indices' are undefined.", versions=FROM_11)
    TIES = quote(ONNX_TOPK_DOC, "Summary",
                 "Given two equivalent values, this operator uses the indices along the axis as a tiebreaker. "
                 "That is, the element with the lower index will appear first.", versions=ALL)
    VALUES = quote(ONNX_TOPK_DOC, "Outputs: Values",
                   "Tensor of shape [a_0, a_1, ..., a_{axis-1}, k, a_{axis+1}, ... a_{n-1}] containing top K "
                   "values from the input tensor", versions=ALL)
    INDICES = quote(ONNX_TOPK_DOC, "Outputs: Indices",
                    "Tensor of shape [a_0, a_1, ..., a_{axis-1}, k, a_{axis+1}, ... a_{n-1}] containing the "
                    "corresponding input tensor indices for the top K values.", versions=ALL)
    ORIGINAL_INDICES = quote(ONNX_TOPK_DOC, "Summary",
                             "which contains the indices of the top k elements (original indices from the "
                             "input tensor).", versions=ALL)
    X = quote(ONNX_TOPK_DOC, "Inputs: X", "Tensor of shape [a_0, a_1, ..., a_{n-1}]", versions=ALL)
    K = quote(ONNX_TOPK_DOC, "Inputs: K",
              "A 1-D tensor containing a single positive value corresponding to the number of top elements "
              "to retrieve", versions=FROM_10)
    K_ATTRIBUTE = quote(ONNX_TOPK_DOC, "Attributes: k", "Number of top elements to retrieve", versions=V1)
    AXIS_11 = quote(ONNX_TOPK_DOC, "Attributes: axis",
                    "Dimension on which to do the sort. Negative value means counting dimensions from the back. "
                    "Accepted range is [-r, r-1] where r = rank(input).", versions=FROM_11)
    AXIS_1 = quote(ONNX_TOPK_DOC, "Attributes: axis", "Dimension on which to do the sort.", versions=["1", "10"])
    LARGEST_ATTR = quote(ONNX_TOPK_DOC, "Attributes: largest",
                         "Whether to return the top-K largest or smallest elements.", versions=FROM_11)
    SORTED_ATTR = quote(ONNX_TOPK_DOC, "Attributes: sorted", "Whether to return the elements in sorted order.",
                        versions=FROM_11)
    ATTRIBUTES = {
        "1": quote(ONNX_TOPK_DOC, "Attributes", "axis - INT (default is '-1'); k - INT (required)", versions=V1),
        "10": quote(ONNX_TOPK_DOC, "Attributes", "axis - INT (default is '-1')", versions=V10),
        "11": quote(ONNX_TOPK_DOC, "Attributes",
                    "axis - INT (default is '-1'); largest - INT (default is '1'); sorted - INT (default is '1')",
                    versions=FROM_11),
    }
    T_FLOAT = quote(ONNX_TOPK_DOC, "Type Constraints: T",
                    "T in (tensor(float16), tensor(float), tensor(double)): Constrain input and output types "
                    "to float tensors.", versions=["1", "10"])
    T_11 = quote(ONNX_TOPK_DOC, "Type Constraints: T",
                 "T in (tensor(uint8), tensor(uint16), tensor(uint32), tensor(uint64), tensor(int8), "
                 "tensor(int16), tensor(int32), tensor(int64), tensor(float16), tensor(float), tensor(double)): "
                 "Constrain input and output types to numeric tensors.", versions=V11)
    T_24 = quote(ONNX_TOPK_DOC, "Type Constraints: T",
                 "T in (tensor(uint8), tensor(uint16), tensor(uint32), tensor(uint64), tensor(int8), "
                 "tensor(int16), tensor(int32), tensor(int64), tensor(float16), tensor(float), tensor(double), "
                 "tensor(bfloat16)): Constrain input and output types to numeric tensors.", versions=V24)
    I = quote(ONNX_TOPK_DOC, "Type Constraints: I", "I in (tensor(int64)): Constrain index tensor to int64",
              versions=ALL)


def section_title(cited: dict, version: str | None = None) -> str:
    """The section as a reader finds it: ONNX sections under their version's heading
    ("TopK - 24, Inputs: K"; "TopK - 10/11/24, Inputs: K" without a version), others as they are."""
    versions = cited.get("versions")
    if cited["doc"] == ONNX_TOPK_DOC and versions:
        at = _AT[version] if version in versions else "TopK - " + "/".join(versions)
        return f"{at}, {cited['section']}"
    return cited["section"]


def applicable(sources, family: str, *, op: str | None = None, version: str | None = None) -> list:
    """The citations of `family`; narrowed to the operator and version when some match them."""
    from topkspec.spec.tables import DOCUMENTS

    mine = [s for s in sources if DOCUMENTS[s["doc"]]["family"] == family]
    if op is not None:
        mine = [s for s in mine if op in DOCUMENTS[s["doc"]]["ops"]] or mine
    if version is not None:
        mine = [s for s in mine if version in s.get("versions", [version])] or mine
    return mine
