"""tract 0.23.9: ONNX TopK on 21 float32 values holding one NaN aborts the process.

Rust's sort detects that the comparator (partial_cmp().unwrap_or(Less)) is no total order and
panics; the panic cannot unwind through tract's C API, so the Python process is killed (SIGABRT).
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed, 2 without tract.
"""
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
try:
    import tract
except ImportError:
    sys.exit(2)  # tract is not installed: nothing to say
from onnx import TensorProto, helper, save_model

if sys.argv[1:] == ["--call"]:
    node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=-1, largest=1, sorted=1)
    graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"]),
                                               helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["k"]),
                               helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
    with tempfile.TemporaryDirectory() as folder:
        save_model(model, path := pathlib.Path(folder, "topk.onnx"))
        runnable = tract.onnx().load(path).into_model().into_runnable()
    x = np.arange(21, dtype=np.float32)
    x[5] = np.nan
    values, indices = (t.to_numpy() for t in runnable.run([x, np.array([1])]))
    print("values", values.tolist(), "indices", indices.tolist())
    sys.exit(0)
done = subprocess.run([sys.executable, __file__, "--call"], capture_output=True, text=True)
print(done.stdout, end="")
if done.returncode == 0:
    sys.exit(0)
panic = [line.strip() for line in done.stderr.splitlines() if "panicked" in line]
print(f"observed: the process died (exit code {done.returncode})", *panic[:1])
sys.exit(1)
