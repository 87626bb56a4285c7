"""mindspore.ops.topk(largest=False) computes -topk(-x) in the input's own type: the signed
minimum and unsigned values wrap, so the smallest K come back wrong. Prints `observed: ...` per wrong case and exits 1 while the bug is there."""
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
for x, k, want in ((np.array([-128, 127, 0, -128], np.int8), 2, [-128, -128]),
                   (np.array([-32768, 32767], np.int16), 1, [-32768]),
                   (np.array([-2147483648, 2147483647], np.int32), 1, [-2147483648]),
                   (np.array([7, 0, 3], np.uint32), 1, [0])):
    values, indices = ms.ops.topk(ms.Tensor(x), k, largest=False)
    got = values.asnumpy().tolist()
    mark = "observed" if got != want else "fixed"
    print(f"{mark}: {x.dtype} {x.tolist()} k={k} smallest: expected {want}, got {got} at {indices.asnumpy().tolist()}")
    bad |= got != want
sys.exit(1 if bad else 0)
