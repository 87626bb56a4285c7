"""ONNX Runtime targets: one adapter, parameterised by execution provider.

The CPU, CUDA and DirectML targets share every line but the provider name and its session
options. K is a graph input (the DirectML EP reads it from CPU memory when it creates the DML
operator, rule lower.k_constant), so each target caches one session per signature. Input
dimensions are symbolic, so one session serves every shape. Off Windows, the DirectML target's
sessions live in the Windows build of ONNX Runtime under Wine (directml_ep.py).
"""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target, first_line
from topkspec.targets.isolation import TargetCrashed, TargetHung
from topkspec.targets.onnx_builder import (OnnxTopK, build_case_model, build_topk_model, graph_detail,
                                           keep_recent_graphs, model_key, newest_opset_profile, onnx_form,
                                           onnx_repro_fill)
from topkspec.repro.writers import ReproWriter, RuntimeStack, operator_label, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts


# ONNX value types DirectML's TopK has no tensor type for (rule lower.dtype).
NO_DML_TYPE = frozenset({"float64", "bfloat16"})


def session_options(provider: str):
    """The SessionOptions a provider needs.

    DmlExecutionProvider does not support memory patterns or parallel execution (ONNX
    Runtime's DirectML documentation), so both are off for it. Every provider but the CPU
    one refuses CPU fallback, so a node the provider cannot run fails the session (it is
    reported unsupported) instead of silently running on the CPU.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4  # fatal only: errors come back as exceptions, warnings are expected
    # A fuzz run keeps a session per signature, hundreds of them: an arena each, grown to the
    # largest input it saw and never given back, costs memory and time (an allocator choice,
    # not a kernel one: TopK computes the same either way).
    options.enable_cpu_mem_arena = False
    # Threads that spin between runs would take the cores from the run itself (a process-wide
    # pool, which Python cannot stop spinning, cost a core). Kernels still run on the pool.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if provider == "DmlExecutionProvider":
        options.enable_mem_pattern = False
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if provider != "CPUExecutionProvider":
        options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    return options


class OnnxRuntimeTarget(Target):
    contract = runtime_contracts.onnx_importer("ONNX Runtime (ONNX TopK)")
    validates = True  # refuses K above the size and an out-of-range axis (the CPU provider accepts K=0)
    validates_tables = ("onnx",)  # the model checker holds inputs to the opset's T and I
    native = True
    index_dtype = "int64"

    def __init__(self, name: str, provider: str, needs: str, *, k_constant: bool = False,
                 native_profile: str | None = None):
        self.name = name
        self.provider = provider
        self.needs = needs  # what it takes to make the provider available, for the reason
        self.k_constant = k_constant
        self._native_profile = native_profile
        self._sessions: dict = {}  # key -> InferenceSession or the exception building it raised
        self._probes: dict = {}  # (opset, dtype) -> None (it runs) or why not
        self.sessions_built = 0

    def version(self) -> str:
        try:
            import onnxruntime as ort
        except ImportError:
            return "not installed"
        return f"onnxruntime {ort.__version__} ({self.provider})"

    def _onnxruntime_providers(self) -> list:
        import onnxruntime as ort

        return ort.get_available_providers()

    def available(self):
        try:
            providers = self._onnxruntime_providers()
        except ImportError as exc:
            return False, f"{self.needs}: onnxruntime does not import ({exc})"
        if self.provider not in providers:
            return False, (f"{self.needs}: {self.provider} not in "
                           f"onnxruntime.get_available_providers() ({', '.join(providers)})")
        if self.provider != "CPUExecutionProvider":
            # Listed is not enough (a GPU build without its driver or libraries lists it):
            # a float32 session must build on the provider alone.
            try:
                self._session(OnnxTopK(11, "float32", 1, -1, True, True), 1)
            except Rejected as exc:
                first = first_line(exc.__cause__ or exc)
                return False, f"{self.needs}: {self.provider} is listed but a session on it fails: {first}"
        return True, ""

    @property
    def default_profile(self) -> str:
        """The given native profile, else the newest ONNX TopK version this provider runs
        (float32, the one type every version has); onnx:24 when it cannot be asked."""
        if self._native_profile is None:
            self._native_profile = newest_opset_profile(self.probe) if self.available()[0] else "onnx:24"
        return self._native_profile

    @property
    def graph_contexts(self) -> bool:
        """Whether a case's TopK runs inside its graph (spec.graphs). Not on the GPU providers:
        with CPU fallback off, a Shape or Cast node the provider leaves to the CPU fails the
        session by design, which says nothing of its TopK."""
        return self.provider not in ("CUDAExecutionProvider", "DmlExecutionProvider")

    @property
    def k_forms(self) -> tuple:
        """K as a graph input or as an initializer (Case.k_form), the target's own way first."""
        return ("constant", "input") if self.k_constant else ("input", "constant")

    def _constant(self, case=None) -> bool:
        """Whether K goes into the model as an initializer for `case` (its k_form, else the target's way)."""
        form = getattr(case, "k_form", None)
        return self.k_constant if form is None else form == "constant"

    def _key(self, form: OnnxTopK, k: int, constant: bool):
        k_in_model = form.opset < 10 or constant
        return (form, constant, k if k_in_model else None)

    def _new_session(self, model):
        """An InferenceSession for `model` on this target's provider (the runtime's own call)."""
        import onnxruntime as ort

        return ort.InferenceSession(model.SerializeToString(), session_options(self.provider),
                                    providers=[self.provider])

    def _session(self, form: OnnxTopK, k: int, constant: bool | None = None, *, model=None, key=()):
        """The cached session for this form (and K when K is in the model; `model` and its
        `key`: a graph context's model). A session the runtime refused to build is cached as
        its exception and raised again as Rejected; building the model is the adapter's own
        code, outside that."""
        constant = self.k_constant if constant is None else constant
        key = self._key(form, k, constant) + key
        if key not in self._sessions:
            model = model or build_topk_model(form, k=k, k_as_input=not constant)
            try:
                self._sessions[key] = self._new_session(model)
                self.sessions_built += 1
            except (TargetCrashed, TargetHung):  # a worker process died or hung: not a refusal
                raise
            except Exception as exc:  # the runtime refused the model (a missing kernel, an invalid node)
                self._sessions[key] = exc
        session = self._sessions[key]
        if isinstance(session, Exception):
            raise Rejected(f"{self.name}: {type(session).__name__}: {session}") from session
        return session

    def _feeds(self, form: OnnxTopK, x, k: int, constant: bool | None = None) -> dict:
        feeds = {"X": np.ascontiguousarray(x)}
        if form.opset >= 10 and not (self.k_constant if constant is None else constant):
            feeds["K"] = np.array([k], dtype=np.int64)
        return feeds

    def probe(self, opset: int, dtype: str) -> str | None:
        """None when this runtime loads and runs a tiny known-good TopK of `opset` on `dtype`
        (three elements, K = 1), else why not, in the runtime's words. Asked once per
        (opset, dtype). Only the runtime's own refusal is an answer: a failure of the
        adapter's code (building the model or the feeds) propagates as the adapter's."""
        key = (opset, dtype)
        if key not in self._probes:
            form = OnnxTopK(opset, dtype, 1, -1, True, True)
            x = np.arange(3).astype(dtypes.numpy_dtype(dtype))
            feeds = self._feeds(form, x, 1)
            try:
                session = self._session(form, 1)
                session.run(None, feeds)
                self._probes[key] = None
            except (TargetCrashed, TargetHung):
                raise
            except Exception as exc:  # the session refused to build, or the run failed: the runtime's
                cause = exc.__cause__ if isinstance(exc, Rejected) and exc.__cause__ else exc
                # the signature's refusal, whatever the case's shape: no shape of the probe in it
                self._probes[key] = (f"{self.name} runs no TopK-{opset} on {dtype}: "
                                     f"{type(cause).__name__}: {first_line(cause)}")
        return self._probes[key]

    # supports() looks at the opset (from the profile), the operator and the value type only
    support_fields = ("profile", "op", "dtype")

    def supports(self, case):
        """Decided by probing, not by error texts: a case whose (opset, value type) the spec
        allows is supported when the tiny probe of that signature runs; when the runtime
        refuses the probe, it refuses every such case (Rejected: it rejects a valid
        descriptor, a finding unless declared known). An opset the runtime cannot load at all
        (float32, which every TopK version has, fails too: a runtime older than the opset) is
        unsupported, with the runtime's reason. A value type outside the opset's T is
        not probed: the case breaks onnx.dtype.T, and refusing it is the runtime's job."""
        if case.dtype not in dtypes.ONNX_ELEM_TYPES:
            return f"{case.dtype} has no ONNX type"
        from topkspec import spec

        form = onnx_form(case)
        if case.dtype not in spec.value_types(f"onnx:{form.opset}", "TopK"):
            return None
        if form.dtype != "float32" and self.probe(form.opset, "float32"):  # nothing of this opset runs
            return (f"TopK-{form.opset} does not run here on any type, float32 included: "
                    f"{self.probe(form.opset, 'float32')}")
        refused = self.probe(form.opset, case.dtype)
        if refused:
            if form.dtype == "float32":  # float32, in every TopK version, fails: the opset is not loadable
                return refused
            if self.provider == "DmlExecutionProvider" and case.dtype in NO_DML_TYPE:
                # The EP places only what DirectML's TopK takes (rule lower.dtype); with CPU
                # fallback off it refuses the rest, in its own words.
                return f"{refused} (rule lower.dtype: DirectML's TopK has no {case.dtype} values)"
            raise Rejected(refused)
        return None

    def run(self, case, x):
        form, constant = onnx_form(case), self._constant(case)
        if getattr(case, "context", None):  # the TopK inside a graph (spec.graphs): one model per sizes and K
            model, feeds = build_case_model(form, case, x, k_as_input=not constant)
            session = self._session(form, int(case.k), constant, model=model, key=model_key(case, x))
            keep_recent_graphs(self._sessions)
        else:
            feeds = self._feeds(form, x, int(case.k), constant)
            session = self._session(form, int(case.k), constant)  # Rejected when the runtime refuses the model
        try:
            values, indices = session.run(None, feeds)[:2]  # a graph's further outputs follow
        except (TargetCrashed, TargetHung):
            raise
        except Exception as exc:  # the runtime refused the call
            raise Rejected(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        return values, indices

    def close(self):
        self._sessions.clear()
        self._probes.clear()


def cpu() -> OnnxRuntimeTarget:
    return OnnxRuntimeTarget("onnxruntime", "CPUExecutionProvider",
                             "the onnxruntime package (pip install onnxruntime)")


def cuda() -> OnnxRuntimeTarget:
    return OnnxRuntimeTarget("onnxruntime-cuda", "CUDAExecutionProvider",
                             "onnxruntime-gpu with an NVIDIA GPU, CUDA and cuDNN")


# -- bug reports: repro.py in onnxruntime's own API -------------------------------------------

def session_lines(provider: str) -> list[str]:
    """The settings of `session_options` that bear on a repro, as code."""
    lines = ["options.log_severity_level = 4", "options.enable_cpu_mem_arena = False"]
    if provider == "DmlExecutionProvider":
        lines += ["options.enable_mem_pattern = False",
                  "options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL"]
    if provider != "CPUExecutionProvider":
        lines.append('options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")')
    return lines


_DEVICES = {"CPUExecutionProvider": "CPU", "CUDAExecutionProvider": "CUDA", "DmlExecutionProvider": "DirectML"}


def _repro_fill(target, case, _spec) -> dict:
    provider = getattr(target, "provider", "CPUExecutionProvider")
    return {**onnx_repro_fill(target, case), "provider": provider,
            "session_options": "\n".join("    " + line for line in session_lines(provider))}


def _repro_stack(target, case, _spec=None) -> RuntimeStack:
    provider = getattr(target, "provider", "CPUExecutionProvider")
    form = onnx_form(case)
    k_how = ("K as the node's attribute" if form.opset < 10 else
             "K compiled into the model as an initializer" if getattr(target, "k_constant", False)
             else "K as a graph input")
    details = [f"execution provider {provider}; session options: " + "; ".join(session_lines(provider)),
               f"one TopK-{form.opset} node, symbolic input dimensions, {k_how}", *graph_detail(case)]
    if case.family == "dml":
        details.append(f"the {operator_label(case)} case runs lowered to ONNX TopK-{form.opset}")
    return RuntimeStack("ONNX Runtime", f"TopK-{form.opset}", _DEVICES.get(provider, provider),
                        versions("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml", "onnx"), tuple(details))


register_repro_writer("onnxruntime", ReproWriter("onnxruntime.tmpl", "numpy, onnx and onnxruntime",
                                                 _repro_fill, _repro_stack), target_class=OnnxRuntimeTarget)
