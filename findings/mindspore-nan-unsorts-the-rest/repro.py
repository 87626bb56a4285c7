"""With NaN in the input, mindspore.ops.topk (CPU) returns the other values out of order: the kernel's
comparator (a > b) is no strict weak order once NaN is present. Wherever NaN is placed, the
non-NaN values should come back largest first. Prints `observed: ...` and exits 1 while the bug is there."""
import os
import sys

os.environ.setdefault("GLOG_v", "3")
import numpy as np
try:
    import mindspore as ms
except ImportError:
    sys.exit(2)  # MindSpore is not installed: nothing to say

ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")
x = np.array([1.0, np.nan, 2.0], np.float32)
values, indices = ms.ops.topk(ms.Tensor(x), 3)
values = values.asnumpy()
finite = values[~np.isnan(values)].tolist()
if finite == [2.0, 1.0]:
    sys.exit(print(f"fixed: {x.tolist()} k=3: {values.tolist()} at {indices.asnumpy().tolist()}"))
print(f"observed: {x.tolist()} k=3: values {values.tolist()} at {indices.asnumpy().tolist()}; "
      f"non-NaN values {finite}, expected [2.0, 1.0] (sorted, descending)")
sys.exit(1)
