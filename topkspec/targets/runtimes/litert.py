"""The `litert` target: LiteRT's (TensorFlow Lite's) TOPK_V2 kernel on the CPU, through
ai_edge_litert's Interpreter.

The model is what a TensorFlow user ships: a tf.function calling tf.math.top_k, converted
by TensorFlow's TFLiteConverter (no optimizations, builtin ops only), one flatbuffer per
(value type, rank) with every input dimension dynamic and K a scalar int32 input. Its op
list must be one TOPK_V2 (not a flex op, not a custom op). One Interpreter per model,
resized to each input's shape (resize_tensor_input, allocate_tensors).

What TOPK_V2 is: the K largest along the last dimension, always sorted, tied values in
ascending index order (its comparator breaks ties by index), K a runtime int32 tensor,
int32 indices (widened here to int64, exactly). What the adapter adds, all exact:
- the axis: TOPK_V2 has none, so the axis is moved last with numpy and the results moved
  back. An axis outside the rank has no such move: supports() declares those cases
  unsupported (the runtime cannot be asked), and run() refuses them.
- the smallest K: TOPK_V2 selects only the largest, so the smallest K are the largest K of
  an exact order-reversing key of the same type, and the runtime's values are mapped back
  through the same key (it is its own inverse). Integers: bitwise not (~x == -x - 1 signed,
  max - x unsigned). float32: the sign bit flipped, as bits (no float arithmetic, so no
  flushing of subnormals), which reverses the IEEE order TOPK_V2 compares by, keeps
  -0.0 == +0.0 tied, and leaves NaN NaN. Where NaN lands is the runtime's own policy
  either way.
- ONNX sorted=0 runs sorted, a valid answer to it.

Refusals: TensorFlow's converter has no builtin TOPK_V2 for float16, float64, uint16,
uint32 or uint64 ("neither a custom op nor a flex op", it asks for TF Select) and refuses
a bfloat16 model input: a type refused there is the runtime refusing it (Rejected, probed
once per type with a tiny known-good case), not the adapter failing. Tracing the
tf.function and checking the op list are the adapter's own code: their failures are
adapter errors.

K of 0 or below: the kernel sizes the outputs' last dimension max(0, K) and checks only a
positive K against the axis, so invoke succeeds with empty outputs; ai_edge_litert's
get_tensor cannot read an empty tensor ("Invalid tensor size"), so the adapter returns
empty arrays of the shape and type the interpreter reports for them.
"""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import AdapterError, Rejected, Target, describe_error, selects_largest
from topkspec.targets.quiet import Quieting, native_notices_silenced, stderr_silenced
from topkspec.repro.writers import ReproWriter, RuntimeStack, operator_label, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts

INT32 = np.iinfo(np.int32)
# Value types a TFLite tensor can hold (its schema's TensorType); the converter or the
# kernel may still refuse one for TopK, which the probe finds out.
_TF_TYPES = ("float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
             "uint8", "uint16", "uint32", "uint64")


# TensorFlow's logging is informational here (topkspec.targets.quiet).
QUIET = Quieting(environment={"TF_CPP_MIN_LOG_LEVEL": "3"}, loggers=("tensorflow",))


def _quiet() -> None:
    QUIET.load()


def _summary(exc: BaseException, limit: int = 400) -> str:
    """An exception's message cut to what a person reads: the converter's is an MLIR dump,
    of which the lines naming the error and the unsupported ops are the point."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    keep = [line[line.index("error:"):] if "error:" in line else line for line in lines
            if "error:" in line or "TF Select ops" in line or "Unsupported" in line]
    text = " | ".join(dict.fromkeys(keep or lines[:1])) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + " ..."


def convert(dtype: str, rank: int) -> bytes:
    """The .tflite flatbuffer of tf.math.top_k(x, k) for x of `dtype` with `rank` dynamic
    dimensions and a scalar int32 k, from TensorFlow's TFLiteConverter without
    optimizations. Tracing is the adapter's own code; the converter refusing the model
    raises Rejected."""
    _quiet()
    import tensorflow as tf

    def top_k(x, k):
        return tf.math.top_k(x, k)

    function = tf.function(top_k, input_signature=[tf.TensorSpec([None] * rank, tf.as_dtype(dtype), name="x"),
                                                   tf.TensorSpec([], tf.int32, name="k")])
    concrete = function.get_concrete_function()
    try:
        converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], function)
        with stderr_silenced():
            return converter.convert()
    except Exception as exc:  # the converter refused the model: TFLite has no builtin TopK for it
        raise Rejected(f"litert: TensorFlow's TFLite converter refused a {dtype} TopK: "
                       f"{type(exc).__name__}: {_summary(exc)}") from exc


class _Model:
    """One converted model and its Interpreter, resized to the last input shape it ran."""

    def __init__(self, dtype: str, rank: int, content: bytes):
        self.dtype, self.rank, self.content = dtype, rank, content
        self.interpreter = None
        self.shape = None

    def _fresh(self):
        from ai_edge_litert.interpreter import Interpreter

        try:
            interpreter = Interpreter(model_content=self.content)
        except Exception as exc:  # the runtime refused its own converter's model
            raise Rejected(f"litert: Interpreter refused the converted {self.dtype} model: "
                           f"{type(exc).__name__}: {exc}") from exc
        try:
            ops = interpreter._get_ops_details()
            names = [op["op_name"] for op in ops]
            if names != ["TOPK_V2"]:
                raise AdapterError(f"litert adapter: the converted {self.dtype} model holds {names}, "
                                   f"not one builtin TOPK_V2")
            self.x_index, self.k_index = (int(i) for i in ops[0]["inputs"])
            self.values_index, self.indices_index = (int(i) for i in ops[0]["outputs"])
        except AdapterError:
            raise
        except Exception as exc:
            raise AdapterError(f"litert adapter, reading the model's op list: {describe_error(exc)}") from exc
        self.interpreter, self.shape = interpreter, None
        return interpreter

    def reset(self) -> None:
        """After a failed call: the next one starts from a new Interpreter."""
        self.interpreter, self.shape = None, None

    def ready(self):
        """The Interpreter (a new one after a reset): Rejected when the runtime refuses the
        model, AdapterError when its op list is not one TOPK_V2."""
        return self.interpreter or self._fresh()

    def invoke(self, key: np.ndarray, k: np.ndarray) -> dict:
        """Runs TOPK_V2 on `key` (K along its last axis); {output index: (shape, dtype)} as the
        interpreter reports its outputs. Only the runtime's calls: the caller turns their
        errors into Rejected."""
        interpreter = self.interpreter
        if self.shape != key.shape:
            self.shape = None
            interpreter.resize_tensor_input(self.x_index, list(key.shape))
            with native_notices_silenced():  # the first allocation announces TFLite's XNNPACK delegate
                interpreter.allocate_tensors()
            self.shape = key.shape
        interpreter.set_tensor(self.x_index, key)
        interpreter.set_tensor(self.k_index, k)
        interpreter.invoke()
        return {d["index"]: (tuple(d["shape"]), d["dtype"]) for d in interpreter.get_output_details()}

    def outputs(self, reported: dict) -> list:
        """[values, int32 indices]: an empty output as an empty array of the shape and type the
        interpreter reports (get_tensor cannot read an empty tensor: tensorflow#57084), else
        what get_tensor returns (its failure raises Rejected)."""
        outputs = []
        for index in (self.values_index, self.indices_index):
            shape, dtype = reported[index]
            if 0 in shape:
                outputs.append(np.empty(tuple(int(n) for n in shape), dtype=dtype))
                continue
            try:
                outputs.append(self.interpreter.get_tensor(index))
            except Exception as exc:
                self.reset()
                raise Rejected(f"litert: get_tensor: {type(exc).__name__}: {exc}") from exc
        return outputs

    def call(self, key: np.ndarray, k: np.ndarray) -> list:
        """[values, int32 indices] of TOPK_V2 on `key`; Rejected when the runtime refuses."""
        self.ready()
        try:
            reported = self.invoke(key, k)
        except Exception as exc:  # the runtime refused the call (K above the last dimension, say)
            self.reset()
            raise Rejected(f"litert: {type(exc).__name__}: {exc}") from exc
        return self.outputs(reported)


def self_inverse_key(moved: np.ndarray) -> np.ndarray:
    """An exact order-reversing key of the same type (its own inverse): the largest K of the
    key are the smallest K of `moved` (see the module text)."""
    if moved.dtype.kind == "f":
        bits = f"u{moved.dtype.itemsize}"
        sign = np.array(1 << (moved.dtype.itemsize * 8 - 1), dtype=bits)
        return (moved.view(bits) ^ sign).view(moved.dtype)
    return np.invert(moved)


class LiteRtTarget(Target):
    contract = runtime_contracts.LITERT
    smallest_by_key = True  # TOPK_V2 selects the largest only: the adapter keys the smallest (module text)
    name = "litert"
    default_profile = "dml:5.0"  # one sorted form (largest; the smallest by an exact key), like TOP_K1
    index_dtype = "int64"  # TOPK_V2's int32 indices, widened exactly
    native = True
    validates = True  # TOPK_V2 refuses K above the last dimension (K <= 0 gives empty outputs);
    # it has no axis: an axis outside the rank is a case no call can carry (supports)
    support_fields = ("dtype", "rank", "axis", "k")
    quiet = QUIET

    def __init__(self, warm: bool | None = None):
        self._models: dict = {}  # (dtype, rank) -> _Model, or the Rejected the converter raised
        self._probes: dict = {}  # dtype -> None (it runs) or the runtime's refusal
        if warm is None:  # in a worker process (a child): while it starts, not in its first call's time
            import multiprocessing

            warm = multiprocessing.parent_process() is not None
        if warm:
            self._warm()

    def _warm(self) -> None:
        """Import TensorFlow (seconds) and run one float32 TopK, so the first call of a run
        is not timed with them. Anything that fails here fails again, and is judged, in the
        call that needs it."""
        try:
            if self.available()[0]:
                self._probe("float32")
        except Exception:
            self._probes.clear()

    def version(self) -> str:
        from importlib import metadata

        try:
            litert = metadata.version("ai-edge-litert")
        except metadata.PackageNotFoundError:
            return "not installed"
        converter = "tensorflow ?"
        for name in ("tensorflow", "tensorflow-cpu"):
            try:
                converter = f"{name} {metadata.version(name)}"
                break
            except metadata.PackageNotFoundError:
                continue
        return f"ai-edge-litert {litert} (CPU; models converted by {converter})"

    def available(self):
        try:
            from ai_edge_litert.interpreter import Interpreter  # noqa: F401
        except (ImportError, OSError) as exc:  # OSError: a native library that does not load
            return False, f"the ai-edge-litert package (pip install ai-edge-litert): {exc}"
        _quiet()
        try:
            import tensorflow as tf

            tf.lite.TFLiteConverter  # noqa: B018
        except (ImportError, AttributeError, OSError) as exc:
            return False, f"the tensorflow-cpu package for TFLite's converter (pip install tensorflow-cpu): {exc}"
        return True, ""

    # -- models -------------------------------------------------------------------------------

    def _model(self, dtype: str, rank: int) -> _Model:
        key = (dtype, rank)
        if key not in self._models:
            try:
                self._models[key] = _Model(dtype, rank, convert(dtype, rank))
            except Rejected as exc:
                self._models[key] = exc
            except Exception as exc:  # tracing or the converter's Python side broke: the adapter's
                raise AdapterError(f"litert adapter, building the {dtype} rank-{rank} model: "
                                   f"{describe_error(exc)}") from exc
        model = self._models[key]
        if isinstance(model, Rejected):
            raise model
        return model

    def _probe(self, dtype: str) -> str | None:
        """None when a tiny known-good TopK of `dtype` runs, else the runtime's refusal."""
        if dtype not in self._probes:
            x = np.arange(3).astype(dtypes.numpy_dtype(dtype))
            try:
                self._model(dtype, 1).call(x, np.array(1, dtype=np.int32))
                self._probes[dtype] = None
            except Rejected as exc:
                self._probes[dtype] = str(exc)
        return self._probes[dtype]

    def supports(self, case):
        if case.dtype not in _TF_TYPES:
            return f"TFLite has no {case.dtype} tensor type"
        if not -case.rank <= case.axis < case.rank:
            return (f"TOPK_V2 has no axis operand (it works on the last dimension), and axis {case.axis} lies "
                    f"outside rank {case.rank}, so no input can be moved to it: the runtime cannot be asked")
        if not INT32.min <= case.k <= INT32.max:
            return f"TOPK_V2 takes K as an int32 tensor: {case.k} does not fit"
        refused = self._probe(case.dtype)
        if refused:
            raise Rejected(refused)
        return None

    def run(self, case, x):
        if not -case.rank <= case.axis < case.rank:  # supports() declares these unsupported
            raise Rejected(f"litert adapter: TOPK_V2 has no axis; axis {case.axis} is outside rank {case.rank}")
        x = np.asarray(x)
        largest = selects_largest(case)
        moved = np.ascontiguousarray(np.moveaxis(x, case.norm_axis, -1))
        key = moved if largest else self_inverse_key(moved)
        k = np.array(case.k, dtype=np.int32)
        model = self._model(case.dtype, case.rank)  # Rejected when the converter refuses the type
        values, indices = model.call(key, k)
        values = np.asarray(values)
        if not largest:
            values = self_inverse_key(values)  # the key is its own inverse: the input's own elements
        indices = np.asarray(indices).astype(np.int64)
        return np.moveaxis(values, -1, case.norm_axis), np.moveaxis(indices, -1, case.norm_axis)

    def close(self):
        self._models.clear()
        self._probes.clear()


def _repro_fill(target, case, _spec=None) -> dict:
    helpers, key, back = "", "moved", "values"
    if not selects_largest(case) and dtypes.numpy_dtype(case.dtype).kind == "f":
        bits = f"np.uint{dtypes.itemsize(case.dtype) * 8}"
        helpers = (f"    flip = lambda a: (a.view({bits}) ^ {bits}(1 << {dtypes.itemsize(case.dtype) * 8 - 1}))"
                   ".view(a.dtype)  # the run's key: the sign bit flipped as bits\n")
        key, back = "flip(moved)", "flip(values)"
    elif not selects_largest(case):
        key, back = "~moved", "~values"
    note = "" if key == "moved" else "  # the smallest K: the largest of the run's exact key"
    if key == "~moved":
        note = "  # the smallest K: bitwise not reverses the order exactly, as the run did"
    return {"tf_type": case.dtype, "helpers": helpers, "key": key, "back": back, "key_note": note}


def _repro_stack(target, case, _spec=None):
    how = ("TOPK_V2 on the input" if selects_largest(case) else
           "TOPK_V2 on an exact order-reversing key of the same type, values mapped back by the key")
    details = ("a tf.function calling tf.math.top_k, converted by tf.lite.TFLiteConverter.from_concrete_functions "
               "(no optimizations, builtin ops only) into one TOPK_V2 node; dynamic input dimensions, K a scalar "
               "int32 input; run by ai_edge_litert.interpreter.Interpreter with its default op resolver",
               f"{how}; the axis moved last with numpy (TOPK_V2 has no axis); int32 indices widened to int64")
    if case.family == "dml":
        details += (f"the {operator_label(case)} case runs as TOPK_V2 on the last axis",)
    return RuntimeStack("LiteRT", "TOPK_V2", "CPU", versions("ai-edge-litert", "tensorflow", "tensorflow-cpu"), details)


register_repro_writer("litert", ReproWriter("litert.tmpl",
                                   needs="numpy, tensorflow (its TFLite converter) and ai-edge-litert",
                                   fill=_repro_fill, stack=_repro_stack),
                      target_class=LiteRtTarget)
