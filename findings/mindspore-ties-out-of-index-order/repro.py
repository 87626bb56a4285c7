"""mindspore.ops.TopK's documentation: "If the two compared elements are the same, the one with the
smaller index value is returned first." On the CPU, with K at most half the axis, ties come back in
another order (std::nth_element picks the K). Prints `observed: ...` per wrong case and exits 1 while the bug is there."""
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
bad = False
for x, k, want in ((np.zeros(4, np.float32), 1, [0]),
                   (np.zeros(6, np.float32), 3, [0, 1, 2]),
                   (np.array([1, 2, 2, 1, 2, 1], np.float32), 3, [1, 2, 4])):
    _, indices = ms.ops.TopK(sorted=True)(ms.Tensor(x), k)
    got = indices.asnumpy().tolist()
    print(f"{'observed' if got != want else 'fixed'}: {x.tolist()} k={k}: expected indices {want}, got {got}")
    bad |= got != want
sys.exit(1 if bad else 0)
