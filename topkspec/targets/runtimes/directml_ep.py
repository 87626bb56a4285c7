"""`onnxruntime-directml` on Linux: ONNX Runtime's DirectML execution provider, the Windows
build, under Wine.

The adapter is onnxruntime.py's OnnxRuntimeTarget (the same models, one session per signature with K as
a graph input, the same probes and verdicts); only the session lives elsewhere: in
topk_ort_worker.exe on onnxruntime.dll (directml.client.ep_worker), with CPU fallback off so a TopK the EP
cannot place is refused with ONNX Runtime's own message. The worker process is the isolation,
as for the `directml` target: a crash or a hang ends it and the next call starts a fresh one.
`directml()` is the registry's `onnxruntime-directml`: this target off Windows, onnxruntime.py's on it.
"""
from __future__ import annotations

import os

from topkspec.directml.client.worker_process import WorkerStartError
from topkspec.directml.client.worker_owner import WineWorkerOwner
from topkspec.directml.client.ep_worker import PROVIDERS, OrtWorker, WorkerSession, ep_stack
from topkspec.targets.isolation import DEFAULT_TIMEOUT, TargetCrashed, TargetHung
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer
from topkspec.targets.runtimes.directml_repro import WINE_CAUTION
from topkspec.targets.runtimes.onnxruntime import OnnxRuntimeTarget, _repro_fill
from topkspec.targets.runtimes.onnxruntime import _repro_stack as ort_stack

NEEDS = "topkspec directml setup (Wine, lavapipe and the Windows onnxruntime.dll with the DirectML EP)"


class WineOrtTarget(WineWorkerOwner, OnnxRuntimeTarget):
    isolates_itself = True  # the worker process is the isolation (see the module text)
    repro_kind = "onnxruntime-wine"  # repro.py in onnxruntime's API; the stack names Wine (below)

    def __init__(self, provider: str = "dml", *, name: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        super().__init__(name or ("onnxruntime-directml" if provider == "dml" else "onnxruntime-windows-cpu"),
                         PROVIDERS[provider], NEEDS, native_profile="dml:5.0" if provider == "dml" else None)
        self.worker_provider = provider
        self.timeout = timeout

    def _find_stack(self):
        return ep_stack()

    def _new_worker(self) -> OrtWorker:
        return OrtWorker(self.stack, provider=self.worker_provider, timeout=self.timeout)

    @property
    def info(self) -> dict:
        """The worker's ready frame: ONNX Runtime's version, the providers, the DLLs it loaded."""
        return self._worker_started().info

    def available(self):
        if self.stack.missing:
            return False, f"{self.needs}: " + "; ".join(self.stack.missing)
        try:
            self._worker_started()
        except (WorkerStartError, TargetCrashed, TargetHung, OSError) as exc:
            return False, f"the ONNX Runtime worker did not start: {exc} ({self.stack.describe()})"
        return super().available()

    def _onnxruntime_providers(self):
        return self.info.get("providers") or []

    def version(self) -> str:
        stack = self.stack
        if stack.missing:
            return "onnxruntime (Windows build; not set up)"
        try:
            info = self.info
        except Exception as exc:  # reported by available()
            return f"onnxruntime (Windows build; the worker did not start: {exc})"
        text = f"onnxruntime {info.get('onnxruntime') or '?'} ({self.provider}, Windows build)"
        if self.worker_provider == "dml":
            text += f", DirectML {stack.dll_version or '?'}"
        if stack.under_wine:
            text += f"; under {stack.layers()}" + ("" if stack.bundle is not None else " lavapipe")
        return text

    def report_stack(self) -> dict:
        info = {}
        if not self.stack.missing:
            try:
                info = self.info
            except Exception:  # the stack still names what is installed
                info = {}
        return {**self.stack.to_dict(), "onnxruntime": info.get("onnxruntime"), "provider": self.provider,
                "onnxruntime_dll": info.get("onnxruntime_dll") or str(self.stack.ort_dll),
                "directml_dll_loaded": info.get("directml_dll"), "summary": self.version()}

    def _new_session(self, model):
        return WorkerSession(self._worker_started(), model.SerializeToString())

    def close(self):
        super().close()
        if self._worker is not None:
            self._worker.close()
            self._worker = None


def directml() -> OnnxRuntimeTarget:
    """The DirectML EP: on Windows the onnxruntime-directml wheel; elsewhere its Windows build
    under Wine (WineOrtTarget above). DirectML's native profile: the DML_FEATURE_LEVEL_5_0
    table (64-bit types). K is a graph input, as the EP reads it from CPU memory at run time."""
    if os.name != "nt":
        return WineOrtTarget()
    return OnnxRuntimeTarget("onnxruntime-directml", "DmlExecutionProvider",
                             "onnxruntime-directml on Windows with a DirectX 12 GPU", native_profile="dml:5.0")


# -- bug reports: repro.py as a Windows user runs it, and the replay on Linux ------------------

REPLAY = ("On Linux, `topkspec directml layers DIR` (DIR: this report's folder) replays the case through this "
          "onnxruntime.dll under Wine (topkspec's topk_ort_worker.exe, the session options above), through "
          "DirectML.dll directly and through ONNX Runtime's CPU provider, side by side")


def _repro_stack(target, case, spec_text=None):
    made = ort_stack(target, case, spec_text)
    info = target.report_stack()
    versions = {"onnxruntime (Windows build)": info.get("onnxruntime") or "?",
                "DirectML": info.get("directml_file_version") or info.get("directml") or "?"}
    details = list(made.details) + [f"onnxruntime.dll {info.get('onnxruntime_dll')}, DirectML.dll loaded: "
                                    f"{info.get('directml_dll_loaded') or '?'}", REPLAY]
    if info.get("platform") == "wine":
        versions.update({"Wine": info.get("wine") or "?", "vkd3d": info.get("vkd3d") or "?",
                         "Mesa": info.get("mesa") or "?"})
        details.append(WINE_CAUTION.replace("rather than DirectML", "rather than ONNX Runtime or DirectML"))
    return RuntimeStack(made.runtime, made.operator, made.device, versions, tuple(details))


register_repro_writer("onnxruntime-wine", ReproWriter("onnxruntime.tmpl", "numpy, onnx and onnxruntime-directml "
                                                      "(Windows)", _repro_fill, _repro_stack),
                      target_class=WineOrtTarget)
