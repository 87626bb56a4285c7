"""Apache TVM 0.27.0: ONNX TopK with K above the axis size is accepted and reads past the input.

ONNX: K is a positive value no larger than the axis. x = [3, 1, 2] (float32), K = [5]: TVM
compiles and runs it, and returns five values and indices, the last two read from outside the
input (indices that are no place of x, values it does not hold) instead of an error. (K = [0],
which returns every element, is tvm-k-zero-returns-every-element.)
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


def topk(x, k):
    node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=1)
    graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"])],
                              [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["k"]),
                               helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])],
                              initializer=[helper.make_tensor("K", TensorProto.INT64, [1], [k])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
    machine = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
    return [t.numpy() for t in machine["main"](tvm.runtime.tensor(x))]


x = np.array([3, 1, 2], np.float32)
try:
    values, indices = topk(x, 5)
except Exception as error:  # the fix: an error for K = 5
    sys.exit(print("fixed: refused:", str(error).strip().splitlines()[-1]))
print("observed: K = 5 on 3 elements gives values", values.tolist(), "indices", indices.tolist(),
      "(expected an error; indices 3 and up are no place of x)")
sys.exit(1)
