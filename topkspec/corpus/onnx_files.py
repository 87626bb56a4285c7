"""ONNX node tests in the backend-test layout, which onnx's loader and ONNX Runtime's test
runner read:

    onnx/test_<name>/model.onnx
    onnx/test_<name>/data.json              rtol and atol 0 (exact), and what the case covers
    onnx/test_<name>/test_data_set_0/input_0.pb   X
    onnx/test_<name>/test_data_set_0/input_1.pb   K (from opset 10, where K is an input)
    onnx/test_<name>/test_data_set_0/output_0.pb  Values
    onnx/test_<name>/test_data_set_0/output_1.pb  Indices

A case inside a graph context (spec.graphs) feeds the graph's own inputs in its order (X fed
transposed, flat or wider; S where K comes from another tensor; no K where the graph computes
it), and where nodes consume Values and Indices, their outputs follow as output_2.pb on.
"""
from __future__ import annotations

import json
import os

import numpy as np

from topkspec.spec import dtypes, parse_profile

_IR_FOR_OPSET = {1: 3, 10: 5, 11: 6, 24: 11}  # the oldest IR carrying each opset, for older runtimes


def topk_model(case):
    """A ModelProto: one TopK node with the case's concrete shapes, at the case's opset."""
    from onnx import helper

    opset = int(parse_profile(case.profile).requested_opset)
    parts = _parts(case)
    graph = helper.make_graph(parts["nodes"], "topk", parts["inputs"], parts["outputs"],
                              initializer=parts["initializers"])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="topkspec corpus")
    model.ir_version = _IR_FOR_OPSET[max(v for v in _IR_FOR_OPSET if v <= opset)]
    return model


def case_model(case, x: np.ndarray) -> tuple:
    """(ModelProto, [(input name, array)]) for the case on `x`: `topk_model` for a one-node
    case; inside its graph context otherwise (spec.graphs, built as a run builds it)."""
    if not case.context:
        inputs = [("X", x)]
        if int(parse_profile(case.profile).requested_opset) >= 10:
            inputs.append(("K", np.array([case.k], dtype=np.int64)))
        return topk_model(case), inputs
    from onnx import helper

    from topkspec.targets import onnx_graphs

    opset = int(parse_profile(case.profile).requested_opset)
    parts, feeds = _parts(case), {"X": x}
    if opset >= 10:
        feeds["K"] = np.array([case.k], dtype=np.int64)
    onnx_graphs.apply(case.context, x, case.k, case.axis, {**parts, "feeds": feeds})
    graph = helper.make_graph(parts["nodes"], "topk", parts["inputs"], parts["outputs"],
                              initializer=parts["initializers"])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="topkspec corpus")
    model.ir_version = _IR_FOR_OPSET[max(v for v in _IR_FOR_OPSET if v <= opset)]
    return model, list(feeds.items())


def _parts(case) -> dict:
    """The one-node model's inputs, initializers, nodes and outputs, concrete shapes."""
    from onnx import TensorProto, helper

    opset = int(parse_profile(case.profile).requested_opset)
    elem = dtypes.ONNX_ELEM_TYPES[case.dtype]
    x = helper.make_tensor_value_info("X", elem, list(case.shape))
    values = helper.make_tensor_value_info("Values", elem, list(case.out_shape))
    indices = helper.make_tensor_value_info("Indices", TensorProto.INT64, list(case.out_shape))
    attributes = {"axis": case.axis}
    inputs, graph_inputs = ["X"], [x]
    if opset < 10:
        attributes["k"] = case.k
    else:
        inputs.append("K")
        graph_inputs.append(helper.make_tensor_value_info("K", TensorProto.INT64, [1]))
    if opset >= 11:
        attributes["largest"] = int(case.largest)
        attributes["sorted"] = int(case.sorted)
    node = helper.make_node("TopK", inputs, ["Values", "Indices"], **attributes)
    return {"inputs": graph_inputs, "initializers": [], "nodes": [node], "outputs": [values, indices]}


def tensor_bytes(array: np.ndarray, name: str) -> bytes:
    """A serialized TensorProto of `array` (bfloat16 as ONNX's BFLOAT16)."""
    from onnx import numpy_helper

    return numpy_helper.from_array(array, name).SerializeToString()


def write_onnx_case(root: str, item, values: np.ndarray, indices: np.ndarray) -> str:
    """Writes one test folder under `root`; returns its path."""
    folder = os.path.join(root, f"test_{item.name}")
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    model, inputs = case_model(item.case, item.x)
    with open(os.path.join(folder, "model.onnx"), "wb") as handle:
        handle.write(model.SerializeToString())
    for n, (name, array) in enumerate(inputs):
        _write(os.path.join(data, f"input_{n}.pb"), tensor_bytes(array, name))
    outputs = [("Values", values), ("Indices", indices.astype(np.int64))] + _further_outputs(model, inputs)
    for n, (name, array) in enumerate(outputs):
        _write(os.path.join(data, f"output_{n}.pb"), tensor_bytes(array, name))
    sidecar = {"rtol": 0, "atol": 0, "case": item.case.to_dict(), "patterns": list(item.patterns),
               "rules": list(item.rules), "source": getattr(item, "source", "topkspec corpus")}
    _write(os.path.join(folder, "data.json"), (json.dumps(sidecar, indent=1, sort_keys=True) + "\n").encode())
    return folder


def _further_outputs(model, inputs) -> list:
    """[(name, array)] of a graph's outputs after Values and Indices (a context whose nodes
    consume them), as ONNX's reference evaluator computes them: a backend test compares every
    output. None for a one-node model."""
    if len(model.graph.output) <= 2:
        return []
    from onnx.reference import ReferenceEvaluator

    names = [output.name for output in model.graph.output[2:]]
    return list(zip(names, ReferenceEvaluator(model).run(names, dict(inputs))))


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
