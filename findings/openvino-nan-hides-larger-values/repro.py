"""OpenVINO's CPU TopK gives two answers to one input: K as a constant, or K as a runtime input.

x = [1.0, NaN, 3.0] (float32), K = 2, mode max, sort by value, the same model twice:
- call 1, K a constant (ops.constant): OpenVINO 2026.4 returns [1.0, NaN] at [0, 1], leaving out
  3.0, which is among the 2 largest wherever NaN is placed;
- call 2, K a runtime input (ops.parameter), given 2: it returns [3.0, 1.0] at [2, 0], a valid
  answer (NaN counted as the smallest).
Where NaN sorts is implementation-defined in OpenVINO's TopK specification; one input getting two
answers is not. Prints both calls, then `observed: ...`, and exits 1 while they differ, 0 once
they agree, 2 without OpenVINO.
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


def topk(k_as_input: bool):
    data = ops.parameter([3], dtype=Type.f32)
    k = ops.parameter([], dtype=Type.i64) if k_as_input else ops.constant(np.int64(2))
    node = ops.topk(data, k, axis=0, mode="max", sort="value", index_element_type="i64")
    inputs = [data, k] if k_as_input else [data]
    compiled = ov.Core().compile_model(ov.Model([node.output(0), node.output(1)], inputs), "CPU")
    result = compiled([x, np.int64(2)] if k_as_input else [x])
    return np.asarray(result[0]).tolist(), np.asarray(result[1]).tolist()


print("openvino", ov.__version__)
constant, runtime = topk(False), topk(True)
print("call 1: TopK([1, NaN, 3], K=2 as a constant, max): values", constant[0], "indices", constant[1])
print("call 2: TopK([1, NaN, 3], K=2 as a runtime input, max): values", runtime[0], "indices", runtime[1])
if constant[1] == runtime[1]:
    sys.exit(print("fixed: both calls give indices", constant[1]))
print("observed: the same input and K give two answers: indices", constant[1], "with K a constant,",
      runtime[1], "with K an input (3.0 at index 2 is among the 2 largest wherever NaN goes)")
sys.exit(1)
