"""tf.math.top_k with k=1 and a NaN anywhere but in front returns element 0.

x = [1.0, 2.0, NaN], k=1: the answer is NaN (index 2) or the largest number, 2.0 (index 1),
whatever the NaN policy; TensorFlow 2.21 on the CPU returns 1.0 at index 0.
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without TensorFlow.
"""
import sys

import numpy as np

try:
    import tensorflow as tf
except ImportError:
    sys.exit(2)  # TensorFlow is not installed: nothing to say

x = np.array([1.0, 2.0, np.nan], dtype=np.float32)
values, indices = tf.math.top_k(x, k=1)
print("k=2:", *(t.numpy() for t in tf.math.top_k(x, k=2)))  # the largest number is found with k=2
if int(indices.numpy()[0]) in (1, 2):
    sys.exit(print("fixed: k=1:", values.numpy(), indices.numpy()))
print("observed: k=1: values", values.numpy().tolist(), "indices", indices.numpy().tolist(),
      "(expected NaN at 2 or 2.0 at 1)")
sys.exit(1)
