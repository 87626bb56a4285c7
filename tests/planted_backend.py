"""A runtime behind ONNX's Backend API (onnx.backend.base), as a runtime team ships one: a
Backend subclass whose prepare() checks the model as ONNX's checker does and whose BackendRep
runs TopK in numpy. Right as it stands; the environment variable PLANTED_BACKEND_BUG plants a
bug, read at every call, so a repro in a fresh process sees what the run saw:

- `ties`: the largest K come out with tied values in reverse index order (a descending sort
  made by reversing an ascending stable one);
- `after-float16`: right until the process has run a float16 model, the `ties` bug after it
  (state kept by the runtime, as a kernel that sets the FTZ/DAZ flags keeps it).

Named as `onnx-backend:tests/planted_backend.py` (its one Backend subclass) or with
`:PlantedBackend`."""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnx.numpy_helper
from onnx.backend.base import Backend, BackendRep

__version__ = "0.3"
BUG_ENV = "PLANTED_BACKEND_BUG"
_RAN_FLOAT16 = False  # set once the process ran a float16 model


def _ties_reversed() -> bool:
    bug = os.environ.get(BUG_ENV, "")
    return bug == "ties" or (bug == "after-float16" and _RAN_FLOAT16)


def _topk(x, k: int, axis: int, largest: bool):
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for rank {x.ndim}")
    if not 1 <= k <= x.shape[axis]:
        raise ValueError(f"k = {k} is out of range for an axis of {x.shape[axis]}")
    key = x.astype(np.float32) if x.dtype.name == "bfloat16" else x  # numpy sorts bfloat16 NaN unordered
    if largest and _ties_reversed():
        order = np.flip(np.argsort(key, axis=axis, kind="stable"), axis)
    elif largest:  # descending, ties in index order: sort the reversed axis and read it backwards
        n = x.shape[axis]
        order = n - 1 - np.flip(np.argsort(np.flip(key, axis), axis=axis, kind="stable"), axis)
    else:
        order = np.argsort(key, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)


class PlantedRep(BackendRep):
    def __init__(self, model):
        node = model.graph.node[0]
        self.attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        self.float16 = model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
        constants = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
        self.k = constants.get(node.input[1]) if len(node.input) > 1 else None  # K compiled in, or None

    def run(self, inputs, **kwargs):
        global _RAN_FLOAT16
        x = np.asarray(inputs[0])
        if "k" in self.attributes:  # TopK-1: K is an attribute
            k = int(self.attributes["k"])
        else:  # an initializer, or the second graph input
            k = int(np.asarray(self.k if self.k is not None else inputs[1]).reshape(-1)[0])
        result = _topk(x, k, int(self.attributes.get("axis", -1)), bool(self.attributes.get("largest", 1)))
        _RAN_FLOAT16 = _RAN_FLOAT16 or self.float16
        return result


class PlantedBackend(Backend):
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        onnx.checker.check_model(model, full_check=True)  # refuses what ONNX's text calls invalid
        if model.graph.node[0].op_type != "TopK":
            raise NotImplementedError(f"only TopK, not {model.graph.node[0].op_type}")
        return PlantedRep(model)

    @classmethod
    def supports_device(cls, device):
        return device == "CPU"
