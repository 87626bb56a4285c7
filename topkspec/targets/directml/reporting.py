"""What a bug report from the directml target needs: the whole stack, a caution about the
translation layers, and a repro that replays the case through the same worker.

`report_stack()` -> dict, `report_markdown(stack)` -> the report's "DirectML stack" section,
`write_repro(folder, ...)` -> writes repro_directml.py (a copy of repro_program.py: numpy only,
no topkspec), directml_repro.json, directml_inputs.npz and, for wrong results, directml_expected.npz.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

from topkspec.targets.directml import protocol
from topkspec.targets.directml.client import START_TIMEOUT, Display, worker_command, worker_environment
from topkspec.targets.directml.environment import current_stack

PROGRAM = Path(__file__).resolve().parent / "repro_program.py"
REPRO_NAME = "repro_directml.py"
# Environment variables the worker needs beyond the user's own (under Wine).
_WORKER_ENV = ("WINEPREFIX", "WINEDEBUG", "WINEDLLOVERRIDES", "VKD3D_CONFIG", "WINEARCH", "VK_ICD_FILENAMES",
               "LD_LIBRARY_PATH")
RELATIONS = ("result", "accept", "reject", "crash", "hang", "deterministic", "prefix", "axis_moves", "same")


def report_stack(target=None) -> dict:
    """The stack a finding ran on: DirectML version and FileVersion, the adapter and feature
    level, and under Wine the Wine, vkd3d and Mesa versions (`summary` is one line of it)."""
    if target is not None and hasattr(target, "report_stack"):
        return target.report_stack()
    from topkspec.targets.directml.target import DirectMLTarget

    made = DirectMLTarget()
    try:
        if made.available()[0]:
            return made.report_stack()
        return {**made.stack.to_dict(), "summary": made.version()}
    finally:
        made.close()


def report_markdown(stack: dict) -> str:
    """The report section naming the stack, with the caution about Wine's translation layers."""
    lines = ["## DirectML stack", "",
             f"- **DirectML**: {stack.get('directml') or '?'} (FileVersion {stack.get('directml_file_version') or '?'}), "
             f"`{stack.get('dll')}`",
             f"- **Adapter**: {stack.get('adapter') or '?'}"
             + (" (software)" if stack.get("software_adapter") else "")
             + f", DirectML feature level {stack.get('feature_level') or '?'}"]
    if stack.get("platform") == "wine":
        lines += [f"- **Under Wine**: {stack.get('wine') or '?'}; Direct3D 12 by vkd3d {stack.get('vkd3d') or '?'} "
                  f"(inside Wine's d3d12.dll); Vulkan by Mesa {stack.get('mesa') or '?'} lavapipe (CPU)",
                  "",
                  "This ran DirectML.dll under Wine: DirectML's own validation and shaders, but executed through "
                  "Wine's d3d12 (vkd3d), Vulkan and Mesa's lavapipe. A refusal or acceptance by CreateOperator is "
                  "DirectML's own; a wrong result, a crash or a hang may come from those translation layers rather "
                  "than DirectML. Confirm it on Windows (a GPU, or WARP) before filing it with DirectML: "
                  "`python repro_directml.py` replays it there with the worker built for Windows."]
    else:
        lines += ["- **Platform**: Windows (native Direct3D 12)"]
    if stack.get("lane_workaround"):
        lines.append("- The worker reported non-zero wave lane counts to this old DirectML (vkd3d reports 0).")
    return "\n".join(lines) + "\n"


def _call_entry(case, x) -> dict:
    desc = protocol.case_descriptor(case)
    shape = list(case.out_shape) if 0 <= case.norm_axis < case.rank else list(case.shape)
    return {"descriptor": desc, "encoded": protocol.encode_descriptor(desc).hex(), "dtype": case.dtype,
            "index_dtype": case.index_dtype, "out_shape": shape, "axis": case.norm_axis, "k": case.k,
            "largest": bool(case.largest) if case.op == "TOP_K1" else True, "describe": case.describe()}


def write_repro(folder, case=None, x=None, *, relation: str = "result", calls=None, descriptor=None,
                failure: str = "", rules=(), expected=None, timeout: float = 30.0, target=None) -> list[str]:
    """Writes the DirectML repro into `folder`; returns the file names written.

    relation: what repro_directml.py checks (exit 1 while it holds): "result" (wrong values or
    indices: bit for bit against `expected`, the reference's by default; with NaN in the input,
    the NaN-policy-free checks), "accept" (a valid descriptor is refused), "reject" (an invalid
    one is accepted), "crash", "hang", "deterministic", and the two-call relations "prefix"
    (calls: K large, then K small), "axis_moves" (calls: original, moved) and "same" (calls:
    TOP_K1 DECREASING, then TOP_K). `calls` is [(case, x), ...]; `case, x` is one call.
    `descriptor`: a broken JSON descriptor no Case carries (relation "reject" or "crash").
    """
    if relation not in RELATIONS:
        raise ValueError(f"unknown relation {relation!r}: one of {', '.join(RELATIONS)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    calls = list(calls or ([(case, x)] if case is not None else []))
    entries, arrays = [], {}
    for i, (call_case, call_x) in enumerate(calls):
        entries.append(_call_entry(call_case, call_x))
        arrays[f"x{i}"] = np.asarray(call_x if call_x is not None else np.zeros(call_case.shape, call_case.dtype))
    if descriptor is not None:
        entries = [{"descriptor": descriptor, "encoded": protocol.encode_descriptor(descriptor).hex()}]
    if not entries:
        raise ValueError("write_repro needs a case, calls or a descriptor")
    stack = current_stack()
    info = report_stack(target)
    spec = {
        "failure": failure or relation, "relation": relation, "rules": list(rules), "timeout": timeout,
        "stack": info.get("summary") or stack.describe(), "stack_details": info, "calls": entries,
        "worker": {"command": worker_command(stack, getattr(target, "adapter", None) or "auto"),
                   "env": {k: v for k, v in worker_environment(stack).items() if k in _WORKER_ENV},
                   "display": stack.under_wine, "display_record": str(Display.record_path()),
                   "start_timeout": START_TIMEOUT},
    }
    written = [REPRO_NAME, "directml_repro.json", "directml_inputs.npz"]
    (folder / "directml_repro.json").write_text(json.dumps(spec, indent=2, default=str) + "\n")
    np.savez(folder / "directml_inputs.npz", **arrays)
    if relation == "result" and calls:
        if expected is None:
            from topkspec.spec.reference import reference_topk

            call_case, call_x = calls[0]
            values, indices = reference_topk(np.asarray(call_x), axis=call_case.norm_axis, k=call_case.k,
                                             largest=bool(call_case.largest) if call_case.op == "TOP_K1" else True)
            expected = (values, indices.astype(call_case.index_dtype))
        np.savez(folder / "directml_expected.npz", values=expected[0], indices=expected[1])
        written.append("directml_expected.npz")
    shutil.copyfile(PROGRAM, folder / REPRO_NAME)
    os.chmod(folder / REPRO_NAME, 0o755)
    return written
