"""tinygrad Tensor.topk accepts k=0 and returns empty tensors (it checks only k > size);
ONNX TopK needs "a single positive value", and k < 0 fails only with 'invalid shrink'."""
import os
import shutil
import sys

os.environ.setdefault("DEV", "CPU")
import numpy as np
try:
    from tinygrad import Tensor
except ImportError:
    sys.exit(2)  # tinygrad is not installed: nothing to say
if os.environ["DEV"] == "CPU" and not shutil.which(os.environ.get("CC", "clang")):
    sys.exit(print("tinygrad's CPU device compiles with clang, which is not on PATH (or DEV=PYTHON)") or 2)

try:
    values, indices = Tensor(np.array([0.0], np.float32)).topk(0)
except (ValueError, RuntimeError) as exc:
    sys.exit(print("refused:", exc))
print("observed: accepted k=0:", values.numpy().tolist(), indices.numpy().tolist())
sys.exit(1)
