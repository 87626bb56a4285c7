"""Jittor 1.3.11: jt.topk with k above the size of the dimension returns fewer than k elements.

x = [3, 1, 2] (float32), k = 5: jt.topk returns the three elements it has ([3, 2, 1] at
[0, 2, 1]) instead of an error: jt.topk is jt.argsort and a slice [0:k], which a short
dimension silently cuts. torch.topk, whose signature jt.topk follows, raises for it.
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without jittor.
Run it with jittor's interpreter (jittor pins numpy below 2).
"""
import os
import sys

os.environ.setdefault("nvcc_path", "")  # CPU only: no CUDA toolkit looked for or downloaded
os.environ.setdefault("use_mkl", "0")
os.environ.setdefault("log_silent", "1")
import numpy as np  # noqa: E402
try:
    import jittor as jt
except ImportError:
    sys.exit(2)  # jittor is not installed here: nothing to say
jt.flags.use_cuda = 0

try:
    values, indices = jt.topk(jt.array(np.array([3, 1, 2], dtype=np.float32)), 5, dim=0)
    values, indices = values.numpy(), indices.numpy()
except Exception as error:
    sys.exit(print("fixed: refused:", str(error).strip().splitlines()[0]))
print("observed: k = 5 on 3 elements gives values", values.tolist(), "indices", indices.tolist(),
      "(expected an error: there are no 5 elements)")
sys.exit(1)
