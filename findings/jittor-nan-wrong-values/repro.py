"""Jittor 1.3.11: jt.topk with NaN in a sequence returns values that are not among the K largest.

x = [1, nan, 3, 2] (float32), k = 2: wherever NaN goes, the non-NaN values returned must be the
largest ones, 3 then 2 (or NaN and 3). Jittor returns [3, 1]; with largest=False it returns
[2, 3] where 1 and 2 are the smallest. jt.topk is jt.argsort and a slice: the sort's
comparison is no order once NaN is in the sequence.
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without jittor.
Run it with jittor's interpreter (jittor pins numpy below 2).
"""
import os
import sys

os.environ.setdefault("nvcc_path", "")  # CPU only: no CUDA toolkit looked for or downloaded
os.environ.setdefault("use_mkl", "0")
import numpy as np  # noqa: E402
try:
    import jittor as jt
except ImportError:
    sys.exit(2)  # jittor is not installed here: nothing to say
jt.flags.use_cuda = 0

x = np.array([1, np.nan, 3, 2], dtype=np.float32)
observed = []
for largest, allowed in ((True, [[3.0, 2.0], [3.0]]), (False, [[1.0, 2.0], [1.0]])):
    values, indices = jt.topk(jt.array(x), 2, dim=0, largest=largest, sorted=True)
    values = values.numpy()
    rest = values[~np.isnan(values)].tolist()
    if rest not in allowed:
        observed.append(f"largest={largest}: values {values.tolist()} indices {indices.numpy().tolist()}")
for line in observed:
    print("observed:", line, "(expected the non-NaN values to be the", "largest" if "True" in line else "smallest",
          "ones, NaN anywhere)")
sys.exit(1 if observed else print("fixed: the non-NaN values are the extreme ones"))
