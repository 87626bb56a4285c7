"""The `tensorflow` target: TensorFlow's own tf.math.top_k (the TopKV2 kernel) on the CPU.

tf.math.top_k works on the last axis only, selects the largest only, and has `sorted`
and `index_type` (int64 here, so the indices are TensorFlow's own ONNX-typed indices).
One tf.function per signature (value type, rank, axis, sorted), traced once with an
input_signature of dynamic dimensions and K as a scalar int64 tensor, so a campaign does not
retrace per shape or K. Inside it TensorFlow moves the axis itself
(tf.experimental.numpy.moveaxis, which also refuses an axis out of range), calls top_k and
moves the axis back. ONNX sorted=0 passes through as sorted=False; DirectML cases run sorted.

The smallest K is the largest K of an exact order-reversing key, computed with numpy by the
adapter (as the jax target does), with the values then gathered from the input by the
indices TensorFlow returns, so they are the input's own bits. Negating is not such a key: it
overflows the minimum of a signed type, wraps unsigned types, and on the CPU TensorFlow
flushes subnormals to zero in float comparisons. So:
- integers: bitwise not (~x == -x - 1 for signed, max - x for unsigned), same type;
- floats (float16, bfloat16, float32, float64): the bits as a signed integer of the same
  width, made monotonic in the value, with both zeros mapped to 0 (they stay tied) and every
  NaN to the integer maximum, then bitwise not; top_k then runs on that integer type.
So the smallest form of a float type exercises TensorFlow's integer kernel of its width,
and NaN comes last in it, as the reference has it. Every value type has an exact key: no
case is unsupported.
"""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, selects_largest
from topkspec.targets.order_key import LargestOnlyTarget, key_source
from topkspec.targets.quiet import Quieting
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts

DISTRIBUTIONS = ("tensorflow-cpu", "tensorflow", "tensorflow-intel", "tf-nightly-cpu", "tf-nightly")


# How TensorFlow is quieted (topkspec.targets.quiet): its C++ INFO lines, and the warning its
# tracing counter gives when a campaign traces one function per signature, are noise in a run.
QUIET = Quieting(environment={"TF_CPP_MIN_LOG_LEVEL": "2"}, loggers=("tensorflow",))


def _tf():
    """tensorflow, imported on first use, quiet (QUIET)."""
    QUIET.load()
    import tensorflow as tf

    QUIET.load()  # its logger again, as the import left it
    return tf


def distribution() -> tuple[str, str]:
    """(distribution, version) of the installed TensorFlow."""
    from importlib import metadata

    for name in DISTRIBUTIONS:
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "tensorflow", "?"


class TensorFlowTarget(LargestOnlyTarget):
    contract = runtime_contracts.TENSORFLOW
    name = "tensorflow"
    adapter = "tensorflow adapter"
    refuses = "tf.math.top_k has no CPU kernel for"
    # tf.math.top_k has `sorted`, the axis is moved, the direction is the adapter's exact key,
    # and it has every ONNX TopK-24 value type (bfloat16 included): judged as TopK-24.
    default_profile = "onnx:24"
    index_dtype = "int64"  # index_type=tf.int64
    native = True
    validates = True  # refuses K above the axis size and an axis out of range (accepts K=0)
    validates_tables = ()
    quiet = QUIET

    def __init__(self):
        super().__init__()
        self._functions: dict = {}

    def version(self) -> str:
        # Imports TensorFlow (seconds): a worker asks for the version as it starts, with time
        # for it, so its first call does not spend its time limit importing.
        try:
            tf = _tf()
        except ImportError:
            return "not installed"
        name = distribution()[0]
        return f"{name} {tf.__version__} (CPU)"

    def available(self):
        try:
            _tf()
        except ImportError as exc:
            return False, f"the tensorflow-cpu package (pip install tensorflow-cpu): {exc}"
        return True, ""

    def _function(self, key_dtype: str, rank: int, axis: int, sorted_: bool):
        """The traced tf.function for a signature: (x, k) -> (values, indices) along `axis`."""
        signature = (key_dtype, rank, axis, sorted_)
        if signature not in self._functions:
            tf = _tf()
            tnp = tf.experimental.numpy
            dtype = tf.as_dtype(dtypes.numpy_dtype(key_dtype))

            @tf.function(input_signature=[tf.TensorSpec([None] * rank, dtype), tf.TensorSpec([], tf.int64)],
                         autograph=False)
            def top_k(x, k):
                values, indices = tf.math.top_k(tnp.moveaxis(x, axis, -1), k, sorted=sorted_,
                                                index_type=tf.int64)
                return tnp.moveaxis(values, -1, axis), tnp.moveaxis(indices, -1, axis)

            self._functions[signature] = top_k
        return self._functions[signature]

    def top_k(self, key: np.ndarray, k: int, axis: int, sorted_: bool):
        """TensorFlow's own part: trace (once) and run the function; a refusal is Rejected."""
        function = self._function(dtypes.name_of(key.dtype), key.ndim, axis, sorted_)
        try:
            values, indices = function(key, np.int64(k))
            return values.numpy(), indices.numpy()
        except Exception as exc:  # TensorFlow refused the call (K above the size, the axis)
            raise Rejected(f"tensorflow: {type(exc).__name__}: {exc}") from exc

    def close(self):
        self._functions.clear()


# -- the repro writer -----------------------------------------------------------------------------

def fill(target, case, _spec=None) -> dict:
    largest = selects_largest(case)
    integer = dtypes.numpy_dtype(case.dtype).kind in "iu"
    key_function = "" if largest else key_source(integer)
    return {"key_function": key_function,
            "key": "x" if largest else "smallest_first(x)",
            "sorted": bool(case.sorted) if case.family == "onnx" else True,
            "values": "values.numpy()" if largest else
                      "np.take_along_axis(x, indices, axis=axis)"}  # the input's own elements


def stack(target, case, _spec=None):
    how = ("tf.math.top_k on the input" if selects_largest(case) else
           "tf.math.top_k on an exact order-reversing integer key (numpy), values gathered from the input by index")
    return RuntimeStack("TensorFlow", "tf.math.top_k", "CPU", versions(*DISTRIBUTIONS, "numpy"),
                 (how + "; in a tf.function of dynamic shape, K an int64 tensor, index_type=tf.int64, "
                        "the axis moved with tf.experimental.numpy.moveaxis",))


register_repro_writer("tensorflow", ReproWriter("tensorflow.tmpl",
                                   needs="numpy and tensorflow",
                                   fill=fill, stack=stack),
                      target_class=TensorFlowTarget)
