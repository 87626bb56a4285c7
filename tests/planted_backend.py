"""A runtime behind ONNX's Backend API (onnx.backend.base), as a runtime team ships one: a
Backend subclass whose prepare() checks the model as ONNX's checker does and whose BackendRep
runs TopK in numpy, the other nodes of a graph as ONNX's reference evaluator does. Right as it
stands; the environment variable PLANTED_BACKEND_BUG plants a bug, read at every call (`k-from-shape`
when the model is prepared), so a repro in a fresh process sees what the run saw:

- `ties`: the largest K come out with tied values in reverse index order (a descending sort
  made by reversing an ascending stable one);
- `after-float16`: right until the process has run a float16 model, the `ties` bug after it
  (state kept by the runtime, as a kernel that sets the FTZ/DAZ flags keeps it);
- `k-from-shape`: a K worked out from the input's shape (Shape -> Gather or Slice -> Sub or
  Min) is taken as the dimension the shape gives, what follows it dropped.

Named as `onnx-backend:tests/planted_backend.py` (its one Backend subclass) or with
`:PlantedBackend`."""
from __future__ import annotations

import os

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

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


def _k_read_off_the_shape(model) -> None:
    """The `k-from-shape` bug: where TopK's K is worked out from a dimension that Shape gives
    (through Gather or Slice), take that dimension itself as K, dropping what follows it (a
    folding pass that stops at the first shape value)."""
    made = {out: node for node in model.graph.node for out in node.output}
    topk = next(node for node in model.graph.node if node.op_type == "TopK")
    if len(topk.input) < 2:
        return
    node = made.get(topk.input[1])
    while node is not None and node.op_type not in ("Gather", "Slice"):
        node = made.get(node.input[0])
    if node is not None and made.get(node.input[0]) is not None and made[node.input[0]].op_type == "Shape":
        topk.input[1] = node.output[0]


class TopK(OpRun):
    """TopK as this runtime computes it (the evaluator runs a node by the class named as its op)."""
    op_domain = ""

    def _run(self, x, k_input=None, axis=-1, largest=1, sorted=1, k=None):  # noqa: A002
        global _RAN_FLOAT16
        k = int(k) if k_input is None else int(np.asarray(k_input).reshape(-1)[0])  # TopK-1: the attribute
        result = _topk(x, k, int(-1 if axis is None else axis), bool(1 if largest is None else largest))
        _RAN_FLOAT16 = _RAN_FLOAT16 or x.dtype == np.float16
        return result


class PlantedRep(BackendRep):
    def __init__(self, model):
        self.evaluator = ReferenceEvaluator(model, new_ops=[TopK])
        self.names = [i.name for i in model.graph.input
                      if i.name not in {t.name for t in model.graph.initializer}]

    def run(self, inputs, **kwargs):
        return tuple(self.evaluator.run(None, dict(zip(self.names, (np.asarray(i) for i in inputs)))))


class PlantedBackend(Backend):
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        onnx.checker.check_model(model, full_check=True)  # refuses what ONNX's text calls invalid
        if not any(node.op_type == "TopK" for node in model.graph.node):
            raise NotImplementedError("no TopK in the model")
        if os.environ.get(BUG_ENV, "") == "k-from-shape":
            model = onnx.ModelProto.FromString(model.SerializeToString())
            _k_read_off_the_shape(model)
        return PlantedRep(model)

    @classmethod
    def supports_device(cls, device):
        return device == "CPU"
