"""The `tvm` target: Apache TVM's Relax ONNX frontend, compiled for the CPU (`llvm`).

Each signature gets one ONNX model from topkspec.targets.onnx_builder: one TopK node with
symbolic input dimensions and K as a constant initializer (the frontend refuses a K that is
not a constant: "TopK k must be a constant"), so the signature includes K. The model goes
through `tvm.relax.frontend.onnx.from_onnx`, is compiled once with `tvm.compile(mod,
target="llvm")` and run on a `relax.VirtualMachine` on `tvm.cpu()`; the machine is cached.
DirectML cases run lowered to TopK-11 (rules lower.*), with int64 indices.

Its contract is ONNX's TopK at the opsets the frontend claims. The frontend maps any opset to
its newest converter at or below it ("Number x is the biggest number smaller than or equal to
opset belongs to all support versions", OnnxOpConverter.get_converter); TopK has converters
for opsets 1 and 11, so TopK-1, 10, 11 and 24 are all claimed, and judged by ONNX's text
(https://onnx.ai/onnx/operators/onnx__TopK.html): K is "a single positive value", the outputs
hold "the top k elements", the axis's "Accepted range is [-r, r-1]". The target validates.

TVM's own `relax.op.topk` has a contract of its own (it returns every element when K < 1);
it is what the frontend lowers to, so what the ONNX target finds there is located in it, and
no second target drives it directly.

What the frontend does, read in tvm/relax/frontend/onnx/onnx_frontend.py (class TopK) and
measured with apache-tvm 0.27.0.post1: TopK-10 goes to the opset-1 converter, which reads K from
the attribute TopK-10 no longer has and returns one element; sorted=0 is refused ("TopK sorted
must be 1 for Relax frontend"); K = 0 returns every element; K above the axis size reads past
the input. The shipped known list declares each, with its finding.

Types: every ONNX TopK type is a TVM dtype; the target runs them all and the runtime's own
refusals (int16, uint16, uint32, uint64: "Unsupported input dtype") are its own.
"""
from __future__ import annotations

import contextlib
import gc
import io
import warnings

import numpy as np

from topkspec.spec import dtypes
from topkspec.spec.contracts import onnx_contract
from topkspec.targets.base import Rejected, Target, first_line
from topkspec.targets.onnx_builder import OnnxTopK, build_topk_model, onnx_form, onnx_repro_fill
from topkspec.targets.quiet import native_notices_silenced
from topkspec.repro.writers import ReproWriter, RuntimeStack, operator_label, register_repro_writer, versions

NEEDS = "the apache-tvm package (pip install apache-tvm==0.27.0.post1)"
TVM_TARGET = "llvm"  # TVM's CPU code generator


class TvmTarget(Target):
    name = "tvm"
    default_profile = "onnx:11"  # the frontend's newest TopK converter
    index_dtype = "int64"  # ONNX TopK's I: the frontend asks relax.op.topk for int64 indices
    native = True  # compiled native code: a read past a buffer may end the process
    validates = True  # ONNX's contract (see the module's text); the known list says where it breaks
    # ONNX's text at the opsets the frontend claims (every one, through get_converter; see above)
    contract = onnx_contract("tvm (Relax ONNX frontend)", (1, 10, 11, 24))
    k_constant = True  # K is compiled into the model as an initializer (read by the repro writer)
    min_timeout = 30.0  # compiling a signature takes a fraction of a second, the first one longer

    def __init__(self):
        self._machines: dict = {}  # (form, K) -> VirtualMachine, or the exception building it raised
        self._probes: dict = {}  # (opset, dtype) -> None (it runs) or why not
        self.machines_built = 0

    def version(self) -> str:
        try:
            import tvm
        except ImportError:
            return "not installed"
        return f"tvm {tvm.__version__} (Relax ONNX frontend, {TVM_TARGET} on CPU)"

    def available(self):
        try:
            import tvm
            from tvm.relax.frontend.onnx import from_onnx  # noqa: F401
        except ImportError as exc:
            return False, f"{NEEDS}: {exc}"
        if not tvm.runtime.enabled(TVM_TARGET):
            return False, f"{NEEDS}: this build of TVM has no {TVM_TARGET} code generator"
        return True, ""

    def _machine(self, form: OnnxTopK, k: int):
        """The cached virtual machine for this form and K. A model the frontend or the compiler
        refused is cached as its exception and raised again as Rejected; building the ONNX
        model is the adapter's own code, outside that."""
        key = (form, k)
        if key not in self._machines:
            model = build_topk_model(form, k=k, k_as_input=False)
            try:
                import tvm
                from tvm import relax
                from tvm.relax.frontend.onnx import from_onnx

                with warnings.catch_warnings(), native_notices_silenced(), \
                        contextlib.redirect_stdout(io.StringIO()):  # it prints "Error converting operator"
                    warnings.simplefilter("ignore")  # the frontend repeats onnx.checker's verdict as a warning
                    executable = tvm.compile(from_onnx(model), target=TVM_TARGET)
                self._machines[key] = relax.VirtualMachine(executable, tvm.cpu())
                self.machines_built += 1
            except Exception as exc:  # the frontend or the compiler refused the model
                with native_notices_silenced():  # its half-built blocks warn as they are freed
                    exc.__traceback__ = exc.__context__ = None
                    gc.collect()
                self._machines[key] = exc
        machine = self._machines[key]
        if isinstance(machine, Exception):
            raise Rejected(f"tvm: {type(machine).__name__}: {first_line(machine)}") from machine
        return machine

    # supports() looks at the opset (from the profile), the operator and the value type
    support_fields = ("profile", "op", "dtype")

    def probe(self, opset: int, dtype: str) -> str | None:
        """None when TVM imports, compiles and runs a tiny TopK-`opset` on `dtype` (three
        elements, K = 1), else why not in TVM's words; asked once per (opset, dtype)."""
        key = (opset, dtype)
        if key not in self._probes:
            form = OnnxTopK(opset, dtype, 1, -1, True, True)
            try:
                self.run_form(form, 1, np.arange(3).astype(dtypes.numpy_dtype(dtype)))
                self._probes[key] = None
            except Rejected as exc:
                self._probes[key] = f"tvm cannot run a known-good TopK-{opset} on {dtype} (3 elements, K=1): {exc}"
        return self._probes[key]

    def supports(self, case):
        """A value type the opset allows is supported when the tiny probe of that signature runs,
        and refused for good (Rejected: a valid descriptor rejected, a finding unless declared
        known) when TVM refuses it. A type outside the opset's T is not probed."""
        if case.dtype not in dtypes.ONNX_ELEM_TYPES:
            return f"{case.dtype} has no ONNX type"
        from topkspec import spec

        form = onnx_form(case)
        if case.dtype in spec.value_types(f"onnx:{form.opset}", "TopK") and self.probe(form.opset, case.dtype):
            raise Rejected(self.probe(form.opset, case.dtype))
        return None

    def run(self, case, x):
        return self.run_form(onnx_form(case), int(case.k), x)

    def run_form(self, form: OnnxTopK, k: int, x):
        import tvm

        machine = self._machine(form, k)
        data = tvm.runtime.tensor(np.ascontiguousarray(x))
        try:
            with native_notices_silenced():
                values, indices = machine["main"](data)
            return values.numpy(), indices.numpy()
        except Exception as exc:  # the virtual machine refused the call (a shape check)
            raise Rejected(f"tvm: {type(exc).__name__}: {first_line(exc)}") from exc

    def close(self):
        self._machines.clear()
        self._probes.clear()


# -- the repro writer ----------------------------------------------------------------------------

def _fill(target, case, _spec=None) -> dict:
    return {**onnx_repro_fill(target, case), "tvm_target": TVM_TARGET}


def _stack(target, case, _spec=None):
    form = onnx_form(case)
    k_how = "K as the node's attribute" if form.opset < 10 else "K compiled into the model as an initializer"
    details = [f"tvm.relax.frontend.onnx.from_onnx(model) -> tvm.compile(target=\"{TVM_TARGET}\") -> "
               "relax.VirtualMachine(executable, tvm.cpu())[\"main\"](x)",
               f"one TopK-{form.opset} node, symbolic input dimensions, {k_how}"]
    if case.family == "dml":
        details.append(f"the {operator_label(case)} case runs lowered to ONNX TopK-{form.opset}")
    return RuntimeStack("Apache TVM (Relax ONNX frontend)", f"TopK-{form.opset}", f"CPU, {TVM_TARGET}",
                        versions("apache-tvm", "onnx"), tuple(details))


register_repro_writer("tvm", ReproWriter("tvm.tmpl", needs="numpy, onnx and apache-tvm", fill=_fill, stack=_stack),
                      target_class=TvmTarget)
