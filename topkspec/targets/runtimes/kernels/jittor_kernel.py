"""jittor's TopK, run by topkspec's foreign worker in jittor's own environment (numpy below 2).

Standalone: numpy and jittor only. jittor is imported CPU-only with MKL off (nvcc_path="" also
keeps it from looking for a CUDA toolkit or downloading one; use_mkl=0 from building oneDNN);
the worker's environment sets both, and JITTOR_HOME, where jittor caches its compiled core.
"""
import os

os.environ.setdefault("nvcc_path", "")
os.environ.setdefault("use_mkl", "0")
os.environ.setdefault("log_silent", "1")

import jittor as jt  # noqa: E402
import numpy as np  # noqa: E402

jt.flags.use_cuda = 0


def version():
    return f"jittor {jt.__version__} (CPU)"


def probe(dtype):
    """None when jt.topk runs on a tiny Var of `dtype`; "narrowed" when jt.array does not keep
    the type; else jittor's error, raised (a refusal)."""
    x = jt.array(np.arange(3).astype(dtype))
    if str(x.dtype) != np.dtype(dtype).name:
        return "narrowed"
    jt.topk(x, 1, dim=0)[0].numpy()
    return None


def topk(x, k, dim, largest, sorted):
    values, indices = jt.topk(jt.array(x), k, dim=dim, largest=largest, sorted=sorted)
    return values.numpy(), indices.numpy()
