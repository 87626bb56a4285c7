"""Jittor 1.3.11: jt.topk on 21 NaN values (float32) crashes the process.

jt.topk is jt.argsort and a slice; argsort calls std::sort with a comparison that is no strict
weak order once NaN is in the sequence, and std::sort runs past the sequence: a segmentation
fault in ArgsortOp::jit_run (jittor's handler reports SIGSEGV), then glibc's "double free
detected", which aborts the process (SIGABRT). The call runs in a child process, and whichever
signal ends it is printed.
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without jittor.
Run it with jittor's interpreter (jittor pins numpy below 2).
"""
import os
import signal
import subprocess
import sys

os.environ.setdefault("nvcc_path", "")  # CPU only: no CUDA toolkit looked for or downloaded
os.environ.setdefault("use_mkl", "0")
os.environ.setdefault("log_silent", "1")
import importlib.util  # noqa: E402

if importlib.util.find_spec("jittor") is None:
    sys.exit(2)  # jittor is not installed here: nothing to say
if sys.argv[1:] == ["--call"]:
    import jittor as jt  # only the child: jittor ends a parent whose child dies (its SIGCHLD handler)
    import numpy as np

    jt.flags.use_cuda = 0
    values, indices = jt.topk(jt.array(np.full(21, np.nan, dtype=np.float32)), 1, dim=0)
    print("values", values.numpy().tolist(), "indices", indices.numpy().tolist())
    sys.exit(0)
done = subprocess.run([sys.executable, __file__, "--call"], capture_output=True, text=True)
print(done.stdout, end="")
if done.returncode == 0:
    sys.exit(0)
how = (f"killed by {signal.Signals(-done.returncode).name}" if done.returncode < 0
       else f"exit code {done.returncode}")
print(f"observed: the process died ({how}) in jt.topk on 21 NaN values, k = 1",
      "(after a segfault in std::sort)" if "Segfault" in done.stdout + done.stderr else "")
sys.exit(1)
