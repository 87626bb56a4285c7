"""Apache TVM 0.27.0: the Relax ONNX frontend imports TopK-10 with K = 1, whatever K is.

ONNX TopK-10 takes K as its second input. x = [3, 1, 2, 5], K = [3]: TVM returns one element
([5], index [3]) instead of three ([5, 3, 2], indices [3, 0, 2]): the frontend has converters
for opsets 1 and 11 only, so TopK-10 goes to the opset-1 one, which reads K from the attribute
`k` (gone since opset 10; its default, 1) and ignores the input.
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
node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1)
graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"])],
                          [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["k"]),
                           helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])],
                          initializer=[helper.make_tensor("K", TensorProto.INT64, [1], [3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)], ir_version=5)
machine = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
values, indices = (t.numpy() for t in machine["main"](tvm.runtime.tensor(np.array([3, 1, 2, 5], np.float32))))
if values.tolist() == [5, 3, 2] and indices.tolist() == [3, 0, 2]:
    sys.exit(print("fixed: K = 3 gives", values.tolist()))
print("observed: values", values.tolist(), "indices", indices.tolist(), "(expected [5.0, 3.0, 2.0] and [3, 0, 2])")
sys.exit(1)
