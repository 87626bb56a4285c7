"""Apache TVM 0.27.0: ONNX TopK on bfloat16, compiled for llvm (CPU), returns the wrong elements.

x = [3, 1, 2, 5, 1] (bfloat16), K = 2: TVM returns the wrong elements, different from run to run
(values [2, 5] at [1, 0], or values not in x at all), instead of [5, 3] at [3, 0]; longer
sequences crash the process (2049 elements, K = 2048: SIGSEGV). The same model on float16 or
float32 is right. The model is TopK-24, the first TopK whose type list holds bfloat16
(onnx.checker refuses a bfloat16 TopK-11).
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without TVM.
"""
import sys
import warnings

import numpy as np
try:
    import ml_dtypes
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
except ImportError:
    sys.exit(2)  # apache-tvm (with ml_dtypes) is not installed: nothing to say
import onnx
from onnx import TensorProto, helper

warnings.simplefilter("ignore")
node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=1)
graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", TensorProto.BFLOAT16, ["n"])],
                          [helper.make_tensor_value_info("Values", TensorProto.BFLOAT16, ["k"]),
                           helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])],
                          initializer=[helper.make_tensor("K", TensorProto.INT64, [1], [2])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)], ir_version=11)
onnx.checker.check_model(model, full_check=True)  # a valid model: TopK-24 allows bfloat16
machine = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
x = np.array([3, 1, 2, 5, 1], np.float32).astype(ml_dtypes.bfloat16)
values, indices = (t.numpy() for t in machine["main"](tvm.runtime.tensor(x)))
got = values.astype(np.float32).tolist()
if got == [5.0, 3.0] and indices.tolist() == [3, 0]:
    sys.exit(print("fixed: values", got))
print("observed: values", got, "indices", indices.tolist(), "(expected [5.0, 3.0] at [3, 0])")
sys.exit(1)
