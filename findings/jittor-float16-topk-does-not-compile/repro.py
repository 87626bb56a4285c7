"""Jittor 1.3.11: jt.topk on a float16 Var does not compile on the CPU.

jt.array keeps float16, and jt.topk(x, 1) on it fails: the argsort operator it calls does not
compile for float16 on the CPU (g++: "no matching function for call to
jittor::float16::float16()"), so jt.topk raises instead of returning [3] at [0].
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

x = jt.array(np.array([3, 1, 2], dtype=np.float16))
assert str(x.dtype) == "float16", x.dtype
saved = os.dup(2)  # the compiler's own output (pages of it, a traceback of jittor's asm tuner) stays out
os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
try:
    values, indices = jt.topk(x, 1, dim=0)
    values, indices = values.numpy(), indices.numpy()
except RuntimeError as error:
    os.dup2(saved, 2)
    reason = next((line.strip() for line in str(error).splitlines() if "Compile operator" in line),
                  str(error).strip().splitlines()[0])
    print("observed: jt.topk on float16 raised RuntimeError:", reason)
    sys.exit(1)
os.dup2(saved, 2)
sys.exit(print("fixed: values", values.tolist(), "indices", indices.tolist()))
