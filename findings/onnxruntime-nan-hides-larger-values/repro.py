"""ONNX Runtime's CPU TopK before 1.32, with NaN in the axis, leaves out a larger number.

x = [1.0, NaN, 3.0], K = 2: whatever NaN's place, 3.0 is among the 2 largest. ONNX Runtime
1.16.3 to 1.31.1 on the CPU return [1.0, NaN]; 1.32.0 returns [NaN, 3.0]. Prints `observed: ...`
and exits 1 while 3.0 is left out, 0 once it is returned, 2 without ONNX Runtime.
"""
import sys

import numpy as np

try:
    import onnxruntime as ort
    from onnx import TensorProto, helper
except ImportError:
    sys.exit(2)  # ONNX Runtime or onnx is not installed: nothing to say

graph = helper.make_graph(
    [helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=-1, largest=1, sorted=1)], "topk",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3]), helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("V", TensorProto.FLOAT, [2]), helper.make_tensor_value_info("I", TensorProto.INT64, [2])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
model.ir_version = 8
session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
values, indices = session.run(None, {"X": np.array([1.0, np.nan, 3.0], np.float32), "K": np.array([2], np.int64)})
print("onnxruntime", ort.__version__)
if 3.0 in values.tolist():
    sys.exit(print("fixed: values", values.tolist(), "indices", indices.tolist()))
print("observed: TopK([1, NaN, 3], K=2) gives values", values.tolist(), "indices", indices.tolist(),
      "(3.0 at index 2 is among the 2 largest wherever NaN goes)")
sys.exit(1)
