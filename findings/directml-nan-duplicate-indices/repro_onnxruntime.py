"""ONNX Runtime's DirectML execution provider: TopK-11 on 257 zeros with a NaN at index 1,
K = 256, largest, returns indices 80, 81, 144, 145, 208 and 209 twice each. Runs as a Windows user
runs it: onnxruntime-directml, providers=["DmlExecutionProvider"], CPU fallback off.

Exits 1 while the bug is there, 0 once it is fixed, 2 when DmlExecutionProvider cannot run here
(`pip install onnxruntime-directml onnx numpy` on Windows). On Linux the same onnxruntime.dll runs
under Wine: `topkspec directml setup`, then `topkspec directml layers` (row "NaN: 257 zeros ...").
"""
import collections
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

x = np.zeros(257, np.float32)
x[1] = np.nan
values, indices = session.run(None, {"X": x, "K": np.array([256], np.int64)})
twice = sorted(i for i, count in collections.Counter(indices.tolist()).items() if count > 1)
print(f"257 zeros, NaN at index 1, K = 256: indices returned more than once: {twice or 'none'}")
sys.exit(1 if twice else 0)
