"""OpenVINO's CPU TopK, with NaN in the axis, leaves out a larger number and keeps a smaller one.

x = [1.0, NaN, 3.0], K = 2, mode max: whatever NaN's place, 3.0 is among the 2 largest (NaN
largest: [NaN, 3]; NaN smallest: [3, 1]). OpenVINO 2026.4 on the CPU returns [1.0, NaN]. Prints
`observed: ...` and exits 1 while it does, 0 once 3.0 is returned, 2 without OpenVINO.
"""
import sys

import numpy as np

try:
    import openvino as ov
    from openvino import Type
    from openvino import opset13 as ops
except ImportError:
    sys.exit(2)  # OpenVINO is not installed: nothing to say

x = np.array([1.0, np.nan, 3.0], np.float32)
data = ops.parameter([3], dtype=Type.f32)
topk = ops.topk(data, ops.constant(np.int64(2)), axis=0, mode="max", sort="value", index_element_type="i64")
compiled = ov.Core().compile_model(ov.Model([topk.output(0), topk.output(1)], [data]), "CPU")
result = compiled([x])
values, indices = np.asarray(result[0]), np.asarray(result[1])
print("openvino", ov.__version__)
if 3.0 in values.tolist():
    sys.exit(print("fixed: values", values.tolist(), "indices", indices.tolist()))
print("observed: TopK([1, NaN, 3], K=2, max) gives values", values.tolist(), "indices", indices.tolist(),
      "(3.0 at index 2 is among the 2 largest wherever NaN goes)")
sys.exit(1)
