"""The `mindspore` target: mindspore.ops.topk in PyNative mode on the CPU.

ops.topk takes the dimension, `largest` and `sorted` directly (TopK-11's attributes), so
ONNX cases pass through as they are, negative axes included, and DirectML cases run sorted.
Its indices come back as Int32 and are widened to int64 (exactly). Every value type the
spec has is a MindSpore type; the CPU has TopK kernels for all of them but bfloat16, which
supports() finds by running a tiny TopK once per type.

What the runtime does, not the adapter: ops.topk selects the smallest K as
`-topk(-x)`, negating the input in the input's own type, and its CPU kernel picks the K
largest with std::nth_element before a stable sort of those K. The target passes
`largest` as asked and judges what comes back.

MindSpore's logging is quieted (GLOG_v=3, errors only) before it is imported. One
environment quirk is absorbed on the first call: a MindSpore wheel whose native library was
built against NumPy 1.x raises SystemError (with NumPy's "compiled using NumPy 1.x" notice)
from the first operator called with a Python sequence or scalar argument when NumPy 2 is
installed, and works from the second call on. The target makes one such call (a transpose
of a 1x1 tensor) before the first TopK and drops its error and notice, so the first case of
a run is not refused for it.
"""
from __future__ import annotations

import os

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target, selects_largest
from topkspec.repro.writers import ReproWriter, RuntimeStack, operator_label, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts

# The spec's value types and MindSpore's names for them (mindspore.<name>).
MS_TYPES = {
    "float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "float64": "float64",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
}

_state: dict = {}


def mindspore_module():
    """mindspore, imported quietly and set to PyNative mode on the CPU (once per process),
    with the NumPy-2 first call made (see the module text)."""
    if "ms" in _state:
        return _state["ms"]
    os.environ.setdefault("GLOG_v", "3")  # MindSpore's glog: errors only
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE)
    if hasattr(ms, "set_device"):  # newer releases warn that set_context(device_target=...) will go
        ms.set_device("CPU")
    else:
        ms.set_context(device_target="CPU")
    _warm_up(ms)
    _state["ms"] = ms
    return ms


def _warm_up(ms) -> None:
    """The first operator call with a Python sequence argument, whose failure under NumPy 2
    (a wheel built against NumPy 1.x) is dropped: from then on such calls work."""
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):  # NumPy writes its notice to sys.stderr
        try:
            ms.ops.transpose(ms.Tensor(np.zeros((1, 1), np.float32)), (1, 0))
        except Exception:
            pass  # SystemError from the NumPy 1.x/2 mismatch; a real fault shows up in the cases


def to_tensor(x: np.ndarray):
    """numpy array to a MindSpore tensor of the same type (bfloat16 from ml_dtypes' array, bits kept)."""
    ms = mindspore_module()
    return ms.Tensor(np.ascontiguousarray(x))


def to_numpy(tensor, dtype: str) -> np.ndarray:
    """A MindSpore tensor as numpy. asnumpy() refuses bfloat16: it goes through float32, exactly."""
    if dtype == "bfloat16":
        ms = mindspore_module()
        return tensor.astype(ms.float32).asnumpy().astype(dtypes.numpy_dtype("bfloat16"))
    return tensor.asnumpy()


def _library_clash(exc: Exception) -> str | None:
    """Why mindspore failed to load when another package's libdnnl.so.3 was loaded first (paddle's
    lacks symbols MindSpore's CPU kernels need, and the loader reuses a library by its soname),
    else None."""
    text = str(exc)
    if "undefined symbol" not in text:
        return None
    try:
        with open("/proc/self/maps") as handle:
            paths = {line.split()[-1] for line in handle if "libdnnl" in line}
    except OSError:
        return None
    foreign = sorted(path for path in paths if f"{os.sep}mindspore{os.sep}" not in path)
    if not foreign:
        return None
    return (f"mindspore in a process that has not loaded another libdnnl.so.3: {foreign[0]} was loaded first "
            f"and MindSpore's CPU kernels cannot use it ({text.strip().splitlines()[-1]}); import mindspore "
            f"before that package, or run it alone (a fuzz run loads it alone in its worker process)")


def _gist(exc: Exception) -> str:
    """The line of a MindSpore error that says what failed (its messages run to many lines)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip().strip("-")]
    for word in ("unsupported", "fail"):
        for line in lines:
            if word in line.lower() and not line.startswith("- "):
                return line
    return lines[0] if lines else ""


class MindSporeTarget(Target):
    contract = runtime_contracts.MINDSPORE
    name = "mindspore"
    default_profile = "onnx:24"  # dim, largest and sorted as TopK-11 has them; bfloat16 is a MindSpore type too
    index_dtype = "int64"
    native = True
    validates = True  # refuses K = 0, K above the size and an out-of-range dim (ValueError)
    validates_tables = ()
    support_fields = ("dtype",)  # supports() depends on the value type alone

    def __init__(self):
        self._support: dict = {}

    def version(self) -> str:
        from importlib import metadata

        try:
            return f"mindspore {metadata.version('mindspore')} (CPU, PyNative)"
        except metadata.PackageNotFoundError:
            return "not installed"

    def available(self):
        try:
            mindspore_module()
        except ImportError as exc:
            clash = _library_clash(exc)
            if clash:
                return False, clash
            return False, f"the mindspore package (pip install mindspore): {exc}"
        return True, ""

    def supports(self, case):
        """Probes each value type once with a tiny TopK: the CPU lacks a kernel for some
        (bfloat16). A type ops.topk refuses is refused in every case (Rejected: a valid
        descriptor rejected, unless declared known); making the tensor is the adapter's own code."""
        if case.dtype not in MS_TYPES:
            return f"MindSpore has no {case.dtype} type"
        if case.dtype not in self._support:
            ms = mindspore_module()
            probe = to_tensor(np.arange(3).astype(dtypes.numpy_dtype(case.dtype)))
            try:
                ms.ops.topk(probe, 1)
                self._support[case.dtype] = None
            except Exception as exc:
                self._support[case.dtype] = (f"mindspore.ops.topk on the CPU has no kernel for {case.dtype}: "
                                             f"{type(exc).__name__}: {_gist(exc)}")
        if self._support[case.dtype]:
            raise Rejected(self._support[case.dtype])
        return None

    def run(self, case, x):
        ms = mindspore_module()
        sorted_ = bool(case.sorted) if case.family == "onnx" else True
        tensor = to_tensor(x)  # the adapter's own conversion: its failure is the adapter's
        try:
            values, indices = ms.ops.topk(tensor, int(case.k), dim=int(case.axis),
                                          largest=selects_largest(case), sorted=sorted_)
            values, indices = to_numpy(values, case.dtype), indices.asnumpy()
        except Exception as exc:  # MindSpore refused the call
            raise Rejected(f"mindspore: {type(exc).__name__}: {exc}") from exc
        return values, indices.astype(np.int64)  # Int32 indices, widened exactly


# -- the repro writer -------------------------------------------------------------------------

def _fill(target, case, _spec=None) -> dict:
    bf16 = case.dtype == "bfloat16"
    return {"largest": selects_largest(case), "sorted": bool(case.sorted) if case.family == "onnx" else True,
            "values_out": ("values.astype(ms.float32).asnumpy().astype(x.dtype)  # asnumpy() refuses bfloat16"
                           if bf16 else "values.asnumpy()")}


def _stack(target, case, _spec=None):
    sorted_ = bool(case.sorted) if case.family == "onnx" else True
    details = [f"mindspore.ops.topk(x, k, dim=axis, largest={selects_largest(case)}, sorted={sorted_}) in "
               "PyNative mode, device CPU, GLOG_v=3; Int32 indices widened to int64",
               "ops.topk computes the smallest K as -topk(-x), in the input's type"]
    if case.family == "dml":
        details.append(f"the {operator_label(case)} case runs as ops.topk with sorted=True")
    return RuntimeStack("MindSpore", "mindspore.ops.topk", "CPU", versions("mindspore", "numpy"), tuple(details))


register_repro_writer("mindspore", ReproWriter("mindspore.tmpl",
                                   needs="numpy and mindspore",
                                   fill=_fill, stack=_stack),
                      target_class=MindSporeTarget)
