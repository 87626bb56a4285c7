"""tract 0.23.9: ONNX TopK with K above the axis size is accepted and pads the outputs with zeros.

ONNX: K is at most the axis size. x = [3, 1, 2], K = 5: tract returns values [3, 2, 1, 0, 0] and
indices [0, 2, 1, 0, 0] (two made-up elements, index 0 repeated) instead of an error.
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
try:
    values, indices = (t.to_numpy() for t in runnable.run([np.array([3, 1, 2], np.float32), np.array([5])]))
except tract.TractError as error:
    sys.exit(print("fixed: refused:", str(error).splitlines()[0]))
print("observed: values", values.tolist(), "indices", indices.tolist(), "(expected an error: K = 5 > 3)")
sys.exit(1)
