"""The `keras-numpy` target: Keras 3's own keras.ops.top_k on its numpy backend.

Keras picks its backend once, when it is first imported: the adapter sets
KERAS_BACKEND=numpy just before that import (and puts the variable back as it was, so the
process is otherwise untouched), and checks keras.backend.backend() == "numpy". The target runs
in a worker process of its own, where the adapter imports keras first. In a process that had
already imported keras with another backend (importing tensorflow does that: a listing, a test
session), keras.ops is bound to that backend; the adapter then calls the very functions keras.ops
dispatches to under the numpy backend (keras.src.backend.numpy's math.top_k and
numpy.moveaxis) directly, and version() says so.

keras.ops.top_k(x, k, sorted=True) works on the last axis and selects the largest only. With
a numpy array it calls the numpy backend's top_k directly (keras/src/backend/numpy/math.py),
which is Keras's own TopK for that backend: with sorted=True np.argsort of the whole axis,
reversed, cut to the first k; with sorted=False np.argpartition(x, -k) and the last k. It keeps
the value type (bfloat16 as ml_dtypes' numpy type) and returns int64 (intp) indices. The axis is
moved with keras.ops.moveaxis (which refuses an axis out of range) and back. ONNX sorted=0
passes through as sorted=False; DirectML cases run sorted.

The smallest K is the largest K of an exact order-reversing key, computed with numpy by the
adapter (as the jax target does), with the values then gathered from the input by the indices
Keras returns, so they are the input's own bits. Negating is not such a key: it overflows the
minimum of a signed type, wraps unsigned types, and turns the tie -0.0 == +0.0 into two keys. So:
- integers: bitwise not (~x == -x - 1 for signed, max - x for unsigned), same type;
- floats (float16, bfloat16, float32, float64): the bits as a signed integer of the same
  width, made monotonic in the value, with both zeros mapped to 0 (they stay tied) and every
  NaN to the integer maximum, then bitwise not; top_k then runs on that integer type.
So the smallest form of a float type exercises Keras's top_k on the integer type of its width,
and NaN comes last in it, as the reference has it. Every value type has an exact key: no case
is unsupported.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, selects_largest
from topkspec.targets.order_key import LargestOnlyTarget, key_source
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts

BACKEND = "numpy"


def _keras():
    """keras, imported on first use with the numpy backend chosen just before the import (the
    variable is put back afterwards). When keras was already imported in this process it is
    returned as it is, bound to whichever backend it was imported with (see _ops)."""
    if "keras" in sys.modules:
        return sys.modules["keras"]
    before = os.environ.get("KERAS_BACKEND")
    os.environ["KERAS_BACKEND"] = BACKEND
    try:
        import keras
    finally:
        if before is None:
            os.environ.pop("KERAS_BACKEND", None)
        else:
            os.environ["KERAS_BACKEND"] = before
    return keras


def _ops(keras):
    """(top_k, moveaxis, convert_to_numpy): keras.ops' own when keras runs the numpy backend;
    else (keras bound to another backend in this process) the numpy backend's functions that
    keras.ops calls under KERAS_BACKEND=numpy, called directly (see the module text)."""
    if keras.backend.backend() == BACKEND:
        return keras.ops.top_k, keras.ops.moveaxis, keras.ops.convert_to_numpy
    from keras.src.backend.numpy import core, math, numpy as backend_numpy

    return math.top_k, backend_numpy.moveaxis, core.convert_to_numpy


def keras_top_k(keras, key: np.ndarray, *, k: int, axis: int, sorted_: bool):
    """Keras's own part: moveaxis, top_k on the last axis, moveaxis back, to numpy. A refusal
    is Rejected."""
    top_k, moveaxis, to_numpy = _ops(keras)
    try:
        values, indices = top_k(moveaxis(key, axis, -1), k, sorted=sorted_)
        values, indices = moveaxis(values, -1, axis), moveaxis(indices, -1, axis)
        return to_numpy(values), to_numpy(indices)
    except Exception as exc:  # Keras (numpy underneath) refused the call: the axis, K
        raise Rejected(f"keras-numpy: {type(exc).__name__}: {exc}") from exc


class KerasNumpyTarget(LargestOnlyTarget):
    contract = runtime_contracts.KERAS
    name = "keras-numpy"
    adapter = "keras-numpy adapter"
    refuses = "keras.ops.top_k (numpy backend) refuses"
    # keras.ops.top_k has `sorted`, the axis is moved, the direction is the adapter's exact key,
    # and the numpy backend keeps every ONNX TopK-24 value type (bfloat16 through ml_dtypes, the
    # unsigned types): judged as TopK-24.
    default_profile = "onnx:24"
    index_dtype = "int64"  # np.argsort / np.argpartition indices (intp)
    native = True
    # Keras's contract (keras.ops.top_k, https://www.tensorflow.org/api_docs/python/tf/keras/ops/top_k): k is "the
    # number of top elements to retrieve" and the first output "contains the top-k values", so
    # a K above the axis size has no answer and must be refused (its jax, tensorflow and torch
    # backends refuse it); Keras sets no lower bound, so K = 0 (empty outputs) is its to take.
    # The numpy backend refuses an axis out of range (np.moveaxis) and, sorted=False, K above the
    # axis size (np.argpartition), but sorted=True returns the whole axis for K above its size:
    # declared in the shipped known list. Held only to input no TopK can compute (no tables).
    validates = True
    validates_tables = ()

    def version(self) -> str:
        # Imports keras (seconds): a worker asks for the version as it starts.
        try:
            keras = _keras()
        except ImportError:
            return "not installed"
        backend = keras.backend.backend()
        here = "" if backend == BACKEND else f"; called directly, keras.ops runs {backend} in this process"
        return f"keras {keras.__version__} ({BACKEND} backend{here}, CPU; numpy {np.__version__})"

    def available(self):
        try:
            keras = _keras()
        except ImportError as exc:
            return False, f"the keras package (pip install keras): {exc}"
        backend = keras.backend.backend()
        if backend == BACKEND:
            return True, ""
        try:  # keras is bound to another backend here: the numpy backend's own functions
            _ops(keras)
        except ImportError as exc:
            return False, (f"keras's numpy backend: keras was imported in this process with the {backend} "
                           f"backend and keras.src.backend.numpy does not load: {exc}")
        return True, ""

    def top_k(self, key, k, axis, sorted_):
        return keras_top_k(_keras(), key, k=k, axis=axis, sorted_=sorted_)


# -- the repro writer -----------------------------------------------------------------------------

def fill(target, case, _spec=None) -> dict:
    largest = selects_largest(case)
    integer = dtypes.numpy_dtype(case.dtype).kind in "iu"
    return {"key_function": "" if largest else key_source(integer),
            "key": "x" if largest else "smallest_first(x)",
            "sorted": bool(case.sorted) if case.family == "onnx" else True,
            "values": "ops.convert_to_numpy(values)" if largest else
                      "np.take_along_axis(x, indices, axis=axis)"}  # the input's own elements


def stack(target, case, _spec=None):
    sorted_ = bool(case.sorted) if case.family == "onnx" else True
    how = ("keras.ops.top_k on the input" if selects_largest(case) else
           "keras.ops.top_k on an exact order-reversing integer key (numpy), values gathered from the input by index")
    return RuntimeStack("Keras", "keras.ops.top_k", "numpy backend, CPU", versions("keras", "numpy", "ml_dtypes"),
                 (how + f"; sorted={sorted_}, K a Python int, the axis moved with keras.ops.moveaxis; "
                        "KERAS_BACKEND=numpy (keras/src/backend/numpy/math.py top_k)",))


register_repro_writer("keras-numpy", ReproWriter("keras-numpy.tmpl",
                                   needs="numpy and keras",
                                   fill=fill, stack=stack),
                      target_class=KerasNumpyTarget)
