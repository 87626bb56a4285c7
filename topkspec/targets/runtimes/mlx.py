"""The `mlx` target: Apple's MLX (`mlx.core`) on its CPU device.

MLX's TopK, `mlx.core.topk(a, k, axis)`, returns the K largest values only, in no promised
order. What an MLX user calls to get the K largest (or smallest) elements together with where
they were is `mlx.core.argpartition(a, kth, axis)`, whose partition around the kth place puts
the K extreme elements on one side, and `mlx.core.take_along_axis` for their values: the
target does exactly that, as drawn. (MLX's maintainers on its order: "In general the ordering of
the topk is undefined and should not be relied on to be sorted",
https://github.com/ml-explore/mlx/issues/586.) For the K largest along an axis of size n, kth = -K
(counted from the back) and the last K places; for the K smallest, kth = K - 1 and the first K.

What MLX promises (the contract below, from its API pages): the K extreme elements, not their
order (argpartition: "The ordering of the elements within a partition in given by the indices
is undefined"; topk: "The elements will not necessarily be in sorted order"). So only a request
whose order is free is in the contract: ONNX TopK with sorted=0. A sorted request (ONNX
sorted=1, TopK-1 and TopK-10, every DirectML case) is unsupported, with that reason. MLX says
nothing of ties, NaN or K = 0: its contract leaves them unspecified. kth and the axis are places
in the array, so one out of range is refused (our reading; MLX raises ValueError). Indices are MLX's uint32 ("The uint32 array containing indices").

Types: every topkspec type is an MLX dtype. `mx.array(x)` turns a float64 array into float32,
so the input is made with its own dtype (`dtype=mx.float64`); bfloat16 crosses as its bits.
"""
from __future__ import annotations

import sys

import numpy as np

from topkspec.spec import dtypes
from topkspec.spec.contracts import own_contract
from topkspec.targets.base import Rejected, Target, first_line, selects_largest
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions

# MLX's Linux wheel needs its CPU build named; the macOS wheel carries Metal and the CPU.
NEEDS = ("the mlx package (pip install mlx)" if sys.platform == "darwin"
         else "the mlx package (pip install 'mlx[cpu]')")
TOPK_URL = "https://ml-explore.github.io/mlx/build/html/python/_autosummary/mlx.core.topk.html"
ARGPARTITION_URL = "https://ml-explore.github.io/mlx/build/html/python/_autosummary/mlx.core.argpartition.html"
UNORDERED = ("MLX promises no order (mlx.core.argpartition: 'The ordering of the elements within a partition "
             "in given by the indices is undefined'): only ONNX TopK with sorted=0 is in its contract")

CONTRACT = own_contract(
    "mlx.core.argpartition", url=ARGPARTITION_URL, title="mlx.core.argpartition (MLX API reference)",
    notes=(f"mlx.core.topk ({TOPK_URL}) returns values only: 'Returns the k largest elements from the input "
           "along a given axis. The elements will not necessarily be in sorted order.' argpartition gives the "
           "same selection with the indices, for the smallest too."),
    sorted=("never", "The ordering of the elements within a partition in given by the indices is undefined."),
    smallest=("offered", "All indices before the kth position will be of elements less or equal to the element "
                         "at the kth index and all indices after will be of elements greater or equal to the "
                         "element at the kth index."),
    indices=("returned", "The uint32 array containing indices that partition the input."),
    k_above_axis={"value": "refused", "status": "interpretation",
                  "reason": "kth is 'Element index at the kth position': K above the axis size is no such index"},
    axis_out_of_range={"value": "refused", "status": "interpretation",
                       "reason": "an axis the array does not have is no axis to partition over"},
)


def _mlx():
    import mlx.core as mx

    return mx


def to_mlx(x: np.ndarray):
    """x as an MLX array of its own dtype (bfloat16 as its bits, which numpy cannot hand over)."""
    mx = _mlx()
    name = dtypes.name_of(x.dtype)
    if name == "bfloat16":
        return mx.array(np.ascontiguousarray(x).view(np.uint16)).view(mx.bfloat16)
    return mx.array(np.ascontiguousarray(x), dtype=getattr(mx, name))


def to_numpy(a, name: str) -> np.ndarray:
    if name == "bfloat16":
        return np.array(a.view(_mlx().uint16)).view(dtypes.numpy_dtype("bfloat16"))
    return np.array(a)


class MlxTarget(Target):
    name = "mlx"
    default_profile = "onnx:11"  # the first ONNX TopK with sorted=0, the one order-free request
    index_dtype = "uint32"  # argpartition's indices
    native = True
    # kth and axis are places in the array ("Element index at the kth position", "axis to
    # partition over"): one that is not there is refused (our reading; MLX raises ValueError)
    validates = True
    contract = CONTRACT
    support_fields = ("family", "profile", "sorted", "dtype")

    def version(self) -> str:
        try:
            mx = _mlx()
        except ImportError:
            return "not installed"
        return f"mlx {mx.__version__} ({mx.default_device()})"

    def available(self):
        try:
            mx = _mlx()
        except ImportError as exc:
            return False, f"{NEEDS}: {exc}"
        if not mx.is_available(mx.cpu):
            return False, f"{NEEDS}: mx.is_available(mx.cpu) is False"
        return True, ""

    def supports(self, case):
        if case.family != "onnx" or case.sorted or case.profile in ("onnx:1", "onnx:10"):
            return UNORDERED
        if not hasattr(_mlx(), case.dtype):
            return f"MLX has no {case.dtype} dtype"
        return None

    def run(self, case, x):
        mx = _mlx()
        k, axis = int(case.k), int(case.axis)
        data = to_mlx(x)
        try:
            with mx.stream(mx.cpu):
                if selects_largest(case):  # the last k places of a partition around the kth from the back
                    order = mx.argpartition(data, kth=-k, axis=axis)
                    n = order.shape[axis]
                    chosen = mx.take(order, mx.arange(n - k, n), axis=axis)
                else:  # the first k places
                    order = mx.argpartition(data, kth=k - 1, axis=axis)
                    chosen = mx.take(order, mx.arange(0, k), axis=axis)
                values = mx.take_along_axis(data, chosen, axis=axis)
                mx.eval(values, chosen)
        except Exception as exc:  # MLX refused the call (a kth or axis out of range)
            raise Rejected(f"mlx: {type(exc).__name__}: {first_line(exc)}") from exc
        return to_numpy(values, dtypes.name_of(x.dtype)), np.array(chosen)


def _fill(target, case, _spec=None) -> dict:
    if selects_largest(case):
        return {"which": "largest", "kth": "-k", "first": "n - k", "last": "n"}
    return {"which": "smallest", "kth": "k - 1", "first": "0", "last": "k"}


def _stack(target, case, _spec=None):
    how = "kth=-k, the last k places" if selects_largest(case) else "kth=k-1, the first k places"
    return RuntimeStack("MLX", "argpartition + take_along_axis", "CPU", versions("mlx", "mlx-cpu"),
                        (f"mx.argpartition(a, kth, axis) ({how}), then mx.take_along_axis for the values; "
                         "MLX promises no order, so only sorted=0 requests run",))


register_repro_writer("mlx", ReproWriter("mlx.tmpl", needs="numpy and mlx", fill=_fill, stack=_stack,
                                         checks_index_type=False), target_class=MlxTarget)
