"""Read the TopK nodes of an .onnx model as ONNX descriptors (needs the onnx package).

    from topkspec.spec.onnx_reader import read_model
    for node in read_model("model.onnx"):
        print(node.location, node.descriptor, node.notes)

Every TopK node of the default ONNX domain is found, in the main graph and in every subgraph
(the branches of If, the bodies of Loop and Scan, any graph attribute), each with its location
("cond/then_branch/topk": node names, or TopK#<index in its graph>, and graph attribute names)
and its descriptor, which is the one the validator judges. The value type and shape of X come
from the graph (after shape inference); k comes from the attribute (opset 1) or from input K
when it is an initializer or a Constant of the node's graph or an enclosing one. What the model
leaves open is null in the descriptor: a symbolic or missing dimension, a K computed at run time
(`"k": null`); the rules that need it are then not checked, and `notes` says so.

What it reads: the model's bytes, and the external data file of an initializer or Constant that
gives K, only when that file lies inside the model's folder (`base_dir`; symbolic links
resolved). It never opens a file outside that folder, nor any file for a model read without a
folder (standard input): such a model, a missing data file, or data that do not fit their
tensor's type and shape is an InputError (one line), never a traceback.
"""
from __future__ import annotations

import os
from typing import NamedTuple

from topkspec.errors import InputError
from topkspec.spec import dtypes


class TopKNode(NamedTuple):
    """A TopK node of a model: `location` (unique in the model), `name` (the node's own name,
    "" when it has none), `descriptor` (its ONNX descriptor, the one judged; None when the node
    cannot be described, then `error` says why) and `notes` (what the model leaves unknown)."""

    location: str
    name: str
    descriptor: dict | None
    notes: list
    error: str | None = None


def read_model(path: str) -> list:
    """[TopKNode] for every TopK node of the model file at `path` (external data read from its
    folder only). Raises InputError for a file that is not a readable model or has no TopK."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    return topk_nodes(raw, base_dir=os.path.dirname(os.path.abspath(path)))


def topk_nodes(raw: bytes, *, base_dir: str | None = None) -> list:
    """[TopKNode] for every TopK node of the serialized model `raw`, subgraphs included.
    `base_dir`: the model's folder, where external data may be read (None: none is read)."""
    try:
        import onnx
        from onnx import shape_inference
    except ImportError:
        raise InputError("reading an .onnx model needs the onnx package (pip install onnx)") from None
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
    found = []
    _walk(model.graph, "", {}, {}, opset, base_dir, found)
    if not found:
        raise InputError("the model has no TopK node (of the default ONNX domain), in its graph or any "
                         "subgraph: nothing to validate")
    return found


def _walk(graph, prefix, outer_types, outer_constants, opset, base_dir, found):
    import onnx

    types = dict(outer_types)
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        if info.type.HasField("tensor_type"):
            types[info.name] = info.type.tensor_type
    constants = dict(outer_constants)
    constants.update({init.name: init for init in graph.initializer})
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output:
            constants[node.output[0]] = node
    for index, node in enumerate(graph.node):
        here = prefix + (node.name or f"{node.op_type}#{index}")
        if node.op_type == "TopK" and node.domain in ("", "ai.onnx"):
            found.append(_describe(node, here, node.name, types, constants, opset, base_dir))
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _walk(attr.g, f"{here}/{attr.name}/", types, constants, opset, base_dir, found)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for i, sub in enumerate(attr.graphs):
                    _walk(sub, f"{here}/{attr.name}[{i}]/", types, constants, opset, base_dir, found)


def _elem_name(code) -> str:
    names = {c: name for name, c in dtypes.ONNX_ELEM_TYPES.items()}
    return names.get(code, f"onnx elem_type {code}")


def _json_value(value):
    """An attribute's value as JSON can hold it (an integer stays an integer)."""
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return f"<{type(value).__name__} attribute>"


def _describe(node, location, name, types, constants, opset, base_dir) -> TopKNode:
    import onnx

    notes = []
    attributes = {a.name: _json_value(onnx.helper.get_attribute_value(a)) for a in node.attribute}
    desc = {"op_type": "TopK", "opset": opset}
    x_name = node.input[0] if node.input else ""
    tensor_type = types.get(x_name)
    if not x_name:
        notes.append("the node has no input X")
    elif tensor_type is None:
        return TopKNode(location, name, None, notes, f"the type of input X ({x_name!r}) is unknown: the model "
                                                       "declares none and shape inference gives none")
    else:
        if tensor_type.HasField("shape"):
            shape = []
            for i, dim in enumerate(tensor_type.shape.dim):
                shape.append(dim.dim_value if dim.HasField("dim_value") else None)
                if shape[-1] is None:
                    notes.append(f"dimension {i} of X is not fixed ({dim.dim_param or 'no size'}): "
                                 "rules that need its size are not checked")
        else:
            shape = None
            notes.append("the rank of X is unknown: rules that need it are not checked")
        desc["X"] = {"dtype": _elem_name(tensor_type.elem_type), "shape": shape}
    k_name = node.input[1] if len(node.input) > 1 and node.input[1] else None
    try:
        k, k_tensor = _k(k_name, constants, types, base_dir, notes if opset >= 10 else [])
    except InputError as exc:
        return TopKNode(location, name, None, notes, str(exc))
    if opset < 10:
        k = attributes.get("k")  # a missing attribute k breaks onnx.desc.fields
        if "k" not in attributes:
            k = _MISSING
    elif k_name is None:
        k = _MISSING  # no input K breaks onnx.desc.fields
    if k is not _MISSING:
        desc["k"] = k
    if k_tensor is not None:
        desc["K"] = k_tensor
    desc["attributes"] = attributes
    return TopKNode(location, name, desc, notes)


_MISSING = object()


def _k(k_name, constants, types, base_dir, notes):
    """(k, K's tensor as the model declares it): k from a constant, null when computed."""
    if k_name is None:
        return None, None
    if k_name in constants:
        tensor = _constant_tensor(constants[k_name], k_name)
        values = _values(tensor, k_name, base_dir)
        k_tensor = {"dtype": _elem_name(tensor.data_type), "shape": [int(d) for d in tensor.dims]}
        k = [_json_value(v) for v in values]
        return (k[0] if len(k) == 1 else k), k_tensor
    notes.append("k is not a constant (given at run time): rules that need it are not checked")
    declared = types.get(k_name)
    if declared is None:
        notes.append(f"the type and shape of input K ({k_name!r}) are unknown: not checked")
        return None, None
    if declared.HasField("shape"):
        shape = [d.dim_value if d.HasField("dim_value") else None for d in declared.shape.dim]
    else:
        notes.append(f"the shape of input K ({k_name!r}) is unknown: its rank is not checked")
        shape = [None]
    return None, {"dtype": _elem_name(declared.elem_type), "shape": shape}


def _constant_tensor(source, name):
    """The TensorProto an initializer or a Constant node holds."""
    from onnx import TensorProto, helper

    if isinstance(source, TensorProto):
        return source
    for attr in source.attribute:
        if attr.name == "value":
            return attr.t
        if attr.name == "value_int":
            return helper.make_tensor(name, TensorProto.INT64, [], [attr.i])
        if attr.name == "value_ints":
            return helper.make_tensor(name, TensorProto.INT64, [len(attr.ints)], list(attr.ints))
    raise InputError(f"Constant {name!r} holds no tensor or integers the TopK's K can be read from")


def _values(tensor, name, base_dir) -> list:
    """The tensor's values as Python numbers; its external data read only inside `base_dir`."""
    from onnx import TensorProto, numpy_helper

    if tensor.data_location == TensorProto.EXTERNAL:
        tensor = _with_external_data(tensor, name, base_dir)
    try:
        return numpy_helper.to_array(tensor).reshape(-1).tolist()
    except Exception as exc:  # onnx and numpy raise several kinds on data that do not fit
        raise InputError(f"initializer {name!r}: its data do not fit its type {_elem_name(tensor.data_type)} "
                         f"and shape {list(tensor.dims)} ({type(exc).__name__}: {exc})") from None


def _with_external_data(tensor, name, base_dir):
    from onnx import TensorProto

    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location", "")
    if base_dir is None:
        raise InputError(f"initializer {name!r} keeps its data in the external file {location!r}, and a model "
                         "read without a folder (standard input) has none to read it from: not opened")
    base = os.path.realpath(base_dir)
    path = os.path.realpath(os.path.join(base, location))
    if not location or os.path.isabs(location) or os.path.commonpath([base, path]) != base:
        raise InputError(f"initializer {name!r} keeps its data in {location!r}, outside the model's folder: "
                         "not opened")
    if not os.path.isfile(path):
        raise InputError(f"initializer {name!r} keeps its data in {location!r}, which is missing from the "
                         "model's folder")
    try:
        offset, length = int(info.get("offset", 0)), info.get("length")
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(int(length)) if length is not None else handle.read()
    except (OSError, ValueError) as exc:
        raise InputError(f"initializer {name!r}: cannot read its external data {location!r}: {exc}") from None
    copy = TensorProto()
    copy.CopyFrom(tensor)
    del copy.external_data[:]
    copy.data_location = TensorProto.DEFAULT
    copy.raw_data = data
    return copy
