"""`onnxruntime@X.Y`: another version of ONNX Runtime's CPU provider, in its own environment.

The adapter is onnxruntime.py's OnnxRuntimeTarget (the same models, one session per signature with K
as a graph input, the same probes and verdicts); only the sessions live in a worker under the
environment's interpreter (topkspec.targets.foreign), which needs numpy and that onnxruntime:
kernels/onnxruntime_kernel.py builds each session from the model's bytes with the same session
options. `topkspec env setup onnxruntime@1.31` makes the environment (pip install
"onnxruntime==1.31.*"); TOPKSPEC_ONNXRUNTIME_1_31_PYTHON names one instead. Two versions then
run side by side: `topkspec matrix --targets onnxruntime,onnxruntime@1.31`.
"""
from __future__ import annotations

from topkspec.targets.foreign import ForeignTarget
from topkspec.targets.runtimes.onnxruntime import OnnxRuntimeTarget


class RemoteSession:
    """An InferenceSession that lives in the worker: `run(None, feeds)` as onnxruntime's."""

    def __init__(self, target, model):
        self.target = target
        self.number = target.call("session", model.SerializeToString())

    def run(self, _outputs, feeds):
        return self.target.call("run", self.number, feeds)


class VersionedOrtTarget(ForeignTarget, OnnxRuntimeTarget):
    kernel = "onnxruntime_kernel.py"

    def __init__(self, version: str):
        OnnxRuntimeTarget.__init__(self, f"onnxruntime@{version}", "CPUExecutionProvider",
                                   f"onnxruntime {version} in its own environment (topkspec env setup "
                                   f"onnxruntime@{version})")
        ForeignTarget.__init__(self)
        self.environment = self.name
        self.wanted = version

    def _onnxruntime_providers(self):
        if not ForeignTarget.available(self)[0]:
            raise ImportError(ForeignTarget.available(self)[1])
        return self.call("providers")

    def available(self):
        usable, why = ForeignTarget.available(self)
        return OnnxRuntimeTarget.available(self) if usable else (usable, why)

    def _new_session(self, model):
        return RemoteSession(self, model)

    def version(self) -> str:
        return ForeignTarget.version(self)

    def close(self):
        OnnxRuntimeTarget.close(self)
        ForeignTarget.close(self)


def versioned(version: str) -> VersionedOrtTarget:
    return VersionedOrtTarget(version)
