"""ONNX Runtime's CPU execution provider has no TopK kernel for uint16 or uint32.

ONNX TopK-11 and TopK-24 list tensor(uint16) and tensor(uint32) among T; a TopK model of either
type fails to load on the CPU provider with NOT_IMPLEMENTED, where int8, int16, uint8, int32 and
int64 load and run. Prints `observed: ...` for each refused type and exits 1 while either is
refused, 0 once both load and give the K largest, 2 without ONNX Runtime.
"""
import sys

import numpy as np

try:
    import onnxruntime as ort
    from onnx import TensorProto, helper
except ImportError:
    sys.exit(2)  # ONNX Runtime or onnx is not installed: nothing to say

x = {"uint16": np.array([1, 60000, 7], np.uint16), "uint32": np.array([1, 4000000000, 7], np.uint32)}
elem = {"uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32}
print("onnxruntime", ort.__version__)
wrong = False
for opset in (11, 24):
    for name, data in x.items():
        graph = helper.make_graph(
            [helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=-1, largest=1, sorted=1)], "topk",
            [helper.make_tensor_value_info("X", elem[name], [3]), helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
            [helper.make_tensor_value_info("V", elem[name], [2]), helper.make_tensor_value_info("I", TensorProto.INT64, [2])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8 if opset < 21 else 10
        try:
            session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception as exc:  # NOT_IMPLEMENTED: no kernel registered for the type
            wrong = True
            print(f"observed: TopK-{opset} {name}[3] K=2 is refused: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            continue
        values, indices = session.run(None, {"X": data, "K": np.array([2], np.int64)})
        good = values.tolist() == sorted(data.tolist(), reverse=True)[:2] and indices.tolist() == [1, 2]
        wrong |= not good
        print(f"{'fixed' if good else 'observed'}: TopK-{opset} {name}: values {values.tolist()} indices {indices.tolist()}")
sys.exit(1 if wrong else 0)
