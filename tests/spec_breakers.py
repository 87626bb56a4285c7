"""For every descriptor rule, a descriptor that breaks it and as little else as possible.

BREAKERS maps rule id -> (descriptor, strict_doc). The descriptor breaks exactly the rule plus
the rule's `co_broken` list (empty for rules that can be broken alone).
"""
import copy


def dml_base(op="TOP_K1", level="DML_FEATURE_LEVEL_5_0"):
    desc = {
        "Type": "DML_OPERATOR_" + op,
        "FeatureLevel": level,
        "Desc": {
            "InputTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [2, 3, 5]},
            "OutputValueTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [2, 3, 2]},
            "OutputIndexTensor": {"DataType": "DML_TENSOR_DATA_TYPE_UINT32", "Sizes": [2, 3, 2]},
            "Axis": 2,
            "K": 2,
            "AxisDirection": "DML_AXIS_DIRECTION_DECREASING",
        },
    }
    if op == "TOP_K":
        del desc["Desc"]["AxisDirection"]
    return desc


def onnx_base(opset=11):
    attributes = {"axis": -1, "largest": 1, "sorted": 1} if opset >= 11 else {"axis": -1}
    return {"op_type": "TopK", "opset": opset, "X": {"dtype": "float32", "shape": [3, 4]}, "k": 2,
            "attributes": attributes}


def _dml(mutate, **base):
    desc = dml_base(**base)
    mutate(desc["Desc"], desc)
    return desc


def _onnx(mutate, opset=11):
    desc = onnx_base(opset)
    mutate(desc)
    return desc


def _set(path, value):
    def mutate(body, _desc):
        target = body
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _sizes(sizes_by_tensor):
    def mutate(body, _desc):
        for name, sizes in sizes_by_tensor.items():
            body[name]["Sizes"] = sizes
    return mutate


def _all_sizes(inp, out, k=None):
    def mutate(body, _desc):
        body["InputTensor"]["Sizes"] = inp
        body["OutputValueTensor"]["Sizes"] = list(out)
        body["OutputIndexTensor"]["Sizes"] = list(out)
        if k is not None:
            body["K"] = k
    return mutate


BREAKERS = {
    "dml.desc.fields": (_dml(lambda b, d: b.update(Extra=1)), False),
    "dml.tensor.fields": (_dml(_set(["InputTensor", "Bogus"], 1)), False),
    "dml.operator.available": (dml_base(level="DML_FEATURE_LEVEL_2_0"), False),
    "dml.tensor.sizes_positive": (_dml(_all_sizes([0, 3, 5], [0, 3, 2])), False),
    "dml.rank.same": (_dml(_set(["OutputIndexTensor", "Sizes"], [1, 2, 3, 2])), False),
    "dml.rank.supported": (dml_base(level="DML_FEATURE_LEVEL_2_1"), False),
    "dml.dtype.value_supported": (_dml(lambda b, d: (b["InputTensor"].update(DataType="FLOAT64"),
                                                     b["OutputValueTensor"].update(DataType="FLOAT64"))), False),
    "dml.dtype.index_supported": (_dml(_set(["OutputIndexTensor", "DataType"], "INT32")), False),
    "dml.dtype.same": (_dml(_set(["OutputValueTensor", "DataType"], "FLOAT16")), False),
    "dml.axis.range": (_dml(_set(["Axis"], 3)), False),
    "dml.k.positive": (_dml(_all_sizes([2, 3, 5], [2, 3, 0], k=0)), False),
    "dml.k.max": (_dml(_all_sizes([2, 3, 5], [2, 3, 6], k=6)), False),
    "dml.k.max_strict": (_dml(_all_sizes([2, 3, 5], [2, 3, 5], k=5)), True),
    "dml.direction.enum": (_dml(_set(["AxisDirection"], 2)), False),
    "dml.shape.output_values": (_dml(_sizes({"OutputValueTensor": [2, 3, 3]})), False),
    "dml.shape.output_indices": (_dml(_sizes({"OutputIndexTensor": [2, 2, 2]})), False),
    "dml.shape.outputs_same_sizes": (_dml(_sizes({"OutputValueTensor": [2, 3, 1]})), False),
    "dml.tensor.strides": (_dml(_set(["InputTensor", "Strides"], [5, 1])), False),
    "dml.tensor.total_size": (_dml(_set(["InputTensor", "TotalTensorSizeInBytes"], 4)), False),
    "dml.tensor.alignment": (_dml(_set(["InputTensor", "GuaranteedBaseOffsetAlignment"], 2)), False),
    "dml.tensor.outputs_distinct": (_dml(_set(["OutputValueTensor", "Strides"], [2, 0, 1])), False),
    "onnx.desc.fields": (_onnx(lambda d: d.update(extra=1)), False),
    "onnx.attr.allowed": (_onnx(lambda d: d["attributes"].update(largest=1), opset=10), False),
    "onnx.attr.k_matches": (_onnx(lambda d: d["attributes"].update(k=3), opset=1), False),
    "onnx.dtype.T": (_onnx(lambda d: d["X"].update(dtype="int32"), opset=10), False),
    "onnx.axis.range": (_onnx(lambda d: d["attributes"].update(axis=2)), False),
    "onnx.k.single": (_onnx(lambda d: d.update(k=[2, 3])), False),
    "onnx.k.positive": (_onnx(lambda d: d.update(k=0)), False),
    "onnx.k.max": (_onnx(lambda d: d.update(k=5)), False),
    "onnx.attr.boolean": (_onnx(lambda d: d["attributes"].update(largest=2)), False),
}


def breaker(rule_id):
    desc, strict = BREAKERS[rule_id]
    return copy.deepcopy(desc), strict
