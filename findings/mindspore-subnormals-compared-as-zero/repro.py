"""mindspore.ops.topk on the CPU compares a subnormal as zero once the input has more than one
slice along the axis, so a smaller value can win.

x = [[0.0, -1e-45], [0.0, 0.0]] (float32; -1e-45 is the negative subnormal -1.4e-45), k = 1 along
dim 0: column 1 is [-1.4e-45, 0.0], whose largest is 0.0 at index 1. MindSpore 2.10 returns
-1.4e-45 at index 0. The same column alone (1-D) comes back right. Its CPU thread pool's workers
run with flush-to-zero and denormals-are-zero on, and the kernel hands them one task per slice when
there is more than one. Prints `observed: ...` per wrong case and exits 1 while one is wrong, 0 once
all are right, 2 without MindSpore.
"""
import contextlib
import io
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
# A wheel built against NumPy 1.x fails the first call that takes a Python sequence (here the
# transpose ops.topk makes for a dim that is not the last) under NumPy 2, and works from then on:
# make that call once, quietly. Nothing to do with the bug.
with contextlib.redirect_stderr(io.StringIO()):
    try:
        ms.ops.transpose(ms.Tensor(np.zeros((1, 1), np.float32)), (1, 0))
    except Exception:
        pass
tiny32, tiny64 = np.float32(-1e-45), np.float64(-5e-324)  # the smallest negative subnormals
CASES = (  # (input, dim, expected values, expected indices)
    (np.array([[0.0, tiny32], [0.0, 0.0]], np.float32), 0, [[0.0, 0.0]], [[0, 1]]),
    (np.array([tiny32, 0.0], np.float32), 0, [0.0], [1]),  # the same column alone: right
    (np.array([[tiny32, 0.0], [tiny32, 0.0]], np.float32), -1, [[0.0], [0.0]], [[1], [1]]),
    (np.array([[tiny64, 0.0], [tiny64, 0.0]], np.float64), -1, [[0.0], [0.0]], [[1], [1]]),
)
print("mindspore", ms.__version__)
bad = False
for x, dim, want_values, want_indices in CASES:
    values, indices = ms.ops.topk(ms.Tensor(x), 1, dim=dim)
    got_values, got_indices = values.asnumpy().tolist(), indices.asnumpy().tolist()
    wrong = got_indices != want_indices
    mark = "observed" if wrong else "right"
    print(f"{mark}: {x.dtype} {x.tolist()} k=1 dim={dim}: values {got_values} indices {got_indices} "
          f"(expected {want_values} at {want_indices}: the subnormal is below 0)")
    bad |= wrong
sys.exit(1 if bad else 0)
