"""ONNX Runtime's DirectML execution provider: TopK-11 on [1.0, NaN, 0.5], K = 1, largest,
returns 0.5 (the 1.0 before the NaN is lost). Runs as a Windows user runs it: onnxruntime-directml,
providers=["DmlExecutionProvider"], CPU fallback off so the node runs on DirectML.

Exits 1 while the bug is there, 0 once it is fixed, 2 when DmlExecutionProvider cannot run here
(`pip install onnxruntime-directml onnx numpy` on Windows). On Linux the same onnxruntime.dll runs
under Wine: `topkspec directml setup`, then `topkspec directml layers` (rows "NaN: ...").
"""
import sys

import numpy as np
from onnx import TensorProto, helper

try:
    import onnxruntime as ort
except ImportError as exc:
    sys.exit(print(f"onnxruntime does not import: {exc}") or 2)
if "DmlExecutionProvider" not in ort.get_available_providers():
    sys.exit(print(f"no DmlExecutionProvider in {ort.get_available_providers()}") or 2)

node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=0, largest=1, sorted=1)
graph = helper.make_graph(
    [node], "topk",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"]),
     helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["k"]),
     helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
options = ort.SessionOptions()
options.enable_mem_pattern = False
options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
session = ort.InferenceSession(model.SerializeToString(), options, providers=["DmlExecutionProvider"])

failed = False
for x in ([1.0, np.nan, 0.5], [2.0, np.nan, 1.0]):
    x = np.array(x, np.float32)
    values, indices = session.run(None, {"X": x, "K": np.array([1], np.int64)})
    print(f"{x.tolist()}, K = 1: values {values.tolist()} indices {indices.tolist()}")
    # Where NaN sorts is unspecified; a non-NaN value returned must be the largest non-NaN one.
    if not np.isnan(values[0]) and values[0] != np.nanmax(x):
        print(f"  wrong: {values[0]} returned, {np.nanmax(x)} is larger")
        failed = True
sys.exit(1 if failed else 0)
