"""Apache TVM 0.27.0: ONNX TopK on int16, uint16, uint32 or uint64 input does not compile.

ONNX TopK-11 lists every numeric type in T. x = [3, 1, 2], K = 1: the Relax ONNX frontend
imports each model, and compiling it for llvm fails with "Unsupported input dtype" (an internal
error of the sort TopK lowers to); int8, int32, int64, uint8 and the float types compile and
run. One line per type that fails.
Prints `observed: ...` and exits 1 while any fails, 0 once all run, 2 without TVM.
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


def topk(x, elem):
    node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=1)
    graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", elem, ["n"])],
                              [helper.make_tensor_value_info("Values", elem, ["k"]),
                               helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])],
                              initializer=[helper.make_tensor("K", TensorProto.INT64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
    machine = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
    return [t.numpy() for t in machine["main"](tvm.runtime.tensor(x))]


failed = []
for dtype, elem in [("int16", TensorProto.INT16), ("uint16", TensorProto.UINT16),
                    ("uint32", TensorProto.UINT32), ("uint64", TensorProto.UINT64)]:
    try:
        topk(np.array([3, 1, 2], dtype=dtype), elem)
    except Exception as error:
        failed.append(f"{dtype}: {str(error).strip().splitlines()[-1]}")
for line in failed:
    print("observed: does not compile:", line)
sys.exit(1 if failed else print("fixed: every type compiles and runs"))
