"""tinygrad Tensor.topk / Tensor.sort return -0.0 for an input +0.0 (and +0.0 for -0.0).

The bitonic network compare-exchanges with maximum/minimum, which return the first operand when
the two compare equal, so when -0.0 meets +0.0 both outputs become the same zero; the indices
(found afterwards by IEEE equality) are [0, 1], so values[1] is not x[indices[1]].
"""
import os
import shutil
import sys

os.environ.setdefault("DEV", "CPU")  # same result with DEV=PYTHON
import numpy as np
try:
    from tinygrad import Tensor
except ImportError:
    sys.exit(2)  # tinygrad is not installed: nothing to say
if os.environ["DEV"] == "CPU" and not shutil.which(os.environ.get("CC", "clang")):
    sys.exit(print("tinygrad's CPU device compiles with clang, which is not on PATH (or DEV=PYTHON)") or 2)

x = np.array([-0.0, 0.0], dtype=np.float32)
values, indices = (t.numpy() for t in Tensor(x).topk(2))
same = np.signbit(values).tolist() == np.signbit(x[indices]).tolist()
print("observed:" if not same else "fixed:", "values", values.tolist(), "indices", indices.tolist(),
      "x[indices]", x[indices].tolist())
sys.exit(0 if same else 1)
