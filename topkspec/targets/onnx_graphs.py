"""The graph contexts of spec.graphs built around a one-node TopK model.

Each context is a plain function of the one-node model's parts, as a repro program holds them:
`(x, k, axis, inputs, initializers, feeds, nodes, outputs)`, with `x` the drawn tensor, `k` and
`axis` the case's, `inputs` the graph inputs (X first, then K when it is one), `initializers`,
`feeds` (input name -> array, in the graph's input order), `nodes` ([the TopK node]) and
`outputs` (Values, Indices). It changes the lists in place so the TopK still reads X and K
equal to the drawn ones. A report's repro.py carries the function's own source (`source_of`),
so the run and the repro build the same graph from one text. The functions use only numpy
(`np`), `helper` and `TensorProto` from onnx.
"""
from __future__ import annotations

import inspect

import numpy as np


def _drop_k(inputs, initializers, feeds):
    """No K of the caller's: the graph computes it."""
    inputs[:] = [i for i in inputs if i.name != "K"]
    initializers[:] = [t for t in initializers if t.name != "K"]
    feeds.pop("K", None)


def _k_from_shape(x, k, axis, inputs, initializers, feeds, nodes):
    """K = Shape(X)[axis] - (n - k): the axis size, less a constant when K is below it."""
    from onnx import TensorProto, helper

    _drop_k(inputs, initializers, feeds)
    n = x.shape[axis]
    initializers.append(helper.make_tensor("Axis", TensorProto.INT64, [1], [axis]))  # as written: may be negative
    before = [helper.make_node("Shape", ["X"], ["XShape"]),
              helper.make_node("Gather", ["XShape", "Axis"], ["N" if k < n else "K"], axis=0)]
    if k < n:
        initializers.append(helper.make_tensor("Less", TensorProto.INT64, [1], [n - k]))
        before.append(helper.make_node("Sub", ["N", "Less"], ["K"]))
    nodes[:0] = before


def k_shape(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """K computed from X's shape at run time: Shape -> Gather(axis) (-> Sub)."""
    _k_from_shape(x, k, axis, inputs, initializers, feeds, nodes)


def k_shape_static(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """K computed from X's shape, X's dimensions fixed in the graph: K can be folded at load."""
    from onnx import helper

    inputs[0] = helper.make_tensor_value_info("X", inputs[0].type.tensor_type.elem_type, list(x.shape))
    _k_from_shape(x, k, axis, inputs, initializers, feeds, nodes)


def k_shape_min(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """K = Min(Slice(Shape(X), axis, axis + 1), k)."""
    from onnx import TensorProto, helper

    _drop_k(inputs, initializers, feeds)
    a = axis % x.ndim
    for name, value in (("Start", a), ("End", a + 1), ("KConstant", k)):
        initializers.append(helper.make_tensor(name, TensorProto.INT64, [1], [value]))
    nodes[:0] = [helper.make_node("Shape", ["X"], ["XShape"]),
                 helper.make_node("Slice", ["XShape", "Start", "End"], ["N"]),
                 helper.make_node("Min", ["N", "KConstant"], ["K"])]


def _k_from_tensor(x, k, inputs, initializers, feeds, nodes, constant):
    """K = Reshape(Cast(ReduceMax(S), int64), [1]), S = [k, 0.5] in float32."""
    from onnx import TensorProto, helper

    _drop_k(inputs, initializers, feeds)
    s = np.array([k, 0.5], dtype=np.float32)
    if constant:
        initializers.append(helper.make_tensor("S", TensorProto.FLOAT, [2], s.tolist()))
    else:
        inputs.append(helper.make_tensor_value_info("S", TensorProto.FLOAT, ["s"]))
        feeds["S"] = s
    initializers.append(helper.make_tensor("One", TensorProto.INT64, [1], [1]))
    nodes[:0] = [helper.make_node("ReduceMax", ["S"], ["SMax"], keepdims=1),
                 helper.make_node("Cast", ["SMax"], ["KCast"], to=TensorProto.INT64),
                 helper.make_node("Reshape", ["KCast", "One"], ["K"])]


def k_tensor(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """K computed from another graph input S: ReduceMax -> Cast -> Reshape."""
    _k_from_tensor(x, k, inputs, initializers, feeds, nodes, constant=False)


def k_tensor_constant(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """K computed from a constant S: ReduceMax -> Cast -> Reshape, all foldable."""
    _k_from_tensor(x, k, inputs, initializers, feeds, nodes, constant=True)


def _feed_first(feeds, name, array):
    """`feeds` with `name` first (the graph's input order) and X no longer fed."""
    rest = {key: value for key, value in feeds.items() if key != "X"}
    feeds.clear()
    feeds.update({name: array, **rest})


def x_transpose(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """X = Transpose(XIn) with the axes reversed; XIn is X with its axes reversed."""
    from onnx import helper

    perm = list(range(x.ndim))[::-1]
    inputs[0] = helper.make_tensor_value_info("XIn", inputs[0].type.tensor_type.elem_type,
                                              [f"t{i}" for i in range(x.ndim)])
    _feed_first(feeds, "XIn", np.ascontiguousarray(np.transpose(x, perm)))
    nodes.insert(0, helper.make_node("Transpose", ["XIn"], ["X"], perm=perm))


def x_reshape(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """X = Reshape(XFlat, X's shape): the input comes flat."""
    from onnx import TensorProto, helper

    inputs[0] = helper.make_tensor_value_info("XFlat", inputs[0].type.tensor_type.elem_type, ["size"])
    initializers.append(helper.make_tensor("XShapeConstant", TensorProto.INT64, [x.ndim], list(x.shape)))
    _feed_first(feeds, "XFlat", x.reshape(-1))
    nodes.insert(0, helper.make_node("Reshape", ["XFlat", "XShapeConstant"], ["X"]))


def x_cast(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """X = Cast(XWide): integers fed in the 64-bit type of their sign, floats in their own type."""
    from onnx import helper

    elem = inputs[0].type.tensor_type.elem_type
    wide = {"i": np.int64, "u": np.uint64}.get(x.dtype.kind, x.dtype)
    wide_elem = helper.np_dtype_to_tensor_dtype(np.dtype(wide)) if x.dtype.kind in "iu" else elem
    inputs[0] = helper.make_tensor_value_info("XWide", wide_elem, [f"d{i}" for i in range(x.ndim)])
    _feed_first(feeds, "XWide", x.astype(wide))
    nodes.insert(0, helper.make_node("Cast", ["XWide"], ["X"], to=elem))


def outputs_consumed(x, k, axis, inputs, initializers, feeds, nodes, outputs):
    """Values and Indices also feed other nodes: Identity, and a Gather of the first index along
    the axis (the best one, as a model picks it); their outputs follow Values and Indices."""
    from onnx import TensorProto, helper

    out = [f"o{i}" for i in range(x.ndim)]
    initializers.append(helper.make_tensor("First", TensorProto.INT64, [1], [0]))
    nodes += [helper.make_node("Identity", ["Values"], ["ValuesCopy"]),
              helper.make_node("Gather", ["Indices", "First"], ["BestIndex"], axis=axis)]
    outputs += [helper.make_tensor_value_info("ValuesCopy", outputs[0].type.tensor_type.elem_type, out),
                helper.make_tensor_value_info("BestIndex", TensorProto.INT64, out)]


BUILDERS = {f.__name__: f for f in (k_shape, k_shape_static, k_shape_min, k_tensor, k_tensor_constant,
                                   x_transpose, x_reshape, x_cast, outputs_consumed)}
# The helpers each builder calls, in the order a program defines them.
_HELPERS = {"k_shape": (_drop_k, _k_from_shape), "k_shape_static": (_drop_k, _k_from_shape),
            "k_shape_min": (_drop_k,), "k_tensor": (_drop_k, _k_from_tensor),
            "k_tensor_constant": (_drop_k, _k_from_tensor), "x_transpose": (_feed_first,),
            "x_reshape": (_feed_first,), "x_cast": (_feed_first,), "outputs_consumed": ()}


def apply(context: str, x, k: int, axis: int, parts: dict) -> None:
    """Build `context` around the one-node model's `parts` (the lists and feeds named above)."""
    BUILDERS[context](x, int(k), int(axis), parts["inputs"], parts["initializers"], parts["feeds"],
                      parts["nodes"], parts["outputs"])


def source_of(context: str) -> str:
    """The source a repro program defines to build `context`: its helpers and its function."""
    functions = (*_HELPERS[context], BUILDERS[context])
    return "\n\n\n".join(inspect.getsource(f).rstrip() for f in functions) + "\n"
