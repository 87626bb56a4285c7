"""IREE sorts unsigned integers as signed: ONNX TopK (largest) of uint8 [200, 1, 3], K=1, gives 3.
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
    [helper.make_tensor_value_info("X", TensorProto.UINT8, [3]), helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("Values", TensorProto.UINT8, [1]), helper.make_tensor_value_info("Indices", TensorProto.INT64, [1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
info = onnx_importer.ModelInfo(model)
module = info.create_module(context=iree.compiler.ir.Context()).operation
onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
vmfb = iree.compiler.compile_str(module.get_asm(), input_type="onnx", target_backends=["llvm-cpu"],
                                  extra_args=["--iree-llvmcpu-target-cpu=generic"])
context = ireert.SystemContext(config=ireert.Config("local-task"))
context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
values, indices = (a.to_host() for a in context.modules.module["topk"](np.array([200, 1, 3], np.uint8), np.array([1])))
if values.view(np.uint8).tolist() == [200]:
    sys.exit(print("fixed: values", values.view(np.uint8).tolist(), "indices", indices.tolist()))
print("observed: values", values.view(np.uint8).tolist(), "indices", indices.tolist(), "(expected [200] [0])")
sys.exit(1)
