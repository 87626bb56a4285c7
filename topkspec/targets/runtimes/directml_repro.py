"""The directml target's repro writer for topkspec's bug reports (topkspec.repro.writers).

repro.py's runtime part comes from directml.tmpl: a `topk(x, k, axis, op=...)` that starts the
same worker the run used (its command line, DirectML.dll, Wine prefix, Vulkan driver and
display) and sends it the descriptor, so the report's program replays the finding through
DirectML itself with numpy alone. The stack names DirectML's version, the adapter and feature
level and, under Wine, the Wine, vkd3d and Mesa versions, with the caution that a wrong result
may come from those translation layers.
"""
from __future__ import annotations

import json

from topkspec.repro.writers import ReproWriter, RuntimeStack, operator_label

TEMPLATE = "directml.tmpl"
# Environment variables the worker needs beyond the user's own (under Wine).
WORKER_ENV = ("WINEPREFIX", "WINEDEBUG", "WINEDLLOVERRIDES", "VKD3D_CONFIG", "WINEARCH", "VK_ICD_FILENAMES",
              "LD_LIBRARY_PATH")
WINE_CAUTION = ("Run under Wine: DirectML's own validation and shaders, executed through Wine's d3d12 (vkd3d), "
                "Vulkan and Mesa's lavapipe on the CPU. A wrong result, a crash or a hang may come from those "
                "translation layers rather than DirectML: confirm it on Windows before filing it with DirectML.")


def fill(target, case, _spec=None) -> dict:
    """directml.tmpl's fields for a DirectMLTarget."""
    from topkspec.directml.client.worker_process import Display, worker_command, worker_environment, xvfb_command

    lowered = target.lowered(case)
    stack = target.stack
    worker = {"command": worker_command(stack, target.adapter),
              "env": {k: v for k, v in worker_environment(stack).items() if k in WORKER_ENV},
              "display": stack.under_wine, "display_record": str(Display.record_path()),
              "xvfb": xvfb_command(stack)}
    widen = case.family != "dml"
    layout = None
    if not lowered.layout.is_plain:  # the call as laid out (spec.layouts): strides, bindings, flags, graph
        from topkspec.spec.layouts import GUARD_BYTE, buffer_plan

        layout = {"tensors": [{"strides": list(p["strides"]) if p["strides"] else None, "total": p["total"],
                               "offset": p["offset"], "buffer": p["buffer"]} for p in buffer_plan(lowered)],
                  "flags": lowered.layout.flags, "graph": lowered.layout.graph, "guard_byte": GUARD_BYTE,
                  "words": lowered.layout.words()}
    largest = lowered.largest if lowered.op == "TOP_K1" else True
    return {"summary": target.version(), "worker": json.dumps(worker, indent=1),
            "op": lowered.op, "direction": int(bool(largest)),
            "direction_name": "DECREASING" if largest else "INCREASING", "index_type": lowered.index_dtype,
            "widen": ".astype(np.int64)" if widen else "", "layout": json.dumps(layout),
            "widen_note": " widened to int64 (the ONNX case's lowering)" if widen else ""}


def stack(target, case, _spec=None):
    """The stack a DirectMLTarget's finding ran on, for report.md."""
    info = target.report_stack()
    versions = {"DirectML": info.get("directml_file_version") or info.get("directml") or "?"}
    details = [f"DirectML.dll {info.get('dll')}, feature level {info.get('feature_level') or '?'}, "
               f"adapter {info.get('adapter') or '?'}" + (" (software)" if info.get("software_adapter") else ""),
               "every descriptor goes through IDMLDevice::CreateOperator as written; valid ones are compiled, "
               "initialized, executed and read back by topkspec's worker (topk_worker.exe)"]
    if case.family != "dml":
        details.append(f"the {operator_label(case)} case runs lowered to DML_TOP_K1 (rules lower.*)")
    if info.get("platform") == "wine":
        versions.update({"Wine": info.get("wine") or "?", "vkd3d": info.get("vkd3d") or "?",
                         "Mesa": info.get("mesa") or "?"})
        details.append(WINE_CAUTION)
    if info.get("lane_workaround"):
        details.append("the worker reported non-zero wave lane counts to this old DirectML (vkd3d reports 0)")
    operator = operator_label(case) if case.family == "dml" else f"DML_TOP_K1 (lowered from {operator_label(case)})"
    return RuntimeStack(f"DirectML {info.get('directml') or '?'}", operator, info.get("adapter") or "", versions,
                 tuple(details))


def writer(target_class) -> ReproWriter:
    """The writer for the directml target's reports. directml.py passes its class in (it imports
    this module): a report for a target of another class gets a fresh one of `target_class`."""
    def own(target):
        return target if isinstance(target, target_class) else target_class()

    return ReproWriter(template=TEMPLATE, needs="numpy and topkspec's DirectML worker (built by `topkspec directml "
                       "setup`)", fill=lambda target, case, spec=None: fill(own(target), case, spec),
                       stack=lambda target, case, spec=None: stack(own(target), case, spec), takes_op=True)
