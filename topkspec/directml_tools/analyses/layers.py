"""Which layer answers: one case through DirectML.dll, ONNX Runtime's DirectML EP and ONNX
Runtime's CPU provider (the same Windows onnxruntime.dll), side by side.

`fixed_cases()` is the set: the limits the DirectML page states (K = 0, K at and above the axis
size, the 64-bit types of the 5_0 table, no FLOAT64, 1 to 8 dimensions, the axis range) and the
inputs that split the layers (NaN, ±0 ties, a long axis). `report_cases(folder)` reads the calls
of a bug report's folder (case.json and inputs.npz) instead, so a finding replays on Linux
through every layer. `run_layers()` asks each layer and `markdown()` writes the table:
per case what the spec says, each layer's answer (refused with its message, the rules its
result breaks, or "holds") and whether the layers differ. `topkspec directml layers` prints it.
"""
from __future__ import annotations

import json
import os
import re

import numpy as np

from topkspec.spec import Case

LAYERS = (("directml", "DirectML.dll"), ("onnxruntime-directml", "DML EP"), ("onnxruntime-windows-cpu", "CPU EP"))


def _case(shape, k, *, dtype="float32", axis=None, largest=True, op="TOP_K1", profile="dml:5.0",
          index="uint32") -> Case:
    axis = len(shape) - 1 if axis is None else axis
    return Case(profile, op, dtype, tuple(shape), axis, k, largest=largest, index_dtype=index)


def fixed_cases() -> list[tuple[str, Case, np.ndarray]]:
    """(name, case, input) of the differential's fixed set."""
    rng = np.random.default_rng(0)
    plain = np.array([[3, 1, 4, 1.5], [-2, 0.5, 9, 2]], np.float32)
    big = np.array([2**62 + 3, -(2**62), 2**62 + 1, 7, 2**62 + 2], np.int64)
    nan_zeros = np.zeros(257, np.float32)
    nan_zeros[1] = np.nan
    long_axis = rng.permutation(4097).astype(np.float32)
    return [
        ("ordinary: float32[2, 4], K = 2", _case((2, 4), 2), plain),
        ("K = 0 (the page: K > 0)", _case((2, 4), 0), plain),
        ("K = axis size (the page: K < size)", _case((2, 4), 4), plain),
        ("K > axis size", _case((2, 4), 5), plain),
        ("axis = rank (out of range)", _case((2, 4), 1, axis=2), plain),
        ("smallest (AxisDirection INCREASING)", _case((2, 4), 2, largest=False), plain),
        ("TOP_K (always largest)", _case((2, 4), 2, op="TOP_K"), plain),
        ("INT64 near 2^62, UINT64 indices (5_0 table)", _case((5,), 3, dtype="int64", index="uint64"), big),
        ("UINT64 values (5_0 table)", _case((5,), 2, dtype="uint64", index="uint64"), big.view(np.uint64)),
        ("INT64 at dml:3.1 (no 64-bit types below 5_0)", _case((5,), 3, dtype="int64", profile="dml:3.1"), big),
        ("FLOAT16", _case((2, 4), 2, dtype="float16"), plain.astype(np.float16)),
        ("FLOAT64 (no DML type)", _case((2, 4), 2, dtype="float64"), plain.astype(np.float64)),
        ("UINT8", _case((2, 4), 2, dtype="uint8"), (plain * 10).astype(np.uint8)),
        ("INT8", _case((2, 4), 2, dtype="int8"), (plain * 10).astype(np.int8)),
        ("rank 1", _case((4,), 2), plain[0]),
        ("rank 8", _case((1, 1, 1, 1, 1, 1, 2, 4), 2), plain.reshape(1, 1, 1, 1, 1, 1, 2, 4)),
        ("rank 9 (the page: 1 to 8)", _case((1, 1, 1, 1, 1, 1, 1, 2, 4), 2), plain.reshape((1,) * 7 + (2, 4))),
        ("-0.0 and +0.0 tie (index order)", _case((4,), 2), np.array([-0.0, 0.0, -1, -0.0], np.float32)),
        ("NaN: [1, NaN, 0.5], K = 1", _case((3,), 1), np.array([1, np.nan, 0.5], np.float32)),
        ("NaN: [2, NaN, 1], K = 1", _case((3,), 1), np.array([2, np.nan, 1], np.float32)),
        ("NaN: 257 zeros, NaN at 1, K = 256", _case((257,), 256), nan_zeros),
        ("long axis: 4097 values, K = 100", _case((4097,), 100), long_axis),
    ]


def report_cases(folder: str) -> list[tuple[str, Case, np.ndarray]]:
    """(name, case, input) of each call a bug report's folder kept."""
    from topkspec.errors import UsageError
    from topkspec.spec import dtypes

    try:
        with open(os.path.join(folder, "case.json")) as handle:
            document = json.load(handle)
        arrays = np.load(os.path.join(folder, "inputs.npz"))
        calls = [(Case.from_dict(call), arrays[f"x{i}"]) for i, call in enumerate(document["calls"])
                 if f"x{i}" in arrays.files]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{folder} is not a bug report's folder (case.json, inputs.npz): {exc}") from None
    name = os.path.basename(os.path.normpath(folder))
    # An ONNX Runtime report keeps its int64 indices; DirectML.dll is asked with its own UINT32.
    return [(f"{name} call {i}", _dml_indices(case), x.view(dtypes.numpy_dtype(case.dtype)))
            for i, (case, x) in enumerate(calls)]


def _dml_indices(case: Case) -> Case:
    return case.with_(index_dtype="uint32") if case.family == "dml" and case.index_dtype == "int64" else case


def make_layers() -> dict:
    """{layer name: target} of the three layers."""
    from topkspec.targets.runtimes.directml_ep import WineOrtTarget
    from topkspec.targets.runtimes.directml import DirectMLTarget

    return {"directml": DirectMLTarget(), "onnxruntime-directml": WineOrtTarget("dml"),
            "onnxruntime-windows-cpu": WineOrtTarget("cpu")}


def answer(target, case: Case, x) -> dict:
    """One layer's answer: {"outcome": "refused" | "holds" | "breaks", "detail": ...}."""
    from topkspec.properties import result_violations
    from topkspec.targets.base import Rejected, first_line
    from topkspec.targets.isolation import TargetCrashed, TargetHung

    index = getattr(target, "index_dtype", None)
    ran = case.with_(index_dtype=index) if index else case
    try:
        values, indices = target.run(ran, x)
    except Rejected as exc:
        return {"outcome": "refused", "detail": first_line(exc)}
    except (TargetCrashed, TargetHung) as exc:
        return {"outcome": "crashed" if isinstance(exc, TargetCrashed) else "hung", "detail": first_line(exc)}
    values, indices = np.asarray(values), np.asarray(indices)
    if values.size <= 8:
        shown = f"values {values.ravel().tolist()} indices {indices.ravel().tolist()}"
    else:
        shown = f"{values.size} values"
    from topkspec import spec

    if spec.validate(spec.descriptor(case), case.profile):  # the case as drawn: DML's own index types
        return {"outcome": "accepts", "detail": shown}
    broken = sorted({rule for v in result_violations(ran, x, values, indices) for rule in v.rules})
    return {"outcome": "breaks" if broken else "holds", "detail": shown, "rules": broken}


def run_layers(cases, layers=None, stream=None) -> list[dict]:
    """Every case through every available layer: rows of {"name", "case", "spec", layer: answer}."""
    from topkspec import spec

    layers = layers or make_layers()
    available = {}
    for name, target in layers.items():
        ok, why = target.available()
        available[name] = None if ok else why
        if not ok and stream:
            stream.write(f"{name}: not available: {why}\n")
    rows = []
    for name, case, x in cases:
        found = sorted({f.rule for f in spec.validate(spec.descriptor(case), case.profile)})
        row = {"name": name, "case": case.describe(), "spec": found}
        for layer, target in layers.items():
            row[layer] = ({"outcome": "not run", "detail": available[layer]} if available[layer]
                          else answer(target, case, x))
        rows.append(row)
    return rows


def short_message(text: str) -> str:
    """A refusal in a table cell: ONNX Runtime's code name and message, a DML EP exception as
    its source file, line and HRESULT (the build path and addresses left out)."""
    text = re.sub(r"^[\w-]+: (OnnxRuntimeError: )?", "", text or "")
    text = re.sub(r"\[ONNXRuntimeError\] : \d+ : ", "", text)
    thrown = re.search(r"\\(\w+\.cpp\(\d+\))\\.*?Exception\(\d+\) tid\(\w+\) ([0-9A-F]{8} [^.]*)", text)
    if thrown:
        path = re.search(r"(Status Message: )?[A-Z]:\\", text)
        text = text[:path.start()].rstrip(" :") + f": {thrown.group(2)} ({thrown.group(1)})"
    return text


def _cell(result: dict) -> str:
    outcome = result["outcome"]
    if outcome == "holds":
        return "holds"
    if outcome == "breaks":
        return "**breaks** " + ", ".join(f"`{r}`" for r in result["rules"]) + f" ({result['detail']})"
    if outcome == "accepts":
        return f"accepts ({result['detail']})"
    detail = short_message(result.get("detail") or "").replace("|", "\\|")
    return f"{outcome}: {detail[:200]}"


def differ(row: dict) -> bool:
    """The layers that ran gave different outcomes (or different broken rules)."""
    seen = {(row[layer]["outcome"], tuple(row[layer].get("rules", ()))) for layer, _ in LAYERS
            if row[layer]["outcome"] != "not run"}
    return len(seen) > 1


def markdown(rows, versions: dict | None = None) -> str:
    lines = []
    if versions:
        lines += [f"- {label}: {text}" for label, text in versions.items()] + [""]
    lines += ["| case | the spec | " + " | ".join(label for _, label in LAYERS) + " | layers differ |",
              "|---|---|" + "---|" * len(LAYERS) + "---|"]
    for row in rows:
        spec_cell = "invalid: " + ", ".join(f"`{r}`" for r in row["spec"]) if row["spec"] else "valid"
        cells = [_cell(row[layer]) for layer, _ in LAYERS]
        lines.append(f"| {row['name']} | {spec_cell} | " + " | ".join(cells) + f" | {'yes' if differ(row) else ''} |")
    return "\n".join(lines) + "\n"


def per_rule(rows) -> dict:
    """{rule: [case names where the layers differ on it]}: the rules the spec names for the case
    (refused or accepted differently) and the rules some layer's result breaks."""
    out: dict = {}
    for row in rows:
        if not differ(row):
            continue
        rules = set(row["spec"])
        if not rules and any(row[layer]["outcome"] in ("refused", "crashed", "hung") for layer, _ in LAYERS):
            rules.add("out.valid_accepted")
        for layer, _ in LAYERS:
            rules |= set(row[layer].get("rules", ()))
        for rule in sorted(rules):
            out.setdefault(rule, []).append(row["name"])
    return out


def cmd_layers(args) -> int:
    import sys

    cases = []
    for folder in args.reports or ():
        cases += report_cases(folder)
    if not cases:
        cases = fixed_cases()
    layers = make_layers()
    try:
        rows = run_layers(cases, layers, stream=sys.stderr)
        versions = {label: layers[name].version() for name, label in LAYERS}
    finally:
        for target in layers.values():
            target.close()
    text = markdown(rows, versions)
    differing = per_rule(rows)
    if differing:
        text += "\nwhere the layers differ, by rule:\n\n" + "".join(
            f"- `{rule}`: {'; '.join(names)}\n" for rule, names in differing.items())
    if args.json_out:
        with open(args.json_out, "w") as handle:
            json.dump(rows, handle, indent=1)
    if args.readme:
        return rewrite_readme(args.readme, text)
    sys.stdout.write(text)
    return 0


def rewrite_readme(path: str, text: str) -> int:
    """Puts `text` between <!-- directml-layers --> and <!-- /directml-layers --> in a page."""
    from topkspec.errors import UsageError

    try:
        with open(path, encoding="utf-8") as handle:
            page = handle.read()
    except OSError as exc:
        raise UsageError(f"--readme {path}: {exc}") from None
    found = re.search(r"(<!-- directml-layers -->\n).*?(<!-- /directml-layers -->)", page, re.S)
    if not found:
        raise UsageError(f"--readme {path}: no <!-- directml-layers --> ... <!-- /directml-layers --> markers")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(page[:found.end(1)] + text + page[found.start(2):])
    return 0
