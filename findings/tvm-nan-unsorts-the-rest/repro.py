"""Apache TVM 0.27.0: ONNX TopK with NaN in a sequence returns its other values out of order.

x = [nan, 1, 0, 1] (float32), K = 4, largest, sorted: wherever NaN goes, the three other values
must come back as 1, 1, 0. TVM returns 1, 0, nan, 1: a 0 before a 1 in a descending sort.
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without TVM.
"""
import sys
import warnings

import numpy as np
try:
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
except ImportError:
    sys.exit(2)  # apache-tvm is not installed: nothing to say
from onnx import TensorProto, helper

warnings.simplefilter("ignore")
node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=1)
graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"])],
                          [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["k"]),
                           helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])],
                          initializer=[helper.make_tensor("K", TensorProto.INT64, [1], [4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
machine = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
values, indices = (t.numpy() for t in machine["main"](tvm.runtime.tensor(np.array([np.nan, 1, 0, 1], np.float32))))
rest = values[~np.isnan(values)].tolist()
if rest == [1.0, 1.0, 0.0]:
    sys.exit(print("fixed: values", values.tolist()))
print("observed: values", values.tolist(), "indices", indices.tolist(),
      "(expected the non-NaN values 1.0, 1.0, 0.0 in that order, NaN anywhere)")
sys.exit(1)
