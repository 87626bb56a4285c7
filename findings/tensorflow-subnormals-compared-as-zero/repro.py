"""tf.math.top_k on the CPU compares a subnormal as zero, so a smaller value can win.

x = [-1e-45, 0.0] (float32; -1e-45 is the negative subnormal -1.4e-45), k = 1: the largest entry
is 0.0 at index 1. TensorFlow 2.21 on the CPU returns -1.4e-45 at index 0: its kernels run with
denormals-are-zero, so the two compare equal and the lower index wins. Prints `observed: ...` and
exits 1 while it does, 0 once 0.0 comes back, 2 without TensorFlow.
"""
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
try:
    import tensorflow as tf
except ImportError:
    sys.exit(2)  # TensorFlow is not installed: nothing to say

x = np.array([-1e-45, 0.0], np.float32)
values, indices = (t.numpy() for t in tf.math.top_k(x, k=1))
print("tensorflow", tf.__version__, "| np.argmax(x):", int(np.argmax(x)))
if indices.tolist() == [1]:
    sys.exit(print("fixed: top_k([-1.4e-45, 0.0], k=1) gives 0.0 at index 1"))
print(f"observed: top_k([-1.4e-45, 0.0], k=1) gives values {values.tolist()} indices {indices.tolist()} "
      "(expected 0.0 at index 1: -1.4e-45 < 0)")
sys.exit(1)
