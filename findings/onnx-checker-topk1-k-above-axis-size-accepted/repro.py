"""TopK-1 with the attribute k above the axis size passes onnx.checker.check_model(full_check=True).

Exits 1 while the checker accepts the model (printing the inferred output shape), 0 once it
refuses it, 2 when onnx is not installed.
"""
import sys

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    sys.exit(2)

AXIS_SIZE, K = 3, 5
node = helper.make_node("TopK", ["X"], ["Values", "Indices"], axis=0, k=K)
graph = helper.make_graph(
    [node], "topk",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [AXIS_SIZE])],
    [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["n"]),
     helper.make_tensor_value_info("Indices", TensorProto.INT64, ["n"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)], ir_version=3)

try:
    onnx.checker.check_model(model, full_check=True)
except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
    print(f"onnx {onnx.__version__}: refused, as it should be: {str(exc).splitlines()[0]}")
    sys.exit(0)
inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
dims = [[d.dim_value if d.HasField("dim_value") else d.dim_param for d in out.type.tensor_type.shape.dim]
        for out in inferred.graph.output]
print(f"observed: onnx {onnx.__version__}: check_model(full_check=True) accepted TopK-1 with k={K} on an axis of "
      f"{AXIS_SIZE} elements; inferred output shapes {dims} (expected a refusal)")
sys.exit(1)
