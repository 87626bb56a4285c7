"""Apache TVM 0.27.0: the Relax ONNX frontend refuses a valid ONNX TopK-11 with sorted=0.

ONNX TopK-11 and later take sorted=0 ("order of returned Values and Indices are undefined"), so
a sorted answer is a right one. The frontend raises "TopK sorted must be 1 for Relax frontend"
while importing x = [3, 1, 2] (float32), K = 1, sorted=0, on purpose: this asks for the model to
be imported. Prints `observed: ...` and exits 1 while it is refused, 0 once it runs, 2 without TVM.
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
node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=0)
graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"])],
                          [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["k"]),
                           helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])],
                          initializer=[helper.make_tensor("K", TensorProto.INT64, [1], [1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
try:
    machine = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
except Exception as error:
    print("observed: TopK-11 with sorted=0 refused:", str(error).strip().splitlines()[-1])
    sys.exit(1)
values, indices = (t.numpy() for t in machine["main"](tvm.runtime.tensor(np.array([3, 1, 2], np.float32))))
sys.exit(print("fixed: sorted=0 runs: values", values.tolist(), "indices", indices.tolist()))
