"""tract 0.23.9: ONNX TopK with a NaN in the input returns a non-NaN value that is not the largest.

x = [1, nan, 3], K = 1, largest: whatever the NaN policy, the answer is NaN or 3; tract returns 1.
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without tract.
"""
import pathlib
import sys
import tempfile

import numpy as np
try:
    import tract
except ImportError:
    sys.exit(2)  # tract is not installed: nothing to say
from onnx import TensorProto, helper, save_model

node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=1)
graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"]),
                                           helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
                          [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["k"]),
                           helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
with tempfile.TemporaryDirectory() as folder:
    save_model(model, path := pathlib.Path(folder, "topk.onnx"))
    runnable = tract.onnx().load(path).into_model().into_runnable()
values, indices = (t.to_numpy() for t in runnable.run([np.array([1, np.nan, 3], np.float32), np.array([1])]))
if np.isnan(values[0]) or values[0] == 3:
    sys.exit(print("fixed: values", values.tolist(), "indices", indices.tolist()))
print("observed: values", values.tolist(), "indices", indices.tolist(), "(expected NaN or 3, the largest non-NaN value)")
sys.exit(1)
