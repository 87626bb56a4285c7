"""The `openvino` target: OpenVINO's TopK (opset 11) compiled for the CPU device.

One compiled model and infer request per signature, with dynamic input dimensions and K as a scalar
input; a case that asks for K as a constant (Case.k_form) gets a model with K compiled in, one per K.
ONNX and DirectML semantics map onto the node's attributes: mode max/min from the
direction, sort "value", index_element_type i64, and stable=True, the attribute that asks
for tied values in ascending index order. OpenVINO refuses stable=True with sort "none",
so ONNX sorted=0 runs sorted too, a valid answer to it (rule lower.sorted). The CPU
device is asked for f32 inference precision so it computes in the model's own types
rather than lowering float32 to bf16 on hardware that has it.
"""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target, selects_largest
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts

_OV_TYPES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
}

def input_tensor(x: np.ndarray):
    """`x` as the infer request takes it. A bfloat16 array given directly is converted by
    value to float16 (losing range), so bf16 goes in as a bf16 Tensor holding x's bits."""
    if dtypes.name_of(x.dtype) != "bfloat16":
        return np.ascontiguousarray(x)
    import openvino as ov

    tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(x.shape)))
    tensor.data[...] = np.ascontiguousarray(x).view(np.float16)  # bits, not values
    return tensor


class OpenVinoTarget(Target):
    contract = runtime_contracts.onnx_importer("OpenVINO (ONNX TopK, through its ONNX frontend)")
    name = "openvino"
    default_profile = "onnx:11"  # TopK-11 semantics; OpenVINO has its own opset numbering
    index_dtype = "int64"
    native = True
    validates = True  # refuses K=0, K above the size and an out-of-range axis
    k_forms = ("input", "constant")  # K a Parameter (its own way), or a Constant in the model

    def __init__(self, device: str = "CPU"):
        self.device = device
        self._compiled: dict = {}
        self._core = None

    def version(self) -> str:
        try:
            import openvino
        except ImportError:
            return "not installed"
        return f"openvino {openvino.__version__} ({self.device})"

    def available(self):
        try:
            import openvino as ov
        except ImportError as exc:
            return False, f"the openvino package (pip install openvino): {exc}"
        devices = ov.Core().available_devices
        if self.device not in devices:
            return False, f"an OpenVINO {self.device} device: not in Core().available_devices ({devices})"
        return True, ""

    def _model(self, dtype: str, rank: int, axis: int, largest: bool, constant_k: int | None = None):
        key = (dtype, rank, axis, largest, constant_k)
        if key not in self._compiled:
            import openvino as ov
            import openvino.opset11 as ops

            if self._core is None:
                self._core = ov.Core()
            try:
                x = ops.parameter(ov.PartialShape([-1] * rank), getattr(ov.Type, _OV_TYPES[dtype]), name="X")
                if constant_k is None:
                    k = ops.parameter(ov.PartialShape([]), ov.Type.i64, name="K")
                else:
                    k = ops.constant(np.array(constant_k, dtype=np.int64))
                node = ops.topk(x, k, axis=axis, mode="max" if largest else "min",
                                sort="value", index_element_type="i64",
                                stable=True)
                inputs = [x] if constant_k is not None else [x, k]
                model = ov.Model([node.output(0), node.output(1)], inputs, "topk")
                compiled = self._core.compile_model(model, self.device, {"INFERENCE_PRECISION_HINT": "f32"})
                self._compiled[key] = (compiled, compiled.create_infer_request())
            except Exception as exc:  # an invalid axis fails while building the node
                self._compiled[key] = exc
        compiled = self._compiled[key]
        if isinstance(compiled, Exception):
            raise compiled
        return compiled

    def supports(self, case):
        # Every type the spec has is an OpenVINO type. The CPU plugin computes some in a
        # narrower one (int64 as int32, float64 as float32): wrong results, which the shipped
        # known list declares, not cases to set aside.
        if case.dtype not in _OV_TYPES:
            return f"OpenVINO has no {case.dtype} type"
        return None

    def run(self, case, x):
        constant = getattr(case, "k_form", None) == "constant"
        feeds = {"X": input_tensor(x)}  # the adapter's own
        if not constant:
            feeds["K"] = np.array(case.k, dtype=np.int64)
        try:
            compiled, request = self._model(case.dtype, case.rank, int(case.axis), selects_largest(case),
                                            int(case.k) if constant else None)
            request.infer(feeds)
            values, indices = (request.get_output_tensor(i).data.copy() for i in range(2))
        except Exception as exc:  # OpenVINO refused the model or the call
            raise Rejected(f"openvino: {type(exc).__name__}: {exc}") from exc
        if case.dtype == "bfloat16":  # a bf16 tensor's data is its 16-bit words typed float16
            values = values.view(dtypes.numpy_dtype("bfloat16"))
        return values, indices

    def close(self):
        self._compiled.clear()


def _repro_fill(target, case, _spec) -> dict:
    bf16 = case.dtype == "bfloat16"
    return {"device": getattr(target, "device", "CPU"), "ov_type": _OV_TYPES[case.dtype],
            "mode": "max" if selects_largest(case) else "min",
            "prepare": ("    x_in = ov.Tensor(ov.Type.bf16, ov.Shape(list(x.shape)))\n"
                        "    x_in.data[...] = x.view(np.float16)  # its bits: an array would convert by value"
                        if bf16 else "    x_in = x"),
            "values_out": "values.view(x.dtype)" if bf16 else "values"}


def _repro_stack(target, case, _spec=None) -> RuntimeStack:
    return RuntimeStack("OpenVINO", "TopK-11", getattr(target, "device", "CPU"), versions("openvino"),
                        ("opset11.topk with sort=value, stable=True, index_element_type=i64; "
                         "INFERENCE_PRECISION_HINT f32",))


register_repro_writer("openvino", ReproWriter("openvino.tmpl", "numpy and openvino", _repro_fill, _repro_stack),
                      target_class=OpenVinoTarget)
