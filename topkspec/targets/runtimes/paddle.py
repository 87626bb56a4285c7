"""The `paddle` target: PaddlePaddle's paddle.topk on the CPU.

paddle.topk takes the axis (negative ones too), `largest` and `sorted` directly, so ONNX
cases pass through and DirectML cases run sorted. It returns int64 indices and raises
ValueError for K = 0, K above the axis size and an axis out of range.

Types: Paddle's CPU topk kernel exists for float16, float32, float64, int32 and int64 (its
documentation lists float32, float64, int32 and int64). int8, int16, uint8, bfloat16, uint32
and uint64 are Paddle types without a topk kernel: each is probed once and refused with
`Rejected` (a finding unless a known list declares it). Paddle has no 16-bit unsigned
integer type at all: `paddle.uint16` is another name for `paddle.bfloat16`, and
`paddle.to_tensor` reads a numpy uint16 array as bfloat16 bits, so uint16 is unsupported.
Arrays travel by their bits: bfloat16 as int16 viewed as bfloat16, uint32 and uint64 as the
signed type of their width viewed as unsigned (paddle.to_tensor refuses those numpy types).

Paddle prints a ccache warning on import and logs through glog: both are silenced. In a
process that has already loaded TensorFlow, paddle is imported with RTLD_DEEPBIND (loaded the
ordinary way after TensorFlow, libpaddle crashes the process).
"""
from __future__ import annotations

import os

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target, first_line, selects_largest
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts

# paddle's Tensor.view(dtype) target for the types that travel as another type's bits.
_VIEWED = {"bfloat16": ("int16", "bfloat16"), "uint32": ("int32", "uint32"), "uint64": ("int64", "uint64")}
NO_UINT16 = ("Paddle has no 16-bit unsigned integer type: paddle.uint16 is another name for paddle.bfloat16 "
             "(paddle.to_tensor reads numpy uint16 as bfloat16 bits)")

_paddle = None


def import_paddle():
    """paddle, imported quietly (no ccache warning, no glog lines) and set to the CPU.

    Loading libpaddle.so into a process that has already loaded TensorFlow crashes it
    (SIGSEGV in paddle/base/core.py: TensorFlow loads its libraries with RTLD_GLOBAL, and
    libpaddle then binds to their symbols). Then it is loaded with RTLD_DEEPBIND, which makes
    it use its own symbols first; otherwise with the default flags."""
    global _paddle
    if _paddle is None:
        import sys
        import warnings

        os.environ.setdefault("GLOG_minloglevel", "2")
        flags = sys.getdlopenflags() if hasattr(sys, "getdlopenflags") else None
        # any tensorflow module: a TensorFlow import that failed half-way has loaded its libraries too
        tensorflow_loaded = any(name.split(".")[0] == "tensorflow" for name in sys.modules)
        deep = getattr(os, "RTLD_DEEPBIND", 0) if tensorflow_loaded else 0
        try:
            if deep and flags is not None:
                sys.setdlopenflags(flags | deep)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import paddle
        finally:
            if deep and flags is not None:
                sys.setdlopenflags(flags)
        paddle.set_device("cpu")
        _paddle = paddle
    return _paddle


def to_paddle(x: np.ndarray):
    """A numpy array as a CPU tensor of the same type and bits."""
    paddle = import_paddle()
    x = np.ascontiguousarray(x)
    name = dtypes.name_of(x.dtype)
    if name in _VIEWED:
        carrier, kind = _VIEWED[name]
        return paddle.to_tensor(x.view(carrier)).view(getattr(paddle, kind))
    return paddle.to_tensor(x)


class PaddleTarget(Target):
    contract = runtime_contracts.PADDLE
    name = "paddle"
    default_profile = "onnx:24"  # axis, largest and sorted as TopK-11/24; Paddle has a bfloat16 type
    index_dtype = "int64"
    native = True
    validates = True  # refuses K = 0, K above the axis size and an out-of-range axis
    validates_tables = ()
    support_fields = ("dtype",)

    def __init__(self):
        self._support: dict = {}

    def version(self) -> str:
        try:
            from importlib import metadata

            return f"paddlepaddle {metadata.version('paddlepaddle')} (cpu)"
        except Exception:
            return "not installed"

    def available(self):
        try:
            import_paddle()
        except ImportError as exc:
            return False, f"the paddlepaddle package (pip install paddlepaddle): {exc}"
        return True, ""

    def supports(self, case):
        """uint16 cannot be expressed (no such Paddle type). Every other type is probed once
        with a tiny TopK: a type paddle.topk has no CPU kernel for is refused in every case
        (Rejected). The conversion is the adapter's own code, outside the try."""
        if case.dtype == "uint16":
            return NO_UINT16
        if case.dtype not in self._support:
            paddle = import_paddle()
            probe = to_paddle(np.arange(3).astype(dtypes.numpy_dtype(case.dtype)))
            try:
                paddle.topk(probe, 1, axis=0)
                self._support[case.dtype] = None
            except Exception as exc:
                first = first_line(exc, empty="")
                self._support[case.dtype] = (f"paddle.topk on the CPU has no kernel for {case.dtype}: "
                                             f"{type(exc).__name__}: {first}")
        if self._support[case.dtype]:
            raise Rejected(self._support[case.dtype])
        return None

    def run(self, case, x):
        paddle = import_paddle()
        sorted_ = bool(case.sorted) if case.family == "onnx" else True
        tensor = to_paddle(x)  # the adapter's own conversion: its failure is the adapter's
        try:
            values, indices = paddle.topk(tensor, int(case.k), axis=int(case.axis),
                                          largest=selects_largest(case), sorted=sorted_)
            values, indices = values.numpy(), indices.numpy()
        except Exception as exc:  # Paddle refused the call
            raise Rejected(f"paddle: {type(exc).__name__}: {exc}") from exc
        return to_numpy_values(values, case.dtype), indices


def to_numpy_values(values: np.ndarray, dtype: str) -> np.ndarray:
    """bfloat16 values come back from Tensor.numpy() as their uint16 bits: view them as
    bfloat16. Any other type is returned as Paddle gave it, so a wrong type shows."""
    if dtype == "bfloat16" and values.dtype == np.uint16:
        return values.view(dtypes.numpy_dtype("bfloat16"))
    return values


# -- the repro writer ----------------------------------------------------------------------------

def _fill(target, case, _spec=None) -> dict:
    if case.dtype in _VIEWED:
        carrier, kind = _VIEWED[case.dtype]
        to = f"paddle.to_tensor(x.view(np.{carrier})).view(paddle.{kind})  # its bits"
    else:
        to = "paddle.to_tensor(x)"
    # bfloat16 comes back as its uint16 bits
    from_paddle = "values.numpy().view(x.dtype)" if case.dtype == "bfloat16" else "values.numpy()"
    return {"to_paddle": to, "from_paddle": from_paddle, "largest": selects_largest(case),
            "sorted": bool(case.sorted) if case.family == "onnx" else True}


def _stack(target, case, _spec=None):
    how = "paddle.topk(tensor, k, axis=..., largest=..., sorted=...) with K as a Python int, in dynamic mode"
    if case.dtype in _VIEWED:
        how += f"; the {case.dtype} input made from the bits of a numpy {_VIEWED[case.dtype][0]} array"
    return RuntimeStack("PaddlePaddle", "paddle.topk", "CPU", versions("paddlepaddle"), (how,))


register_repro_writer("paddle", ReproWriter("paddle.tmpl",
                                   needs="numpy and paddlepaddle",
                                   fill=_fill, stack=_stack),
                      target_class=PaddleTarget)
