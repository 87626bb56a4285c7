"""ONNX Runtime's Windows build under Wine: topk_ort_worker.exe, its process and its sessions.

`OrtWorker` is the DirectML worker's process handling (client.Worker: start, time limits, crash
and hang) with another program: ort_worker.c on onnxruntime.dll, with the DirectML execution
provider (CPU fallback off) or the CPU provider. `WorkerSession` stands where an
`onnxruntime.InferenceSession` would: `run(None, feeds)` returns [Values, Indices] or raises
OnnxRuntimeError with ONNX Runtime's own message. A session remembers its model and loads it
again in a worker started after a crash or a hang.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from topkspec.spec import dtypes
from topkspec.directml.worker import ort_protocol, protocol
from topkspec.directml.client.worker_process import COMPILE_TIMEOUT, Worker, wine_command
from topkspec.directml.worker.build import built_worker, missing_worker
from topkspec.directml.windows.environment import DirectMLStack, ort_dll, platform_stack, to_windows_path

PROVIDERS = {"dml": "DmlExecutionProvider", "cpu": "CPUExecutionProvider"}
OUTPUTS = ("Values", "Indices")  # onnx_builder's output names
ELEMENT_TYPES = {code: name for name, code in dtypes.ONNX_ELEM_TYPES.items()}


@dataclasses.dataclass
class EpStack(DirectMLStack):
    """The layers beneath (Wine, Mesa) and ONNX Runtime's onnxruntime.dll with its DirectML.dll."""

    ort_dll: object = None


def ep_stack() -> EpStack:
    """What the ONNX Runtime worker runs on, with exactly what is missing."""
    base = platform_stack()
    stack = EpStack(**{f.name: getattr(base, f.name) for f in dataclasses.fields(DirectMLStack)})
    if stack.platform not in ("windows", "wine"):
        return stack
    stack.ort_dll = ort_dll()
    if stack.ort_dll is None and stack.bundle is not None:
        stack.missing.append(f"the bundle {stack.bundle} has no onnxruntime.dll (it was made without --with-ep)")
    elif stack.ort_dll is None:
        stack.missing.append("the Windows onnxruntime.dll with the DirectML execution provider is not installed: "
                             "run `topkspec directml setup`")
    else:
        from topkspec.directml.windows.environment import pe_file_version, short_version

        stack.dll = stack.ort_dll.parent / "DirectML.dll"
        stack.dll_file_version = pe_file_version(stack.dll)
        stack.dll_version = short_version(stack.dll_file_version)
        stack.dll_chosen_by = "beside onnxruntime.dll"
    if stack.bundle is not None and stack.ort_dll is not None:
        from topkspec.directml.windows.bundle_stack import bundle_program

        carried, why = bundle_program(stack.bundle, "topk_ort_worker.exe", "ort_worker_source", "ort_worker")
        stack.worker = carried or built_worker("ort_worker")
        if stack.worker is None:
            stack.missing.append(why)
        return stack
    stack.worker = built_worker("ort_worker")
    if stack.worker is None:
        stack.missing.append(missing_worker("ort_worker"))
    return stack


class OrtWorker(Worker):
    label = "onnxruntime-directml"

    def __init__(self, stack: EpStack, *, provider: str = "dml", timeout: float = 5.0):
        super().__init__(stack, timeout=timeout)
        self.provider = provider
        if provider == "cpu":
            self.label = "onnxruntime (Windows build, CPU provider)"

    def command(self) -> list[str]:
        args = [str(self.stack.worker), "--ort", to_windows_path(self.stack.ort_dll), "--provider", self.provider]
        return wine_command(self.stack) + args if self.stack.under_wine else args

    def load(self, model: bytes) -> int:
        """A session id for the model in this process; raises OnnxRuntimeError."""
        status, _, payload = self.call(ort_protocol.CMD_LOAD, model, timeout=max(self.timeout, COMPILE_TIMEOUT),
                                       doing="creating a session")
        if protocol.failed(status):
            raise ort_protocol.parse_error(payload)
        return int.from_bytes(payload[:4], "little")

    def run(self, session: int, feeds: dict, *, first: bool = False) -> tuple[list, float]:
        """([Values, Indices] as numpy arrays, microseconds); raises OnnxRuntimeError."""
        inputs = []
        for name, array in feeds.items():
            array = np.ascontiguousarray(array)
            inputs.append((name, dtypes.ONNX_ELEM_TYPES[dtypes.canonical(array.dtype.name)], array.shape,
                           array.tobytes()))
        timeout = max(self.timeout, COMPILE_TIMEOUT) if first else self.timeout
        status, _, payload = self.call(ort_protocol.CMD_RUN, ort_protocol.run_payload(session, inputs, OUTPUTS),
                                       timeout=timeout, doing="running" + (" (first time: compiling)" if first else ""))
        if protocol.failed(status):
            raise ort_protocol.parse_error(payload)
        outputs, micros = ort_protocol.parse_outputs(payload, len(OUTPUTS))
        arrays = [np.frombuffer(data, dtype=dtypes.numpy_dtype(ELEMENT_TYPES[element_type])).reshape(dims).copy()
                  for element_type, dims, data in outputs]
        return arrays, micros


class WorkerSession:
    """One model's session in the worker (see the module text)."""

    def __init__(self, worker: OrtWorker, model: bytes):
        self.worker = worker
        self.model = model
        self._id = None
        self._process = None  # the worker process the id belongs to
        self._ensure()

    def _ensure(self) -> int:
        self.worker.start()
        if self._process is not self.worker.process:
            self._id, self._process, self._ran = self.worker.load(self.model), self.worker.process, False
        return self._id

    def run(self, _output_names, feeds: dict) -> list:
        session = self._ensure()
        arrays, _ = self.worker.run(session, feeds, first=not self._ran)
        self._ran = True
        return arrays
