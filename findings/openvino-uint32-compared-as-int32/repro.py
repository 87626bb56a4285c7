"""OpenVINO's CPU TopK compares uint32 values as int32: values of 2**31 and above rank as negative.

x = [2147483648, 5, 4294967295, 7] (uint32), K = 2, mode max: the two largest are 4294967295 and
2147483648. OpenVINO 2026.4 on the CPU returns [7, 5]. Prints `observed: ...` and exits 1 while
it does, 0 once the two largest come back, 2 without OpenVINO.
"""
import sys

import numpy as np

try:
    import openvino as ov
    from openvino import Type
    from openvino import opset13 as ops
except ImportError:
    sys.exit(2)  # OpenVINO is not installed: nothing to say

x = np.array([2**31, 5, 2**32 - 1, 7], np.uint32)
data = ops.parameter([4], dtype=Type.u32)
topk = ops.topk(data, ops.constant(np.int64(2)), axis=0, mode="max", sort="value", index_element_type="i64")
compiled = ov.Core().compile_model(ov.Model([topk.output(0), topk.output(1)], [data]), "CPU")
result = compiled([x])
values, indices = np.asarray(result[0]), np.asarray(result[1])
print("openvino", ov.__version__)
if values.tolist() == [2**32 - 1, 2**31] and indices.tolist() == [2, 0]:
    sys.exit(print("fixed: values", values.tolist(), "indices", indices.tolist()))
print("observed: TopK(uint32 [2147483648, 5, 4294967295, 7], K=2, max) gives values", values.tolist(),
      "indices", indices.tolist(), "(expected [4294967295, 2147483648] at [2, 0])")
sys.exit(1)
