"""onnx's ReferenceEvaluator runs TopK with an axis below -rank on another axis.

TopK's axis has "Accepted range is [-r, r-1]"; axis = -3 on a rank-2 input is invalid, and onnx's
shape inference refuses it. The ReferenceEvaluator wraps it around as numpy indexing does and runs
TopK on axis 1. Prints `observed: ...` and exits 1 while it returns a result, 0 once it refuses
the axis, 2 without onnx.
"""
import sys

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
except ImportError:
    sys.exit(2)  # onnx is not installed: nothing to say

node = helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=-3)
graph = helper.make_graph(
    [node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3]),
                     helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("V", TensorProto.FLOAT, None), helper.make_tensor_value_info("I", TensorProto.INT64, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
x = np.array([[1.0, 3.0, 2.0], [6.0, 5.0, 4.0]], np.float32)
print("onnx", onnx.__version__)
try:
    values, indices = ReferenceEvaluator(model).run(None, {"X": x, "K": np.array([1], np.int64)})
except Exception as exc:
    sys.exit(print(f"fixed: axis -3 of a rank-2 input is refused ({type(exc).__name__}: {exc})"))
print("observed: TopK(axis=-3) on float32[2, 3], K=1 gives values", values.tolist(), "indices", indices.tolist(),
      "(axis -3 is outside [-2, 1]: expected an error)")
sys.exit(1)
