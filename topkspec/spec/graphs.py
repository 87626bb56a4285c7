"""Graph contexts: the small ONNX graphs a TopK node may sit in, as real models hold it.

A context is a name an ONNX case may carry (`Case.context`; None is the one-node model). The
nodes around the TopK compute its K or its X, or consume its outputs, and always hand the TopK
the case's own K and the drawn tensor as X, so a result is judged as the one-node model's is.
What each graph holds, by name (the builder is `topkspec.targets.onnx_graphs`):

- `k_shape`: K computed from X's shape at run time (symbolic input dimensions):
  Shape -> Gather(axis as written, a one-element index), less a constant when K is below the
  axis size (Sub). ONNX Runtime 1.25 failed to load such a model
  (https://github.com/microsoft/onnxruntime/issues/29072).
- `k_shape_static`: the same graph over an input with fixed dimensions, so a runtime may fold K
  while it loads the model.
- `k_shape_min`: Shape -> Slice(axis, axis+1) -> Min with the constant K (Min takes integers from
  opset 12, so only where the model's opset has it).
- `k_tensor`: K = Reshape(Cast(ReduceMax(S), int64), [1]) with S a float32 graph input holding K.
- `k_tensor_constant`: the same with S an initializer, so K is a constant to fold.
- `x_transpose`: X = Transpose(the input fed transposed), the axes reversed.
- `x_reshape`: X = Reshape(the input fed flat, X's shape as an initializer).
- `x_cast`: X = Cast(the input fed in a wider integer type, or in X's own type for floats),
  exact in both.
- `outputs_consumed`: Values and Indices stay graph outputs and feed other nodes too (Identity,
  and a Gather of the first index along the axis), whose outputs come after them. From opset 10:
  the index is an initializer, which the IR of opset 1 models allows only among the inputs.

Standard library only.
"""
from __future__ import annotations

# name -> (the first ONNX opset whose ops build it, one line a person reads)
CONTEXTS = {
    "k_shape": (10, "K from X's shape (Shape -> Gather -> Sub), dynamic"),
    "k_shape_static": (10, "K from X's shape (Shape -> Gather -> Sub), static"),
    "k_shape_min": (12, "K = Min(Slice(Shape(X)), k)"),
    "k_tensor": (10, "K = ReduceMax(S) -> Cast -> Reshape, S an input"),
    "k_tensor_constant": (10, "K = ReduceMax(S) -> Cast -> Reshape, S a constant"),
    "x_transpose": (1, "X after a Transpose"),
    "x_reshape": (5, "X after a Reshape"),
    "x_cast": (9, "X after a Cast"),
    "outputs_consumed": (10, "outputs consumed by Identity and Gather"),
}
# The word a coverage line gives the one-node model.
NO_CONTEXT = "one node"


def contexts_at(opset: int) -> tuple[str, ...]:
    """The contexts whose ops exist at `opset` (the model's opset is its TopK's)."""
    return tuple(name for name, (first, _) in CONTEXTS.items() if opset >= first)


def describe(context: str | None) -> str:
    """The line a person reads for `context` (None: the one-node model)."""
    return NO_CONTEXT if context is None else CONTEXTS[context][1]


def computes_k(context: str | None) -> bool:
    """Whether the graph computes TopK's K (no K input or initializer of the TopK's own)."""
    return context is not None and context.startswith("k_")
