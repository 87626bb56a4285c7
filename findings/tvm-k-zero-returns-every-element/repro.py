"""Apache TVM 0.27.0: ONNX TopK with K = 0 is accepted and returns every element.

ONNX: K is "a single positive value". x = [3, 1, 2] (float32), K = [0] (an initializer): the
Relax ONNX frontend passes K to relax.op.topk, whose own contract is "Return all elements if
k < 1", and the model returns all three elements instead of an error (or, as ONNX Runtime
does on purpose, empty outputs).
Prints `observed: ...` and exits 1 while K = 0 returns elements, 0 once it is refused or returns
none, 2 without TVM.
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
                          initializer=[helper.make_tensor("K", TensorProto.INT64, [1], [0])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
try:
    machine = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
    values, indices = (t.numpy() for t in machine["main"](tvm.runtime.tensor(np.array([3, 1, 2], np.float32))))
except Exception as error:  # the fix: an error for K = 0
    sys.exit(print("fixed: refused:", str(error).strip().splitlines()[-1]))
if values.size == 0:
    sys.exit(print("fixed: K = 0 gives empty outputs"))
print("observed: K = 0 gives values", values.tolist(), "indices", indices.tolist(),
      "(expected an error: K must be positive)")
sys.exit(1)
