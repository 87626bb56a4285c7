"""Read the TopK nodes of an .onnx model as ONNX descriptors (needs the onnx package).

The value type and shape of X come from the graph (after shape inference); k comes from the
attribute (opset 1) or from input K when it is an initializer or a Constant. What the model
leaves unknown (a symbolic dimension, a computed K) is noted and the rules that need it cannot
fail on it.
"""
from __future__ import annotations

from typing import NamedTuple

from topkspec.spec import dtypes


def _elem_names():
    return {code: name for name, code in dtypes.ONNX_ELEM_TYPES.items()}


def _constants(graph):
    """{name: TensorProto} of the initializers and Constant nodes' values."""
    tensors = {init.name: init for init in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    tensors[node.output[0]] = attr.t
    return tensors


def _k_tensor(name, constants, types, elem_names, notes):
    """The input K as the model declares it: {"dtype", "shape"} (null for an unknown size)."""
    if name in constants:
        tensor = constants[name]
        return {"dtype": elem_names.get(tensor.data_type, f"onnx elem_type {tensor.data_type}"),
                "shape": [int(d) for d in tensor.dims]}
    declared = types.get(name)
    if declared is None:
        notes.append(f"the type and shape of input K ({name!r}) are unknown: not checked")
        return None
    if not declared.HasField("shape"):
        notes.append(f"the shape of input K ({name!r}) is unknown: its rank is not checked")
        shape = [None]
    else:
        shape = [d.dim_value if d.HasField("dim_value") else None for d in declared.shape.dim]
    return {"dtype": elem_names.get(declared.elem_type, f"onnx elem_type {declared.elem_type}"), "shape": shape}


class TopKNode(NamedTuple):
    """A TopK node of a model: its ONNX descriptor as the model gives it; `judged`, the same with
    a stand-in where the model leaves a value open (k = 1 for a K that is no constant), so the
    other rules can be checked; and notes on what is therefore not checked."""

    name: str
    descriptor: dict
    notes: list
    judged: dict


def topk_nodes(raw: bytes) -> list:
    """[TopKNode] for every TopK node of the model. A TopK whose input K is missing has no "k"
    (a violation); the K tensor's type and shape go in "K"."""
    import onnx
    from onnx import numpy_helper, shape_inference

    from topkspec.errors import InputError

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
        notes, k_open = [], False
        name = node.name or f"TopK#{index}"
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        tensor_type = types.get(node.input[0])
        if tensor_type is None:
            raise InputError(f"{name}: the type of input {node.input[0]!r} is unknown")
        dtype = elem_names.get(tensor_type.elem_type, f"onnx elem_type {tensor_type.elem_type}")
        k_name = node.input[1] if len(node.input) > 1 and node.input[1] else None
        k_tensor = _k_tensor(k_name, constants, types, elem_names, notes) if k_name else None
        if opset < 10:
            k = attributes.get("k")  # a missing attribute k is a violation (onnx.desc.fields)
        elif k_name is None:
            k = None  # no input K: a violation (onnx.desc.fields)
        elif k_name in constants:
            k = [int(v) for v in numpy_helper.to_array(constants[k_name]).reshape(-1)]
            k = k[0] if len(k) == 1 else k
        else:
            notes.append("k is not a constant: k rules are not checked")
            k, k_open = 1, True  # a stand-in: judged with it, never shown
        shape = []
        for i, dim in enumerate(tensor_type.shape.dim):
            if dim.HasField("dim_value"):
                shape.append(dim.dim_value)
            else:
                notes.append(f"dimension {i} of X is not fixed: bounds against it are not checked")
                shape.append(max(k if isinstance(k, int) else 1, 1))
        desc = {"op_type": "TopK", "opset": opset, "X": {"dtype": dtype, "shape": shape}, "attributes": attributes}
        if k is not None:
            desc["k"] = k
        if k_tensor is not None:
            desc["K"] = k_tensor
        shown = {key: value for key, value in desc.items() if not (key == "k" and k_open)}
        found.append(TopKNode(name, shown, notes, desc))
    if not found:
        raise InputError("the model has no TopK node (of the default ONNX domain): nothing to validate")
    return found
