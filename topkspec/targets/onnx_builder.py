"""One ONNX TopK model builder shared by every ONNX-backed target.

A model has one TopK node with symbolic input dimensions, so one model (and one session)
serves every shape of a signature. K is an initializer-free graph input from opset 10 on
(`k_as_input=True`) or a constant initializer (`k_as_input=False`, what DirectML needs);
at opset 1 it is the node's attribute.
"""
from __future__ import annotations

from dataclasses import dataclass

from topkspec.spec import dtypes
from topkspec.spec.profiles import parse_profile
from topkspec.targets.base import selects_largest

ONNX_TOPK_VERSIONS = (1, 10, 11, 24)

# IR version written into each model: the oldest IR that carries the opset, so a runtime
# older than the installed onnx package still reads it (onnx writes its newest IR by default).
_IR_FOR_OPSET = {1: 3, 10: 5, 11: 6, 24: 11}


@dataclass(frozen=True)
class OnnxTopK:
    """The ONNX form of a case: what the model depends on (not K at opset >= 10, not sizes)."""

    opset: int  # 1, 10, 11 or 24
    dtype: str
    rank: int
    axis: int  # as written in the node (may be negative, may be out of range)
    largest: bool
    sorted: bool


def onnx_form(case, dml_opset: int = 11) -> OnnxTopK:
    """The ONNX TopK a case runs as.

    ONNX cases keep their opset, axis and attributes. DirectML cases are lowered (rules
    lower.axis, lower.direction, lower.sorted): Axis as is, direction to `largest`,
    sorted=1, at `dml_opset` (11: the first TopK with `largest`).
    """
    if case.family == "onnx":
        opset = int(parse_profile(case.profile).opset)
        return OnnxTopK(opset, case.dtype, case.rank, case.axis, case.largest, case.sorted)
    return OnnxTopK(dml_opset, case.dtype, case.rank, case.axis, selects_largest(case), True)


def ir_version_for(opset: int) -> int:
    return _IR_FOR_OPSET[max(v for v in ONNX_TOPK_VERSIONS if v <= opset)]


def build_topk_model(form: OnnxTopK, *, k: int | None = None, k_as_input: bool = True):
    """A ModelProto with inputs X (and K when `k_as_input`), outputs Values and Indices.

    `k` is needed unless K is a graph input (opset 1 puts it in the attribute, a constant
    K puts it in an initializer).
    """
    return _model(form, _parts(form, k, k_as_input))


def _parts(form: OnnxTopK, k, k_as_input: bool) -> dict:
    """The one-node model's inputs, initializers, nodes and outputs (onnx_graphs' parts)."""
    from onnx import TensorProto, helper

    elem = dtypes.ONNX_ELEM_TYPES[form.dtype]
    dims = [f"d{i}" for i in range(form.rank)]
    x = helper.make_tensor_value_info("X", elem, dims)
    # Output sizes stay symbolic: the axis may be out of range in an invalid case.
    out_dims = [f"o{i}" for i in range(form.rank)]
    values = helper.make_tensor_value_info("Values", elem, out_dims)
    indices = helper.make_tensor_value_info("Indices", TensorProto.INT64, out_dims)

    attributes = {"axis": form.axis}
    if form.opset >= 11:
        attributes["largest"] = int(form.largest)
        attributes["sorted"] = int(form.sorted)
    inputs, graph_inputs, initializers = ["X"], [x], []
    if form.opset < 10:
        if k is None:
            raise ValueError("opset 1 TopK takes k as an attribute: pass k")
        attributes["k"] = int(k)
    elif k_as_input:
        inputs.append("K")
        graph_inputs.append(helper.make_tensor_value_info("K", TensorProto.INT64, [1]))
    else:
        if k is None:
            raise ValueError("a constant K needs k")
        inputs.append("K")
        initializers.append(helper.make_tensor("K", TensorProto.INT64, [1], [int(k)]))

    node = helper.make_node("TopK", inputs, ["Values", "Indices"], **attributes)
    return {"inputs": graph_inputs, "initializers": initializers, "nodes": [node], "outputs": [values, indices]}


def _model(form: OnnxTopK, parts: dict):
    from onnx import helper

    graph = helper.make_graph(parts["nodes"], "topk", parts["inputs"], parts["outputs"],
                              initializer=parts["initializers"])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", form.opset)],
                             ir_version=ir_version_for(form.opset), producer_name="topkspec")


def build_case_model(form: OnnxTopK, case, x, *, k_as_input: bool = True) -> tuple:
    """(model, feeds) for `case` on input `x`: the one-node model with K as `k_as_input` says,
    inside the case's graph context when it has one (spec.graphs; built by onnx_graphs), and
    the arrays to feed it by input name, in the graph's input order."""
    import numpy as np

    parts = _parts(form, int(case.k), k_as_input)
    feeds = {"X": np.ascontiguousarray(x)}
    if form.opset >= 10 and k_as_input:
        feeds["K"] = np.array([int(case.k)], dtype=np.int64)
    if getattr(case, "context", None):
        from topkspec.targets import onnx_graphs

        onnx_graphs.apply(case.context, feeds["X"], case.k, form.axis, {**parts, "feeds": feeds})
    return _model(form, parts), feeds


# Graph-context models kept per cache: one per sizes and K would otherwise grow without end.
GRAPH_MODELS_KEPT = 64


def model_key(case, x) -> tuple:
    """What a model built by build_case_model depends on beyond the form, K's place and (where
    it is in the model) K: for a graph context, the context, the sizes and K (one model each),
    as one item that `keep_recent_graphs` knows; () for the one-node model."""
    context = getattr(case, "context", None)
    return (("graph", context, tuple(x.shape), int(case.k)),) if context else ()


def keep_recent_graphs(cache: dict) -> None:
    """Forget the oldest graph-context entries of a target's model cache (keys ending in a
    `model_key`) beyond GRAPH_MODELS_KEPT; one-node models stay."""
    graphs = [key for key in cache if key and isinstance(key[-1], tuple) and key[-1][:1] == ("graph",)]
    for key in graphs[:max(0, len(graphs) - GRAPH_MODELS_KEPT)]:
        del cache[key]


def newest_opset_profile(probe) -> str:
    """The newest ONNX TopK version a runtime loads and runs, as a profile: `probe(opset,
    "float32")` is None when it runs float32, the one type every version has; onnx:24 when none does."""
    for opset in reversed(ONNX_TOPK_VERSIONS):
        if probe(opset, "float32") is None:
            return f"onnx:{opset}"
    return "onnx:24"


def repro_node_fields(case) -> tuple:
    """(form, attributes) for a repro program's onnx.helper TopK node: the case's ONNX form and
    the node's keyword arguments as source text ("axis=axis, largest=1, sorted=1", k=k at opset 1)."""
    form = onnx_form(case)
    attributes = ["axis=axis"]
    if form.opset >= 11:
        attributes += [f"largest={int(form.largest)}", f"sorted={int(form.sorted)}"]
    if form.opset < 10:
        attributes.append("k=k")
    return form, ", ".join(attributes)


def onnx_repro_fill(target, case, _spec=None, *, k_feed: str = 'feeds["K"] = np.array([k], dtype=np.int64)') -> dict:
    """The values the ONNX repro templates share (onnxruntime, onnx_reference, tract): a
    one-node model of the case's ONNX form, K as the node's attribute, an initializer
    (`k_constant` targets) or a graph input that the template's `feeds` gets by `k_feed`; for a
    case that asks for a K form (Case.k_form), either one, as `topk(..., k_form=...)` asks."""
    from onnx import TensorProto

    form, attributes = repro_node_fields(case)
    if form.opset < 10:
        k_lines, node_inputs = "    # k is the node's attribute at opset 1", '["X"]'
    elif getattr(case, "k_form", None):  # both ways, as the call asks (`topk`'s k_form)
        k_lines = ('    if k_form == "constant":  # K compiled in\n'
                   '        initializers.append(helper.make_tensor("K", TensorProto.INT64, [1], [k]))\n'
                   '    else:  # K given when the session runs\n'
                   '        inputs.append(helper.make_tensor_value_info("K", TensorProto.INT64, [1]))\n'
                   f'        {k_feed}')
        node_inputs = '["X", "K"]'
    elif getattr(target, "k_constant", False):
        k_lines = '    initializers.append(helper.make_tensor("K", TensorProto.INT64, [1], [k]))  # K compiled in'
        node_inputs = '["X", "K"]'
    else:
        k_lines = ('    inputs.append(helper.make_tensor_value_info("K", TensorProto.INT64, [1]))\n'
                   f'    {k_feed}')
        node_inputs = '["X", "K"]'
    return {"opset": form.opset, "elem": TensorProto.DataType.Name(dtypes.ONNX_ELEM_TYPES[form.dtype]),
            "k_lines": k_lines, "node_inputs": node_inputs, "attributes": attributes,
            "ir_version": ir_version_for(form.opset), **graph_fill(case)}


def graph_fill(case) -> dict:
    """The repro templates' `graph_def` (the source of the case's graph context, before `topk`)
    and `graph_call` (the line that builds it around the node, after `nodes = [node]`); both
    empty for the one-node model."""
    context = getattr(case, "context", None)
    if not context:
        return {"graph_def": "", "graph_call": ""}
    from topkspec.spec import graphs
    from topkspec.targets import onnx_graphs

    return {"graph_def": onnx_graphs.source_of(context) + "\n\n",
            "graph_call": f"\n    {context}(x, k, axis, inputs, initializers, feeds, nodes, outputs)"
                          f"  # the graph around the TopK: {graphs.describe(context)}"}


def graph_detail(case) -> tuple:
    """The line a report's stack gives a case's graph context (none for the one-node model)."""
    context = getattr(case, "context", None)
    if not context:
        return ()
    from topkspec.spec import graphs

    return (f"the TopK inside a graph: {graphs.describe(context)} (context {context}); its own inputs are the "
            f"case's X and K",)
