"""The `directml` target: DirectML.dll itself, through the worker.

Every case becomes a DML_TOP_K1_OPERATOR_DESC (or DML_TOP_K_OPERATOR_DESC) with packed tensors
and goes through IDMLDevice::CreateOperator; one that DirectML refuses is `Rejected` with the
HRESULT's name, one it accepts is compiled (once per descriptor), executed and read back.
Broken descriptors that no Case can carry (outputs of the wrong sizes, a value type that differs
between input and output, a too small TotalTensorSizeInBytes...) reach CreateOperator through
`check_descriptor`, exactly as written.

The worker process is the isolation: a worker that dies is `TargetCrashed`, one that does not
answer in time is killed and `TargetHung`, and the next call starts a fresh one. So the runner
does not wrap this target in a Python worker process of its own (`isolates_itself`): that would
add a pickle round trip and a second process start to every call and, on a hang, kill the
Python wrapper while the Wine process lives on.
"""
from __future__ import annotations

import os

from topkspec.targets.isolation import DEFAULT_TIMEOUT, TargetCrashed, TargetHung
from topkspec.targets.base import Rejected, Target
from topkspec.directml.worker import protocol
from topkspec.directml.client import topk_call
from topkspec.directml.client.worker_process import Worker, WorkerStartError
from topkspec.directml.client.worker_owner import WineWorkerOwner
from topkspec.directml.windows.environment import current_stack
from topkspec.targets.runtimes import directml_repro as repro_writer
from topkspec.targets.runtimes import contracts as runtime_contracts
from topkspec.repro.writers import register_repro_writer

# Descriptor rules whose broken descriptors reach CreateOperator as written although no Case
# carries them. The rest cannot: a missing member or a Strides list of another length has no C
# form, and CreateOperator takes no feature level (dml.operator.available).
DESCRIPTOR_RULES = frozenset({
    "dml.tensor.fields", "dml.tensor.sizes_positive", "dml.rank.same", "dml.dtype.same",
    "dml.direction.enum", "dml.shape.output_values", "dml.shape.output_indices",
    "dml.shape.outputs_same_sizes", "dml.tensor.total_size", "dml.tensor.alignment", "dml.tensor.outputs_distinct",
})


def level_name(level: int) -> str:
    return f"{level >> 12}_{(level >> 8) & 0xF}"


class DirectMLTarget(WineWorkerOwner, Target):
    contract = runtime_contracts.DIRECTML
    name = "directml"
    native = True
    validates = True
    validates_tables = ("dml",)  # CreateOperator enforces the support table of the device's level
    isolates_itself = True  # see the module text
    repro_kind = "directml"  # bug reports replay through the worker (directml_repro.py)
    index_dtype = None
    descriptor_rules = DESCRIPTOR_RULES
    draws_layouts = True  # campaigns draw strides, binding offsets, flags and graphs (the layout group)

    def __init__(self, *, adapter: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        self.adapter = adapter or os.environ.get("TOPKSPEC_DIRECTML_ADAPTER") or "auto"
        self.timeout = timeout
        self._start_error: str | None = None
        self._restarts = 0
        #: executions, how many compiled a new operator, and the worker's own time in each step
        self.stats = {"calls": 0, "compiled": 0, "create_us": 0.0, "compile_us": 0.0, "execute_us": 0.0}
        #: what the last call left in its output buffers, whole (a call with a layout; else None)
        self.kept = {"buffers": None}

    # -- the stack and the device ---------------------------------------------------------

    def _find_stack(self):
        return current_stack()

    def _new_worker(self) -> Worker:
        return Worker(self.stack, adapter=self.adapter, timeout=self.timeout)

    @property
    def device(self) -> dict:
        """The worker's description of its device (starts the worker)."""
        return self._worker_started().info

    def _device_if_started(self) -> dict | None:
        if self._worker is not None and self._worker.info and not self._start_error:
            return self._worker.info
        if self._start_error is None and not self.stack.missing:
            try:
                return self.device
            except Exception as exc:  # reported by available()
                self._start_error = f"{type(exc).__name__}: {exc}"
        return None

    @property
    def feature_level(self) -> int | None:
        info = self._device_if_started()
        return info.get("feature_level") if info else None

    def available(self):
        stack = self.stack
        if stack.missing:
            return False, "; ".join(stack.missing)
        try:
            self._worker_started()
        except WorkerStartError as exc:
            self._start_error = str(exc)
            return False, f"the worker could not make its device: {exc} ({stack.describe()})"
        except (TargetCrashed, TargetHung, OSError) as exc:
            self._start_error = str(exc)
            return False, f"the worker did not start: {exc} ({stack.describe()})"
        return True, ""

    def version(self) -> str:
        stack = self.stack
        if stack.dll_version is None:
            return "DirectML (not set up)"
        text = f"DirectML {stack.dll_version}"
        info = self._device_if_started()
        if info:
            text += f" on {info.get('adapter') or '?'}"
            if info.get("feature_level"):
                text += f" (feature level {level_name(info['feature_level'])})"
        if stack.under_wine:
            text += f"; under {stack.layers()}"
        return text

    @property
    def default_profile(self) -> str:
        level = self.feature_level
        if level:
            return f"dml:{level >> 12}.{(level >> 8) & 0xF}"
        return "dml:5.0"

    def report_stack(self) -> dict:
        """Everything a report should name: DirectML, the adapter, and under Wine the layers beneath."""
        info = self._device_if_started() or {}
        stack = self.stack
        return {
            **stack.to_dict(),
            "adapter": info.get("adapter"),
            "software_adapter": info.get("software"),
            "feature_level": level_name(info["feature_level"]) if info.get("feature_level") else None,
            "lane_workaround": info.get("lane_workaround"),
            "summary": self.version(),
        }

    # -- the Target interface --------------------------------------------------------------

    def lowered(self, case):
        """The DirectML case to run: a DirectML case itself; an ONNX case lowered as a
        DirectML-backed runtime must (rules lower.*): the axis normalised, `largest` as the
        direction, `sorted` dropped (sorted output answers both), UINT32 indices (widened to
        int64 on the way back). An axis out of range stays out of range, for DirectML to refuse."""
        if case.family == "dml":
            return case
        level = self.feature_level or 0x5000
        axis = case.axis + case.rank if -case.rank <= case.axis < 0 else case.axis
        return case.with_(profile=f"dml:{level_name(level).replace('_', '.')}", op="TOP_K1", axis=axis,
                          sorted=True, index_dtype="uint32")

    def supports(self, case):
        info = self.device
        if case.family != "dml":
            if str(case.dtype).upper() not in protocol.DATA_TYPES or case.dtype == "float64":
                return f"DirectML's TopK has no {case.dtype} values (rule lower.dtype)"
            if not 1 <= case.rank <= 8:
                return f"DirectML's TopK takes 1 to 8 dimensions, not {case.rank} (rule lower.rank)"
            case = self.lowered(case)
        for role, dtype in (("values", case.dtype), ("indices", case.index_dtype)):
            code = protocol.DATA_TYPES.get(str(dtype).upper())
            if code is None:
                return f"DirectML has no {dtype} tensor type ({role})"
            answer = (info.get("types") or {}).get(str(code))
            if answer is not None and not answer[0]:
                return (f"the device ({info.get('adapter')}) reports DML_TENSOR_DATA_TYPE_{str(dtype).upper()} "
                        f"unsupported (DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT)")
        return self._level_gap(case, info)

    def _level_gap(self, case, info) -> str | None:
        """A reason when the case's profile is below the device's level and the two levels'
        tables judge the case differently: DirectML judges by its own level only."""
        from topkspec import spec

        level = info.get("feature_level")
        profile = spec.parse_profile(case.profile)
        if not level or profile.family != "dml" or profile.level >= level:
            return None
        desc = spec.descriptor(case)
        here = {f.rule for f in spec.validate(desc, case.profile)}
        there = {f.rule for f in spec.validate(desc, f"dml:{level_name(level)}")}
        if here == there:
            return None
        return (f"DirectML judges by its device's feature level {level_name(level)}, which allows what "
                f"{profile.name} forbids ({', '.join(sorted(here - there))}): it cannot speak to {profile.name}")

    def run(self, case, x):
        if case.family != "dml":  # ONNX: lowered to TOP_K1, indices widened to int64 (lower.indices)
            values, indices = self.run(self.lowered(case), x)
            return values, indices.astype(case.index_dtype)
        try:
            return topk_call.run_case(self._worker_started, case, x, self.stats, self.kept)
        except protocol.Inexpressible as exc:
            raise Rejected(f"directml: no DML_{case.op}_OPERATOR_DESC can hold this case: {exc}") from None
        except topk_call.DeviceLost as exc:
            raise TargetCrashed(str(exc)) from None
        except topk_call.Refused as exc:
            raise Rejected(str(exc)) from None

    def last_output_buffers(self):
        """What the last call with a layout left in its two output buffers, whole
        (client.layout_call.OutputBuffers), or None."""
        return self.kept["buffers"]

    def check_descriptor(self, descriptor) -> dict | None:
        """DirectML's verdict on a JSON descriptor, exactly as written: {"accepted", "detail",
        "hresult", "micros"}; None when no C struct can hold it (see protocol.Inexpressible)."""
        return topk_call.create_operator(self._worker_started, descriptor)

    def verdict(self, descriptor) -> dict:
        """The `validate --against directml` entry for one descriptor (an ONNX node is first
        lowered to DML_TOP_K1 as spec.lower_onnx_to_dml says)."""
        if isinstance(descriptor, dict) and "op_type" in descriptor:
            from topkspec import spec

            level = self.feature_level
            try:
                lowering = spec.lower_onnx_to_dml(descriptor, level_name(level) if level else "6_4")
            except ValueError as exc:
                lowering, why = None, str(exc)
            else:
                why = ", ".join(f.rule for f in lowering.violations)
            if lowering is None or not lowering.ok:
                return {"target": self.name, "accepted": False, "expressible": False,
                        "detail": f"not lowered to DML_TOP_K1: {why}"}
            answer = self.verdict(lowering.descriptor)
            return {**answer, "detail": f"lowered to DML_TOP_K1: {answer['detail']}"}
        try:
            protocol.encode_descriptor(descriptor)
        except protocol.Inexpressible as exc:
            return {"target": self.name, "accepted": False, "expressible": False,
                    "detail": f"not expressible as a DirectML struct: {exc}"}
        result = self.check_descriptor(descriptor)
        return {"target": self.name, "accepted": result["accepted"], "detail": result["detail"]}

    def crash(self) -> None:
        """Makes the worker crash (for tests of crash handling): raises TargetCrashed."""
        self._worker_started().call(protocol.CMD_CRASH, doing="crashing on purpose")

    def hang(self, timeout: float = 2.0) -> None:
        """Makes the worker hang (for tests of hang handling): raises TargetHung."""
        self._worker_started().call(protocol.CMD_HANG, timeout=timeout, doing="hanging on purpose")

    @property
    def restarts(self) -> int:
        """Workers started again after a crash or hang (over this target's life)."""
        return self._restarts + max(0, (self._worker.starts if self._worker else 0) - 1)

    def close(self) -> None:
        if self._worker is not None:
            self._restarts += max(0, self._worker.starts - 1)
            self._worker.close()
            self._worker = None


def report_stack(target=None) -> dict:
    """The stack a finding ran on: DirectML version and FileVersion, the adapter and feature
    level, and under Wine the Wine, vkd3d and Mesa versions (`summary` is one line of it)."""
    if target is not None:
        return target.report_stack()
    made = DirectMLTarget()
    try:
        if made.available()[0]:
            return made.report_stack()
        return {**made.stack.to_dict(), "summary": made.version()}
    finally:
        made.close()


register_repro_writer("directml", repro_writer.writer(DirectMLTarget), target_class=DirectMLTarget)
