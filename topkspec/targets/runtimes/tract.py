"""The `tract` target: Sonos's tract, a Rust ONNX runtime, through its Python bindings, on the CPU.

Each signature (opset, value type, rank, axis, direction, sorted) gets one ONNX model from
topkspec.targets.onnx_builder: one TopK node with symbolic input dimensions and K as a
graph input (at opset 1, K is the node's attribute, so the model is per K too). tract's
Python API loads ONNX from a file only, so the model is written to a temporary folder,
loaded with `tract.onnx().load(path)` (the folder is then removed), typed and decluttered
by `into_model()` and optimized for the default CPU runtime by `into_runnable()`; the
runnable is cached and run with `[x, K]`. No input fact is set: tract runs TopK on
symbolic dimensions. DirectML cases run lowered to TopK-11 (rules lower.*), with int64
indices.

What tract does, read in its source (onnx/src/ops/array/topk.rs, core/src/ops/array/topk.rs)
and measured with tract 0.23.9:

- Its ONNX TopK reads K from the second input only, so TopK-1 (K as the attribute `k`) fails
  to load ("Wrong input number"): a refusal of a valid descriptor, declared in the shipped
  known list (tract's own ONNX test manifest runs test_top_k only from opset 10).
- It ignores `sorted` and always returns sorted output, a valid answer to sorted=0.
- A stable sort keeps tied values (-0.0 and +0.0 too) in ascending index order.
- Its contract is ONNX's TopK (tract loads and runs ONNX models: https://github.com/sonos/tract),
  whose text makes K "a single positive value" (TopK-10 and later,
  Inputs: K), the outputs hold "the top k elements", and the axis's "Accepted range is [-r, r-1]"
  (https://onnx.ai/onnx/operators/onnx__TopK.html): so the target validates, and the invalid
  group holds tract to refusing such input. tract checks neither K nor the axis: K above the
  axis size returns the extra places filled with zeros, K = 0 returns empty outputs, and an axis
  outside [-rank, rank-1] makes it panic while typing the model (a panic cannot unwind through
  its C API: the process aborts, a crash the worker process reports). The adapter passes every
  case as drawn; the shipped known list declares all three, with the findings that report them.
- Its comparator (`partial_cmp().unwrap_or(Less)`) is no order with NaN: with NaN in a
  sequence it returns the wrong non-NaN values ([1, NaN, 3], K = 1, largest gives 1), and
  over longer sequences (21 elements can do) Rust's sort detects the broken order and panics,
  which aborts the process (a crash, in the worker).

Types: every ONNX TopK type tract has (float16/32/64, int8-64, uint8-64). tract has no
bfloat16 type at all (its DatumType, and the Python bindings' Tensor.from_numpy), so
bfloat16 is unsupported.
"""
from __future__ import annotations

import os

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target
from topkspec.targets.onnx_builder import (OnnxTopK, build_case_model, build_topk_model, graph_detail,
                                           keep_recent_graphs, model_key, newest_opset_profile, onnx_form)
from topkspec.targets.quiet import Quieting, native_notices_silenced
from topkspec.repro.writers import ReproWriter, RuntimeStack, operator_label, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts

NEEDS = "the tract package (pip install tract)"
NO_BFLOAT16 = ("tract has no bfloat16 type: its DatumType has F16, F32 and F64 only, and "
               "tract.Tensor.from_numpy reads no bfloat16 array")
# The value types tract can hold (tract.DatumType), by topkspec's names.
TRACT_TYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
               "uint8", "uint16", "uint32", "uint64")


def error_text(exc: BaseException) -> str:
    """tract's message on one line, without the stack backtrace anyhow appends to it when
    RUST_BACKTRACE is set."""
    text = str(exc).split("Stack backtrace:")[0]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines) or type(exc).__name__


# How tract is quieted (topkspec.targets.quiet): no backtrace in its error messages.
QUIET = Quieting(environment={"RUST_BACKTRACE": "0"}, replace=True)


def _tract():
    """tract, imported quiet (topkspec.targets.quiet): no backtrace in its error messages
    (RUST_BACKTRACE); its calls run with stderr silenced, so a panic's report (pages of
    backtrace) stays out of a run's output, where the worker's exit status reports the abort."""
    QUIET.load()
    import tract

    return tract


class TractTarget(Target):
    contract = runtime_contracts.onnx_importer("tract (ONNX TopK)")
    name = "tract"
    index_dtype = "int64"  # ONNX TopK's I, what tract returns
    native = True  # a panic inside tract aborts the process
    quiet = QUIET
    # ONNX's contract refuses K and axes out of range (see the module's text); tract breaks it,
    # as its known list says
    validates = True
    graph_contexts = True  # a case's TopK runs inside its graph (Case.context)
    validates_tables = ()
    # supports() looks at the opset (from the profile), the operator and the value type
    support_fields = ("profile", "op", "dtype")

    def __init__(self):
        self._runnables: dict = {}  # (form, K or None) -> Runnable, or the exception building it raised
        self._probes: dict = {}  # (opset, dtype) -> None (it runs) or why not
        self._native_profile = None
        self.runnables_built = 0

    def version(self) -> str:
        try:
            tract = _tract()
        except ImportError:
            return "not installed"
        return f"tract {tract.version()} (CPU)"

    def available(self):
        try:
            tract = _tract()
        except ImportError as exc:
            return False, f"{NEEDS}: {exc}"
        try:
            tract.version()
        except Exception as exc:  # the native library is there but does not answer
            return False, f"{NEEDS}: tract.version() failed: {type(exc).__name__}: {exc}"
        return True, ""

    @property
    def default_profile(self) -> str:
        """The newest ONNX TopK version tract loads and runs (float32, the one type every
        version has); onnx:24 when it cannot be asked."""
        if self._native_profile is None:
            self._native_profile = newest_opset_profile(self.probe) if self.available()[0] else "onnx:24"
        return self._native_profile

    # -- models ----------------------------------------------------------------------------

    def _runnable(self, form: OnnxTopK, k: int, model=None, key=()):
        """The cached runnable for this form (and K at opset 1; `model` and its `key`: a graph
        context's model). A model tract refused to load, type or optimize is cached as its
        exception and raised again as Rejected; writing the model file is the adapter's own
        code, outside that."""
        import tempfile

        key = (form, k if form.opset < 10 else None) + key
        if key not in self._runnables:
            model = model or build_topk_model(form, k=k if form.opset < 10 else None)
            with tempfile.TemporaryDirectory(prefix="topkspec-tract-") as folder:  # tract loads files only
                path = os.path.join(folder, "topk.onnx")
                with open(path, "wb") as handle:
                    handle.write(model.SerializeToString())
                try:
                    tract = _tract()
                    with native_notices_silenced():  # a panic's report (the worker sees the abort)
                        self._runnables[key] = tract.onnx().load(path).into_model().into_runnable()
                    self.runnables_built += 1
                except Exception as exc:  # tract refused the model
                    self._runnables[key] = exc
        runnable = self._runnables[key]
        if isinstance(runnable, Exception):
            raise Rejected(f"tract: {type(runnable).__name__}: {error_text(runnable)}") from runnable
        return runnable

    @staticmethod
    def _inputs(form: OnnxTopK, x, k: int) -> list:
        inputs = [np.ascontiguousarray(x)]
        if form.opset >= 10:
            inputs.append(np.array([k], dtype=np.int64))
        return inputs

    def probe(self, opset: int, dtype: str) -> str | None:
        """None when tract loads and runs a tiny known-good TopK of `opset` on `dtype` (three
        elements, K = 1), else why not, in tract's words. Asked once per (opset, dtype); only
        tract's own refusal is an answer."""
        key = (opset, dtype)
        if key not in self._probes:
            form = OnnxTopK(opset, dtype, 1, -1, True, True)
            inputs = self._inputs(form, np.arange(3).astype(dtypes.numpy_dtype(dtype)), 1)
            try:
                runnable = self._runnable(form, 1)
                with native_notices_silenced():
                    runnable.run(inputs)
                self._probes[key] = None
            except Exception as exc:  # the model was refused, or the run failed: tract's
                cause = exc.__cause__ if isinstance(exc, Rejected) and exc.__cause__ else exc
                self._probes[key] = (f"tract runs no TopK-{opset} on {dtype}: "
                                     f"{type(cause).__name__}: {error_text(cause)}")
        return self._probes[key]

    # -- the Target interface ----------------------------------------------------------------

    def supports(self, case):
        """bfloat16 has no tract type. Otherwise decided by probing: a value type the opset
        allows is supported when the tiny probe of that signature runs, and refused for good (Rejected: a valid descriptor rejected,
        a finding unless declared known) when tract refuses the probe. A value type outside
        the opset's T is not probed: refusing it is the runtime's job."""
        if case.dtype not in TRACT_TYPES:
            return NO_BFLOAT16 if case.dtype == "bfloat16" else f"tract has no {case.dtype} type"
        from topkspec import spec

        form = onnx_form(case)
        if case.dtype not in spec.value_types(f"onnx:{form.opset}", "TopK"):
            return None
        refused = self.probe(form.opset, case.dtype)
        if refused:
            raise Rejected(refused)
        return None

    def run(self, case, x):
        form = onnx_form(case)
        if case.context:  # the TopK inside a graph (spec.graphs): one runnable per sizes and K
            model, feeds = build_case_model(form, case, x)
            inputs, runnable = list(feeds.values()), self._runnable(form, int(case.k), model, model_key(case, x))
            keep_recent_graphs(self._runnables)
        else:
            inputs = self._inputs(form, x, int(case.k))
            runnable = self._runnable(form, int(case.k))  # Rejected when tract refuses the model
        try:
            with native_notices_silenced():  # a panic's report (the worker sees the abort)
                values, indices = runnable.run(inputs)[:2]  # a graph's further outputs follow
            values, indices = values.to_numpy(), indices.to_numpy()
        except Exception as exc:  # tract refused the call
            raise Rejected(f"tract: {type(exc).__name__}: {error_text(exc)}") from exc
        return values, indices

    def close(self):
        self._runnables.clear()
        self._probes.clear()


# -- the repro writer ----------------------------------------------------------------------------

def _fill(target, case, _spec=None) -> dict:
    from topkspec.targets.onnx_builder import onnx_repro_fill

    return onnx_repro_fill(target, case)


def _stack(target, case, _spec=None):
    form = onnx_form(case)
    k_how = "K as the node's attribute" if form.opset < 10 else "K as a graph input"
    details = ["tract.onnx().load(model file) -> into_model() (typed, decluttered) -> into_runnable() "
               "(optimized for the default CPU runtime) -> run([x, K]); no input facts set",
               f"one TopK-{form.opset} node, symbolic input dimensions, {k_how}", *graph_detail(case)]
    if case.family == "dml":
        details.append(f"the {operator_label(case)} case runs lowered to ONNX TopK-{form.opset}")
    return RuntimeStack("tract", f"TopK-{form.opset}", "CPU", versions("tract", "onnx"), tuple(details))


register_repro_writer("tract", ReproWriter("tract.tmpl", needs="numpy, onnx and tract", fill=_fill, stack=_stack),
                      target_class=TractTarget)
