"""tract 0.23.9: an ONNX TopK whose axis is out of range aborts the process while the model is typed.

axis = 1 on a rank-1 input (ONNX allows [-1, 0]): core/src/model/fact.rs panics (index out of
bounds) inside into_model(), and the panic cannot unwind through tract's C API: SIGABRT.
Prints `observed: ...` and exits 1 while the bug is there, 0 once it is fixed (a TractError), 2 without tract.
"""
import pathlib
import subprocess
import sys
import tempfile

try:
    import tract
except ImportError:
    sys.exit(2)  # tract is not installed: nothing to say
from onnx import TensorProto, helper, save_model

if sys.argv[1:] == ["--call"]:
    node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=1, largest=1, sorted=1)
    graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n"]),
                                               helper.make_tensor_value_info("K", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("Values", TensorProto.FLOAT, ["k"]),
                               helper.make_tensor_value_info("Indices", TensorProto.INT64, ["k"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
    with tempfile.TemporaryDirectory() as folder:
        save_model(model, path := pathlib.Path(folder, "topk.onnx"))
        try:
            tract.onnx().load(path).into_model().into_runnable()
        except tract.TractError as error:
            print("refused:", str(error).splitlines()[0])
    sys.exit(0)
done = subprocess.run([sys.executable, __file__, "--call"], capture_output=True, text=True)
print(done.stdout, end="")
if done.returncode == 0:
    sys.exit(0)
panic = [line.strip() for line in done.stderr.splitlines() if "panicked" in line]
print(f"observed: the process died (exit code {done.returncode})", *panic[:1])
sys.exit(1)
