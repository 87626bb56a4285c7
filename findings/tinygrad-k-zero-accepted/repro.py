"""tinygrad Tensor.topk accepts k=0 and returns empty tensors (it checks only k > size);
ONNX TopK needs "a single positive value", and k < 0 fails only with 'invalid shrink'."""
import os
import sys

os.environ.setdefault("DEV", "CPU")
import numpy as np
try:
    from tinygrad import Tensor
except ImportError:
    sys.exit(2)  # tinygrad is not installed: nothing to say

try:
    values, indices = Tensor(np.array([0.0], np.float32)).topk(0)
except (ValueError, RuntimeError) as exc:
    print("refused:", exc)
    sys.exit(0)
print("accepted k=0:", values.numpy(), indices.numpy())
sys.exit(1)
