"""IREE runs an ONNX TopK whose K or axis is out of range instead of refusing it:
X of shape [1, 3], K = 5 returns 3 values; K = -1 returns 2; axis = -3 runs on axis 1.
K = 0 (empty outputs) is shown but not counted: ONNX says "positive", but ONNX Runtime takes
K = 0 on purpose, so it is no bug to hold IREE to. Exits 1 while any of the three runs
(printing what came back), 0 once all are refused, 2 without IREE."""
import sys

try:
    import iree.compiler
    import iree.runtime as ireert
except ImportError:
    sys.exit(2)  # IREE is not installed: nothing to say
import numpy as np
from iree.compiler.extras import onnx_importer
from onnx import TensorProto, helper


def topk(x, k, axis):
    """ONNX TopK-11 (K a graph input) imported, compiled for llvm-cpu and run; raises when IREE refuses."""
    node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=axis, largest=1, sorted=1)
    graph = helper.make_graph(
        [node], "topk",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["a", "b"]),
         helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["c", "d"]),
         helper.make_tensor_value_info("Indices", TensorProto.INT64, ["c", "d"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    info = onnx_importer.ModelInfo(model)
    module = info.create_module(context=iree.compiler.ir.Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    vmfb = iree.compiler.compile_str(module.get_asm(), input_type="onnx", target_backends=["llvm-cpu"],
                                      extra_args=["--iree-llvmcpu-target-cpu=generic"])
    context = ireert.SystemContext(config=ireert.Config("local-task"))
    context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
    values, indices = (a.to_host() for a in context.modules.module["topk"](x, np.array([k])))
    return values, indices


x = np.array([[3, 1, 2]], np.float32)
accepted = 0
for k, axis, why in ((5, -1, "K above the axis size (3)"), (-1, -1, "K negative"),
                     (1, -3, "axis outside [-2, 1]"), (0, -1, None)):
    try:
        values, indices = topk(x, k, axis)
    except Exception as exc:  # IREE refused it: right
        print(f"K={k} axis={axis}: refused ({type(exc).__name__})")
        continue
    if why is None:  # K = 0: ONNX Runtime returns empty outputs too, by design
        print(f"K={k} axis={axis}: values {values.tolist()} (not counted: ONNX Runtime accepts K = 0 on purpose)")
        continue
    accepted += 1
    print(f"observed: K={k} axis={axis} ({why}): values {values.tolist()} indices {indices.tolist()} (expected an error)")
sys.exit(1 if accepted else 0)
