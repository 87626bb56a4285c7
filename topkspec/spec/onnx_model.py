"""Read the TopK nodes of an .onnx model as ONNX descriptors (needs the onnx package).

The value type and shape of X come from the graph (after shape inference); k comes from the
attribute (opset 1) or from input K when it is an initializer or a Constant. What the model
leaves unknown (a symbolic dimension, a computed K) is noted and the rules that need it cannot
fail on it.
"""
from __future__ import annotations

from topkspec import dtypes


def _elem_names():
    return {code: name for name, code in dtypes.ONNX_ELEM_TYPES.items()}


def _constants(graph):
    from onnx import numpy_helper

    values = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    values[node.output[0]] = numpy_helper.to_array(attr.t)
    return values


def topk_nodes(raw: bytes):
    """[(node name, ONNX descriptor, notes)] for every TopK node of the model."""
    import onnx
    from onnx import shape_inference

    from topkspec.spec.commands import InputError

    try:
        model = onnx.load_from_string(raw)
    except Exception as exc:  # protobuf raises its own DecodeError types
        raise InputError(f"not a readable ONNX model: {exc}") from None
    try:
        model = shape_inference.infer_shapes(model)
    except Exception:
        pass  # validate what the graph itself declares
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise InputError("the model imports no default-domain opset")
    graph = model.graph
    types = {}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        types[info.name] = info.type.tensor_type
    constants = _constants(graph)
    elem_names = _elem_names()
    found = []
    for index, node in enumerate(graph.node):
        if node.op_type != "TopK" or node.domain not in ("", "ai.onnx"):
            continue
        notes = []
        name = node.name or f"TopK#{index}"
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        tensor_type = types.get(node.input[0])
        if tensor_type is None:
            raise InputError(f"{name}: the type of input {node.input[0]!r} is unknown")
        dtype = elem_names.get(tensor_type.elem_type, f"onnx elem_type {tensor_type.elem_type}")
        if opset < 10:
            k = attributes.get("k")
        elif len(node.input) > 1 and node.input[1] in constants:
            k = [int(v) for v in constants[node.input[1]].reshape(-1)]
            k = k[0] if len(k) == 1 else k
        else:
            k = None
        if k is None:
            notes.append("k is not a constant: k rules are not checked")
            k = 1
        shape = []
        for i, dim in enumerate(tensor_type.shape.dim):
            if dim.HasField("dim_value"):
                shape.append(dim.dim_value)
            else:
                notes.append(f"dimension {i} of X is not fixed: bounds against it are not checked")
                shape.append(max(k if isinstance(k, int) else 1, 1))
        desc = {"op_type": "TopK", "opset": opset, "X": {"dtype": dtype, "shape": shape}, "k": k,
                "attributes": attributes}
        found.append((name, desc, notes))
    return found
