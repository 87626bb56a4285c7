"""The `iree` target: IREE compiles the ONNX TopK itself, for the CPU, and runs it.

Each signature (opset, value type, rank, axis as written, direction, sorted) is one ONNX model
(topkspec.targets.onnx_builder: symbolic input dimensions, K a graph input from opset 10 on)
that goes the way `iree-import-onnx` takes a model: the ONNX checker and shape inference,
then IREE's ONNX importer (iree.compiler.extras.onnx_importer) to the torch dialect; then
iree-compile for the local device with the llvm-cpu backend, and iree.runtime on the
local-sync driver. IREE's own lowering computes the TopK (torch-mlir decomposes
aten.topk into a sort and a slice; no adapter code touches the data).

Compile flags: `--iree-input-type=onnx --iree-hal-target-device=local
--iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic
--iree-input-demote-f64-to-f32=false`. The last one is the flag IREE's maintainers give for
float64 (https://github.com/iree-org/iree/issues/20774): by default IREE demotes f64 to f32
and a float64 model then fails at run time (https://github.com/iree-org/iree/issues/24180),
so with it float64 TopK is computed, and judged, in float64.

Compiling takes a second or two, so modules are cached in memory per signature and on disk
under `$XDG_CACHE_HOME/topkspec/iree` (default `~/.cache/topkspec/iree`), keyed by the model's
bytes, the IREE version and the flags (`TOPKSPEC_IREE_CACHE` names another folder, or `off`);
iree-compile's refusals are kept there too, as their diagnostics (compiling is deterministic).
A campaign still compiles each new signature within a call: under a heavily loaded machine,
give `--timeout` more than its 5 seconds.
The adapter compiles in-process through IREE's compiler API (iree.compiler.api), which is
about twice as fast as `iree.compiler.compile_str` (a subprocess per call); when that
fails it compiles again with compile_str to get IREE's diagnostics as the refusal's text.

IREE's function ABI has signless integers: uint8/16/32/64 values come back as buffers that
iree.runtime hands over typed int8/16/32/64; the adapter views those bits as the case's type
(the same bits, nothing converted).

What IREE refuses (a finding unless the known list declares it) is found by probing a tiny
known-good TopK once per (opset, value type, sorted): sorted=0 does not compile. TopK-1 and
TopK-10 do not compile at all (IREE's importer lowers TopK from opset 11 on): those opsets
are unsupported, with IREE's reason.
"""
from __future__ import annotations

import hashlib
import os

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import AdapterError, Rejected, Target, first_line
from topkspec.targets.runtimes.iree_compile import (
    COMPILE_FLAGS, CompileRefused, _diagnostics, cache_dir, compile_mlir, import_onnx, iree_version,
)
from topkspec.targets.onnx_builder import OnnxTopK, build_topk_model, onnx_form
from topkspec.repro.writers import ReproWriter, RuntimeStack, operator_label, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts

DRIVER = "local-sync"
NEEDS = "the iree-base-compiler and iree-base-runtime packages (pip install iree-base-compiler iree-base-runtime)"


class IreeTarget(Target):
    contract = runtime_contracts.onnx_importer("IREE (ONNX TopK, through its ONNX importer)")
    name = "iree"
    default_profile = "onnx:24"  # the newest TopK; IREE's importer lowers TopK from opset 11 on
    index_dtype = "int64"
    native = True
    min_timeout = 30.0  # a first compile takes 1 to 2 s, several on a loaded machine
    # IREE imports ONNX models (iree-import-onnx), so ONNX's TopK is its contract
    # (https://onnx.ai/onnx/operators/onnx__TopK.html): K is "a single positive value", the
    # outputs hold "the top k elements", the axis's "Accepted range is [-r, r-1]". What IREE
    # accepts instead is declared in its known list.
    validates = True
    validates_tables = ()
    support_fields = ("family", "profile", "op", "dtype", "sorted")

    def __init__(self, driver: str = DRIVER):
        self.driver = driver
        self._config = None
        self._modules: dict = {}  # key -> callable TopK function, or the exception IREE raised
        self._probes: dict = {}  # (opset, dtype, sorted) -> None (it runs) or why not
        self.compiled = 0  # modules compiled in this process (not read from the disk cache)

    def version(self) -> str:
        from importlib import metadata

        try:
            compiler = metadata.version("iree-base-compiler")
            runtime = metadata.version("iree-base-runtime")
        except metadata.PackageNotFoundError:
            return "not installed"
        return f"iree-base-compiler {compiler} (iree-base-runtime {runtime}, llvm-cpu on {self.driver})"

    def available(self):
        try:
            import iree.compiler  # noqa: F401
            import iree.runtime as ireert
            from iree.compiler.extras import onnx_importer  # noqa: F401  (needs the onnx package)
        except ImportError as exc:
            return False, f"{NEEDS}: {exc}"
        drivers = ireert.query_available_drivers()
        if self.driver not in drivers:
            return False, f"IREE's {self.driver} driver: not in iree.runtime.query_available_drivers() ({drivers})"
        return True, ""

    # -- building and running modules ---------------------------------------------------------

    def _config_(self):
        if self._config is None:
            import iree.runtime as ireert

            self._config = ireert.Config(self.driver)
        return self._config

    @staticmethod
    def _cache_path(model_bytes: bytes) -> str | None:
        """The cache file stem for a model (its module is `.vmfb`, IREE's refusal `.err`)."""
        folder = cache_dir()
        if folder is None:
            return None
        key = hashlib.sha256(b"\0".join([model_bytes, iree_version().encode(), " ".join(COMPILE_FLAGS).encode()]))
        return os.path.join(folder, key.hexdigest())

    @staticmethod
    def _read(path: str) -> bytes | None:
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise AdapterError(f"iree adapter: reading the module cache {path}: {exc} "
                               f"(TOPKSPEC_IREE_CACHE=off turns it off)") from exc

    @staticmethod
    def _store(path: str, data: bytes) -> None:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            partial = f"{path}.{os.getpid()}.part"
            with open(partial, "wb") as handle:
                handle.write(data)
            os.replace(partial, path)
        except OSError as exc:
            raise AdapterError(f"iree adapter: writing the module cache {path}: {exc} "
                               f"(TOPKSPEC_IREE_CACHE=off turns it off)") from exc

    def _compiled_module(self, model) -> tuple[bytes | None, Exception | None]:
        """(the module's bytes, None), or (None, IREE's refusal): from the disk cache when this
        model was compiled before (a refusal of iree-compile is kept there too, as its
        diagnostics: compiling is deterministic), else imported and compiled now. The cache
        files are the adapter's own work (AdapterError); the rest is IREE's."""
        stem = self._cache_path(model.SerializeToString())
        if stem is not None:
            vmfb = self._read(stem + ".vmfb")
            if vmfb is not None:
                return vmfb, None
            refusal = self._read(stem + ".err")
            if refusal is not None:
                return None, CompileRefused(refusal.decode("utf-8", "replace"))
        try:
            vmfb = compile_mlir(import_onnx(model))
        except Exception as exc:  # IREE refused the model: its importer or its compiler
            if stem is not None and type(exc).__name__ == "CompilerToolError":
                self._store(stem + ".err", _diagnostics(exc).encode())
            return None, exc
        self.compiled += 1
        if stem is not None:
            self._store(stem + ".vmfb", vmfb)
        return vmfb, None

    def _function(self, form: OnnxTopK, k: int):
        """The compiled TopK function of this form (and K at opset 1, where it is the node's
        attribute). A module IREE refused is cached as its exception and raised again as
        Rejected; building the model and the cache files are the adapter's own work."""
        key = (form, k if form.opset < 10 else None)
        if key not in self._modules:
            model = build_topk_model(form, k=k, k_as_input=True)
            vmfb, refused = self._compiled_module(model)
            if refused is not None:
                self._modules[key] = refused
            else:
                try:
                    import iree.runtime as ireert

                    context = ireert.SystemContext(config=self._config_())
                    context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
                    self._modules[key] = context.modules.module["topk"]
                except Exception as exc:  # IREE's runtime refused to load the module
                    self._modules[key] = exc
        function = self._modules[key]
        if isinstance(function, Exception):
            raise Rejected(f"{self.name}: {type(function).__name__}: {_diagnostics(function)}") from function
        return function

    @staticmethod
    def _args(form: OnnxTopK, x, k: int) -> tuple:
        x = np.ascontiguousarray(x)
        return (x,) if form.opset < 10 else (x, np.array([k], dtype=np.int64))

    @staticmethod
    def _as_case_type(values, dtype: str):
        """Values as the case's type: IREE's ABI is signless, so unsigned results arrive typed
        as the signed type of the same width; the bits are viewed, never converted."""
        want = dtypes.numpy_dtype(dtype)
        if values.dtype != want and values.dtype.kind in "iu" and values.dtype.itemsize == want.itemsize:
            return values.view(want)
        return values

    def probe(self, opset: int, dtype: str, sorted_: bool = True) -> str | None:
        """None when IREE compiles and runs a tiny known-good TopK of `opset` on `dtype` with
        `sorted` (three elements, K = 1), else why not, in IREE's words. Asked once per key;
        the adapter's own failures (building the model, the cache) propagate as its own."""
        key = (opset, dtype, bool(sorted_))
        if key not in self._probes:
            form = OnnxTopK(opset, dtype, 1, -1, True, bool(sorted_))
            args = self._args(form, np.arange(3).astype(dtypes.numpy_dtype(dtype)), 1)
            try:
                function = self._function(form, 1)
                function(*args)
                self._probes[key] = None
            except Rejected as exc:
                cause = exc.__cause__ or exc
                self._probes[key] = (f"{self.name} cannot compile a known-good TopK-{opset} on {dtype} with "
                                     f"sorted={int(bool(sorted_))} (3 elements, K=1): {type(cause).__name__}: "
                                     f"{_diagnostics(cause)}")
            except Exception as exc:  # the module compiled but the call failed: IREE's
                self._probes[key] = (f"{self.name} cannot run a known-good TopK-{opset} on {dtype} with "
                                     f"sorted={int(bool(sorted_))} (3 elements, K=1): {type(exc).__name__}: "
                                     f"{first_line(exc)}")
        return self._probes[key]

    def supports(self, case):
        """Decided by probing: IREE refusing the probe of a case's (opset, value type, sorted)
        refuses every such case (Rejected: it rejects a valid descriptor, a finding unless
        declared known). An opset at which float32, sorted, does not compile (TopK-1,
        TopK-10) is unsupported, with IREE's reason. A value type outside the opset's T is
        not probed: the case is invalid."""
        if case.dtype not in dtypes.ONNX_ELEM_TYPES:
            return f"{case.dtype} has no ONNX type"
        from topkspec import spec

        form = onnx_form(case)
        if case.dtype not in spec.value_types(f"onnx:{form.opset}", "TopK"):
            return None
        loadable = self.probe(form.opset, "float32", True)
        if loadable:
            return loadable  # the opset itself does not compile: nothing of it runs
        refused = self.probe(form.opset, case.dtype, form.sorted)
        if refused:
            raise Rejected(refused)
        return None

    def run(self, case, x):
        form = onnx_form(case)
        args = self._args(form, x, int(case.k))
        function = self._function(form, int(case.k))  # Rejected when IREE refuses the model
        try:
            values, indices = function(*args)
            values, indices = np.asarray(values.to_host()), np.asarray(indices.to_host())
        except Exception as exc:  # IREE refused the call
            raise Rejected(f"{self.name}: {type(exc).__name__}: {first_line(exc)}") from exc
        return self._as_case_type(values, case.dtype), indices

    def close(self):
        self._modules.clear()
        self._probes.clear()
        self._config = None


# -- the repro writer -----------------------------------------------------------------------------

def _fill(target, case, _spec=None) -> dict:
    from onnx import TensorProto

    from topkspec.targets.onnx_builder import ir_version_for, repro_node_fields

    form, attributes = repro_node_fields(case)
    return {"opset": form.opset, "ir_version": ir_version_for(form.opset),
            "elem": TensorProto.DataType.Name(dtypes.ONNX_ELEM_TYPES[form.dtype]),
            "attributes": attributes, "driver": getattr(target, "driver", DRIVER),
            "node_inputs": '["X"]' if form.opset < 10 else '["X", "K"]',
            "k_input": "" if form.opset < 10 else ', helper.make_tensor_value_info("K", TensorProto.INT64, [1])',
            "k_arg": "" if form.opset < 10 else ", np.array([k], dtype=np.int64)",
            "flags": repr(list(COMPILE_FLAGS))}


def _stack(target, case, _spec=None):
    form = onnx_form(case)
    driver = getattr(target, "driver", DRIVER)
    k_how = "K as the node's attribute" if form.opset < 10 else "K as a graph input"
    details = [f"one TopK-{form.opset} node, symbolic input dimensions, {k_how}; imported as iree-import-onnx "
               "does (onnx checker, shape inference, iree.compiler.extras.onnx_importer)",
               "iree-compile flags: " + " ".join(COMPILE_FLAGS),
               f"run with iree.runtime on the {driver} driver; unsigned values are read from IREE's signless "
               "buffers as the same bits"]
    if case.family == "dml":
        details.append(f"the {operator_label(case)} case runs lowered to ONNX TopK-{form.opset}")
    return RuntimeStack("IREE", f"TopK-{form.opset}", f"CPU, llvm-cpu on {driver}",
                 versions("iree-base-compiler", "iree-base-runtime", "onnx"), tuple(details))


register_repro_writer("iree", ReproWriter("iree.tmpl",
                                   needs="numpy, onnx, iree-base-compiler and iree-base-runtime",
                                   fill=_fill, stack=_stack),
                      target_class=IreeTarget)
