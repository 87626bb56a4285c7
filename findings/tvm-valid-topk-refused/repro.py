"""Apache TVM 0.27.0: valid ONNX TopK models that the Relax ONNX frontend refuses.

TopK-11 with sorted=0 ("TopK sorted must be 1 for Relax frontend"), and TopK on int16, uint16,
uint32 or uint64 input ("Unsupported input dtype", when compiling for llvm): each is in ONNX
TopK-11's type list and its attributes. One line per refusal.
Prints `observed: ...` and exits 1 while any is refused, 0 once all run, 2 without TVM.
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


def topk(x, elem, sorted_):
    node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=sorted_)
    graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", elem, ["n"])],
                              [helper.make_tensor_value_info("Values", elem, ["k"]),
                               helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])],
                              initializer=[helper.make_tensor("K", TensorProto.INT64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
    machine = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
    return [t.numpy() for t in machine["main"](tvm.runtime.tensor(x))]


refused = []
for what, dtype, elem, sorted_ in [("sorted=0", "float32", TensorProto.FLOAT, 0),
                                   ("int16", "int16", TensorProto.INT16, 1),
                                   ("uint16", "uint16", TensorProto.UINT16, 1),
                                   ("uint32", "uint32", TensorProto.UINT32, 1),
                                   ("uint64", "uint64", TensorProto.UINT64, 1)]:
    try:
        topk(np.array([3, 1, 2], dtype=dtype), elem, sorted_)
    except Exception as error:
        refused.append(f"{what}: {str(error).strip().splitlines()[-1]}")
for line in refused:
    print("observed: refused", line)
sys.exit(1 if refused else print("fixed: every model runs"))
