"""IREE's llvm-cpu code compares a subnormal as zero: ONNX TopK of float32 [-1.4e-45, 0.0], K=1,
gives -1.4e-45 (index 0) where 0.0 (index 1) is the largest. IREE runs CPU dispatches with
denormals flushed to zero, so the two tie and the lower index wins.
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without IREE."""
import sys

try:
    import iree.compiler
    import iree.runtime as ireert
except ImportError:
    sys.exit(2)  # IREE is not installed: nothing to say
import numpy as np
from iree.compiler.extras import onnx_importer
from onnx import TensorProto, helper

node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=1)
graph = helper.make_graph(
    [node], "topk",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2]), helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("Values", TensorProto.FLOAT, [1]), helper.make_tensor_value_info("Indices", TensorProto.INT64, [1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
info = onnx_importer.ModelInfo(model)
module = info.create_module(context=iree.compiler.ir.Context()).operation
onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
vmfb = iree.compiler.compile_str(module.get_asm(), input_type="onnx", target_backends=["llvm-cpu"],
                                  extra_args=["--iree-llvmcpu-target-cpu=generic"])
context = ireert.SystemContext(config=ireert.Config("local-task"))
context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
x = np.array([-1e-45, 0.0], np.float32)
values, indices = (a.to_host() for a in context.modules.module["topk"](x, np.array([1])))
if indices.tolist() == [1]:
    sys.exit(print("fixed: values", values.tolist(), "indices", indices.tolist()))
print("observed: TopK([-1.4e-45, 0.0], K=1) gives values", values.tolist(), "indices", indices.tolist(),
      "(expected [0.0] [1]: -1.4e-45 < 0)")
sys.exit(1)
