"""Bug reports: one folder per distinct failure (target, rule, failure class).

Each folder holds report.md (for a maintainer), case.json (the case and the violation),
inputs.npz (the inputs of every target call of the shrunk example, the outputs seen and the
reference result) and repro.py, a standalone script that exits 1 while the bug reproduces and
0 once it is fixed.
"""
from __future__ import annotations

import json
import os
import platform
import re

import numpy as np

from topkspec import failures
from topkspec.properties.sequences import same_bits
from topkspec.reference import reference_topk

TABLE_ROWS = 40  # rows of the expected/actual table before it is cut


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower()[:60] or "x"


def relation_of(failure) -> str:
    """How the failure is observed, which decides what repro.py does."""
    kind = {failures.CRASH: "crash", failures.HANG: "hang", failures.REJECTS_VALID: "accept",
            failures.ACCEPTS_INVALID: "reject", failures.NONDETERMINISTIC: "deterministic"}
    if failure.failure_class in kind:
        return kind[failure.failure_class]
    return {"out.prefix": "prefix", "out.axis_moves": "axis_moves",
            "out.topk_equals_topk1": "same"}.get(failure.rule, "result")


def _calls_for(failure, relation: str) -> list:
    """The target calls repro.py makes: the last one for single-call relations."""
    if relation in ("prefix", "axis_moves", "same"):
        return failure.calls[:2]
    if relation == "deterministic":
        return failure.calls[:1]
    return failure.calls[-1:]


def _native(arr: np.ndarray) -> bool:
    return arr.dtype.type.__module__ == "numpy"


def _storable(arr: np.ndarray) -> np.ndarray:
    """numpy's own types as they are, ml_dtypes types (bfloat16, float8) as their bits."""
    arr = np.asarray(arr)
    return arr if _native(arr) else arr.view(f"uint{arr.dtype.itemsize * 8}")


def expected_result(case, x):
    """The reference result with the case's index type (None when the case is not runnable)."""
    try:
        values, indices = reference_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)
    except Exception:
        return None
    return values, indices.astype(case.index_dtype)


def compared_outputs(failure, relation: str):
    """(left title, left, right title, right) for the side-by-side table, or None."""
    outs = failure.outputs
    if relation == "result" and outs and outs[-1] is not None:
        expected = expected_result(failure.calls[-1][0], failure.calls[-1][1])
        if expected is not None:
            return "expected (reference)", expected, "actual", outs[-1]
    if relation in ("prefix", "axis_moves", "same", "deterministic") and len(outs) >= 2 and None not in outs[:2]:
        first, second = outs[0], outs[1]
        case0, case1 = failure.calls[0][0], failure.calls[1][0]
        if relation == "prefix":
            k = case1.k
            first = tuple(np.take(a, np.arange(k), axis=case0.norm_axis) for a in first)
            return f"first {k} of K={case0.k}", first, f"K={k}", second
        if relation == "axis_moves":
            second = tuple(np.moveaxis(a, case1.norm_axis, case0.norm_axis) for a in second)
            return "original axis", first, "moved axis, moved back", second
        return "first run", first, "second run", second
    return None


def _show(value) -> str:
    if isinstance(value, (float, np.floating)) and value == 0:
        return "-0.0" if np.signbit(value) else "0.0"
    return repr(value.item() if hasattr(value, "item") else value)


def side_by_side(case, left_title, left, right_title, right) -> str:
    """A markdown table of the two results per sequence position, differences marked."""
    (lv, li), (rv, ri) = left, right
    if lv.shape != rv.shape or li.shape != ri.shape:
        return (f"Shapes differ: {left_title} values {list(lv.shape)}, indices {list(li.shape)}; "
                f"{right_title} values {list(rv.shape)}, indices {list(ri.shape)}.\n")
    if lv.dtype != rv.dtype or li.dtype != ri.dtype:
        note = (f"Types differ: {left_title} {lv.dtype}/{li.dtype}, {right_title} {rv.dtype}/{ri.dtype}.\n\n")
    else:
        note = ""
    axis = case.norm_axis
    rows = [np.moveaxis(a, axis, -1).reshape(-1, a.shape[axis]) if a.ndim else a.reshape(1, 1)
            for a in (lv, li, rv, ri)]
    value_differs = ~same_bits(rows[0], rows[2].astype(rows[0].dtype, copy=False), nan_equal=True) \
        if rows[0].dtype == rows[2].dtype else np.ones(rows[0].shape, bool)
    index_differs = rows[1].astype(np.int64) != rows[3].astype(np.int64)
    differs = value_differs | index_differs
    lines = [note + f"| sequence | position | {left_title}: value | index | {right_title}: value | index | |",
             "|---|---|---|---|---|---|---|"]
    shown = 0
    for r in range(rows[0].shape[0]):
        if not differs[r].any() and rows[0].shape[0] > 1:
            continue  # only the sequences that differ
        for p in range(rows[0].shape[1]):
            if shown == TABLE_ROWS:
                lines.append(f"| … | | | | | | {int(differs.sum())} position(s) differ in all |")
                return "\n".join(lines) + "\n"
            mark = "**≠**" if differs[r, p] else ""
            lines.append(f"| {r} | {p} | {_show(rows[0][r, p])} | {_show(rows[1][r, p])} | "
                         f"{_show(rows[2][r, p])} | {_show(rows[3][r, p])} | {mark} |")
            shown += 1
    return "\n".join(lines) + "\n"


def _array_text(x, limit: int = 64) -> str:
    x = np.asarray(x)
    flat = x.reshape(-1)
    shown = ", ".join(_show(v) for v in flat[:limit])
    more = f", … ({flat.size - limit} more)" if flat.size > limit else ""
    return f"{x.dtype}{list(x.shape)} (flattened, C order): [{shown}{more}]"


def title_of(failure) -> str:
    case = failure.case
    return (f"TopK {failure.failure_class}: {failure.rule} broken for {case.dtype}{list(case.shape)} "
            f"axis={case.axis} k={case.k} {'largest' if case.largest else 'smallest'} on {failure.target}")


def _source_line(source: dict) -> str:
    """'Title (`file`), section "X"' for a seed document; the text as it is otherwise."""
    from topkspec.spec.tables import DOCUMENTS

    doc = source["doc"]
    where = f"{DOCUMENTS[doc]} (`{doc}`)" if doc in DOCUMENTS else doc
    return where + (f', section "{source["section"]}"' if source.get("section") else "")


def _rules_section(failure) -> str:
    from topkspec import spec

    lines = []
    for rule_id in failure.violation.rules:
        rule = spec.RULES.get(rule_id)
        if rule is None:
            lines.append(f"- `{rule_id}`")
            continue
        lines.append(f"- `{rule.id}` ({rule.status}): {rule.statement}  \n  Sources:")
        lines.extend(f"  - {_source_line(src)}" for src in rule.sources)
    return "\n".join(lines)


def _descriptor_text(case) -> str:
    from topkspec import spec

    try:
        return json.dumps(spec.descriptor(case), indent=2)
    except Exception:
        return json.dumps(case.to_dict(), indent=2)


def report_markdown(failure, result, relation: str, fuzz_command: str) -> str:
    case = failure.case
    v = failure.violation
    parts = [f"# {title_of(failure)}", "",
             f"- **Target**: `{failure.target}` — {result.version}",
             f"- **Spec profile**: `{result.profile}`",
             f"- **Failure class**: {failure.failure_class}",
             f"- **Found by**: property group `{failure.group}`"
             + (f", seed {result.seed}" if result.seed is not None else ""),
             f"- **Environment**: Python {platform.python_version()}, numpy {np.__version__}, "
             f"{platform.system()} {platform.machine()}", "",
             "## What broke", "", v.message, "", "## Rules broken", "", _rules_section(failure), "",
             "## The case (shrunk)", "", f"`{case.describe()}`", "", "```json", _descriptor_text(case), "```", ""]
    if failure.draw is not None:
        parts += [f"The descriptor breaks {', '.join(sorted(failure.draw.rules))}: {failure.draw.how}.", ""]
    if failure.x is not None:
        parts += ["Input:", "", "```", _array_text(failure.x), "```", ""]
    parts += ["## Expected and actual", ""]
    shown = compared_outputs(failure, relation)
    if shown is not None:
        parts.append(side_by_side(failure.calls[-1][0] if relation == "result" else failure.calls[0][0], *shown))
    else:
        parts += [f"- expected: {v.expected}", f"- actual: {v.actual}", ""]
    if v.where:
        parts += [f"First difference at {v.where}.", ""]
    parts += ["## How to reproduce", "",
              "```sh", "python repro.py   # exits 1 while the bug reproduces, 0 once it is fixed", "```", "",
              "The inputs are in `inputs.npz` (call inputs `x0`, `x1`, …), the case and the violation in "
              "`case.json`. To search again from the same seed (failures replay first from the example "
              "database):", "", "```sh", fuzz_command, "```", ""]
    return "\n".join(parts)


# -- repro.py ---------------------------------------------------------------------------------

_REPRO_HEAD = '''#!/usr/bin/env python3
"""Reproduces: {title}

Exit 1 while the bug reproduces, 0 once it is fixed. Needs: {needs}.
Inputs come from inputs.npz beside this file.
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = json.loads({calls!r})
RELATION = {relation!r}
TIMEOUT = {timeout!r}  # seconds, for a hang
'''

_REPRO_CALLABLE = '''

def _load_function():
    import importlib
    import importlib.util

    where, _, attr = {spec!r}.rpartition(":")
    if where.endswith(".py") or "/" in where or os.sep in where:
        path = where if os.path.isabs(where) else os.path.join({cwd!r}, where)
        sys.path.insert(0, os.path.dirname(path))
        module_spec = importlib.util.spec_from_file_location("repro_target", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    for part in attr.split("."):
        module = getattr(module, part)
    return module


def topk(call, x):
    function = _load_function()
    axis = call["axis"] + len(call["shape"]) if call["axis"] < 0 else call["axis"]
    values, indices = function(x, axis=axis, k=call["k"], largest=call["largest"])
    indices = np.asarray(indices)
    info = np.iinfo(call["index_dtype"])
    if indices.dtype.kind in "iu" and (indices.size == 0 or info.min <= indices.min() and indices.max() <= info.max):
        indices = indices.astype(call["index_dtype"])  # as the suite hands them to the checks
    return np.asarray(values), indices
'''

_REPRO_ORT = '''

def topk(call, x):
    import onnxruntime
    from onnx import TensorProto, helper

    form = call["onnx"]
    rank = len(call["shape"])
    elem = form["elem"]
    attributes = {{"axis": form["axis"]}}
    if form["opset"] >= 11:
        attributes["largest"] = int(form["largest"])
        attributes["sorted"] = int(form["sorted"])
    inputs = [helper.make_tensor_value_info("X", elem, [f"d{{i}}" for i in range(rank)])]
    names = ["X"]
    feeds = {{"X": np.ascontiguousarray(x)}}
    if form["opset"] < 10:
        attributes["k"] = call["k"]
    else:
        names.append("K")
        inputs.append(helper.make_tensor_value_info("K", TensorProto.INT64, [1]))
        feeds["K"] = np.array([call["k"]], dtype=np.int64)
    outputs = [helper.make_tensor_value_info("Values", elem, [f"o{{i}}" for i in range(rank)]),
               helper.make_tensor_value_info("Indices", TensorProto.INT64, [f"o{{i}}" for i in range(rank)])]
    node = helper.make_node("TopK", names, ["Values", "Indices"], **attributes)
    graph = helper.make_graph([node], "topk", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", form["opset"])],
                              ir_version=form["ir_version"])
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=[{provider!r}])
    values, indices = session.run(None, feeds)
    return values, indices
'''

_REPRO_TOPKSPEC = '''

def topk(call, x):
    # This target has no standalone form here: it is driven through topkspec's adapter.
    from topkspec.spec.case import Case
    from topkspec.targets.registry import get_target

    target = get_target({spec!r})
    return target.run(Case.from_dict(call), x)
'''

_REPRO_BODY = '''

def load(name, dtype):
    arr = np.load(os.path.join(HERE, "inputs.npz"))[name]
    if dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
        import ml_dtypes
        arr = arr.view(getattr(ml_dtypes, dtype))
    return arr


def run_call(i):
    return topk(CALLS[i], load(f"x{i}", CALLS[i]["dtype"]))


def norm_axis(call):
    return call["axis"] + len(call["shape"]) if call["axis"] < 0 else call["axis"]


def bits(a):
    a = np.asarray(a)
    return a.view(f"uint{a.dtype.itemsize * 8}") if a.dtype.kind == "f" or a.dtype.kind == "V" else a


def is_nan(a):
    a = np.asarray(a)
    return np.isnan(a.astype(np.float64)) if a.dtype.kind in "fV" else np.zeros(a.shape, bool)


def differences(first, second, nan_equal=True):
    """Where two (values, indices) results differ; empty when they agree bit for bit."""
    (v1, i1), (v2, i2) = [(np.asarray(v), np.asarray(i)) for v, i in (first, second)]
    if v1.shape != v2.shape or i1.shape != i2.shape:
        return [f"shapes differ: {list(v1.shape)} against {list(v2.shape)}"]
    if v1.dtype != v2.dtype or i1.dtype != i2.dtype:
        return [f"types differ: {v1.dtype}/{i1.dtype} against {v2.dtype}/{i2.dtype}"]
    same = bits(v1) == bits(v2)
    if nan_equal:
        same |= is_nan(v1) & is_nan(v2)
    bad = ~same | (i1.astype(np.int64) != i2.astype(np.int64))
    return [f"differ at {tuple(int(j) for j in pos)}: {v1[tuple(pos)]!r}@{i1[tuple(pos)]} against "
            f"{v2[tuple(pos)]!r}@{i2[tuple(pos)]}" for pos in np.argwhere(bad)[:5]]


def nan_problems(call, x, values):
    """With NaN in the input: the non-NaN values returned must be the top non-NaN input values,
    in order (in any order when unsorted); where NaN goes is up to the implementation."""
    axis = norm_axis(call)
    as_rows = lambda a: np.moveaxis(np.asarray(a).astype(np.float64), axis, -1).reshape(-1, a.shape[axis])
    got, xs = as_rows(values), as_rows(x)
    fill = -np.inf if call["largest"] else np.inf
    got_nan = np.isnan(got)
    front = np.take_along_axis(got, np.argsort(got_nan, axis=1, kind="stable"), axis=1)
    want = np.sort(np.where(np.isnan(xs), fill, xs), axis=1)
    if call["largest"]:
        want = want[:, ::-1]
    want = want[:, :got.shape[1]]
    if not call["sorted"]:
        front = np.sort(np.where(np.isnan(front), fill, front), axis=1)
        if call["largest"]:
            front = front[:, ::-1]
    used = np.arange(got.shape[1])[None, :] < (~got_nan).sum(axis=1)[:, None]
    bad = used & (front != want)
    return [f"sequence {r}: non-NaN value number {p} returned is {front[r, p]!r}, expected {want[r, p]!r}"
            for r, p in np.argwhere(bad)[:5]]


def result_problems(call, x, values, indices, expected):
    """What the suite checks of one result: shape, types, indices, gather, then the exact result
    (NaN-free and sorted), the set of (index, value) (unsorted) or nothing more (NaN present)."""
    values, indices = np.asarray(values), np.asarray(indices)
    ev, ei = expected
    if values.shape != ev.shape or indices.shape != ev.shape:
        return [f"shape: expected {list(ev.shape)}, got values {list(values.shape)}, indices {list(indices.shape)}"]
    if values.dtype != x.dtype or indices.dtype != np.dtype(call["index_dtype"]):
        return [f"types: expected {x.dtype}/{call['index_dtype']}, got {values.dtype}/{indices.dtype}"]
    axis = norm_axis(call)
    n = x.shape[axis]
    idx = indices.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        return [f"indices out of range [0, {n}): {idx.min()}..{idx.max()}"]
    ordered = np.sort(np.moveaxis(idx, axis, -1), axis=-1)
    if ordered.shape[-1] > 1 and (ordered[..., 1:] == ordered[..., :-1]).any():
        return ["an index repeats within a sequence"]
    gathered = np.take_along_axis(x, idx, axis=axis)
    if not (bits(gathered) == bits(values)).all():
        return ["values are not the input elements at the returned indices"]
    if is_nan(x).any():
        return nan_problems(call, x, values)
    if not call["sorted"]:
        order = np.argsort(idx, axis=axis, kind="stable")
        eorder = np.argsort(ei.astype(np.int64), axis=axis, kind="stable")
        return differences((np.take_along_axis(ev, eorder, axis), np.take_along_axis(ei, eorder, axis)),
                           (np.take_along_axis(values, order, axis), np.take_along_axis(indices, order, axis)))
    return differences(expected, (values, indices))


def child():
    run_call(len(CALLS) - 1)


def main():
    if RELATION in ("crash", "hang"):
        try:
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            print(f"reproduced: no answer within {TIMEOUT}s")
            return 1
        if RELATION == "crash" and done.returncode < 0:
            print(f"reproduced: the process was killed by signal {-done.returncode}")
            return 1
        print(f"fixed: the call returned (exit code {done.returncode})")
        return 0
    if RELATION in ("accept", "reject"):
        try:
            run_call(len(CALLS) - 1)
        except Exception as exc:
            print(("reproduced: a valid case was refused: " if RELATION == "accept" else "fixed: refused: ")
                  + f"{type(exc).__name__}: {exc}")
            return 1 if RELATION == "accept" else 0
        print("fixed: the valid case runs" if RELATION == "accept" else "reproduced: an invalid case was accepted")
        return 0 if RELATION == "accept" else 1
    if RELATION == "result":
        call = CALLS[-1]
        x = load(f"x{len(CALLS) - 1}", call["dtype"])
        expected = (load("expected_values", call["dtype"]), np.load(os.path.join(HERE, "inputs.npz"))["expected_indices"])
        problems = result_problems(call, x, *topk(call, x), expected)
    elif RELATION == "deterministic":
        first = run_call(0)
        problems = []
        for _ in range(50):
            problems = differences(first, run_call(0), nan_equal=False)
            if problems:
                break
    else:
        first, second = run_call(0), run_call(1)
        if RELATION == "prefix":
            first = tuple(np.take(a, np.arange(CALLS[1]["k"]), axis=norm_axis(CALLS[0])) for a in first)
        elif RELATION == "axis_moves":
            second = tuple(np.moveaxis(a, norm_axis(CALLS[1]), norm_axis(CALLS[0])) for a in second)
        problems = differences(first, second)
    if problems:
        print("reproduced: " + "; ".join(problems))
        return 1
    print("fixed: the result is right")
    return 0


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        sys.exit(main())
'''


def _call_dict(case) -> dict:
    """A call as repro.py reads it: the case, plus its ONNX form when it has one."""
    from topkspec import dtypes
    from topkspec.targets.onnx_model import ir_version_for, onnx_form

    data = case.to_dict()
    try:
        form = onnx_form(case)
        data["onnx"] = {"opset": form.opset, "elem": dtypes.ONNX_ELEM_TYPES.get(form.dtype),
                        "axis": form.axis, "largest": form.largest, "sorted": form.sorted,
                        "ir_version": ir_version_for(form.opset)}
    except Exception:
        pass  # no ONNX form (an invalid profile, say): only the ONNX Runtime repro needs it
    return data


# The provider each built-in ONNX Runtime target runs on (repro.py builds its own session).
ORT_PROVIDERS = {"onnxruntime": "CPUExecutionProvider", "onnxruntime-cuda": "CUDAExecutionProvider",
                 "onnxruntime-directml": "DmlExecutionProvider"}


def repro_source(failure, relation: str, target_spec, timeout: float) -> str:
    calls = [_call_dict(case) for case, _ in _calls_for(failure, relation)]
    spec_text = target_spec if isinstance(target_spec, str) else failure.target
    builtin = _builtin_name(spec_text)
    if builtin in ORT_PROVIDERS:
        needs, target_part = "numpy, onnx, onnxruntime", _REPRO_ORT.format(provider=ORT_PROVIDERS[builtin])
    elif builtin is None and ":" in spec_text:
        needs, target_part = f"numpy and {spec_text}", _REPRO_CALLABLE.format(spec=spec_text, cwd=os.getcwd())
    else:
        needs, target_part = "numpy and topkspec (for its adapter)", _REPRO_TOPKSPEC.format(spec=spec_text)
    head = _REPRO_HEAD.format(title=title_of(failure).replace('"', "'"), needs=needs,
                              calls=json.dumps(calls), relation=relation, timeout=float(timeout))
    return head + target_part + _REPRO_BODY


def _builtin_name(spec_text: str):
    from topkspec.targets.registry import BUILTIN_TARGETS

    return spec_text if spec_text in BUILTIN_TARGETS else None


def write_report(failure, result, directory: str, *, target_spec=None, index: int = 1,
                 timeout: float = 5.0) -> str:
    """Write the report folder of one failure under `directory`; returns its path."""
    relation = relation_of(failure)
    folder = os.path.join(directory, f"{index:02d}-{slug(failure.rule)}-{slug(failure.failure_class)}")
    os.makedirs(folder, exist_ok=True)
    calls = _calls_for(failure, relation)
    arrays = {}
    for i, (case, x) in enumerate(calls):
        arrays[f"x{i}"] = _storable(x)
    for i, out in enumerate(failure.outputs):
        if out is not None:
            arrays[f"actual_values_{i}"], arrays[f"actual_indices_{i}"] = _storable(out[0]), np.asarray(out[1])
    if calls:
        expected = expected_result(*calls[-1])
        if expected is not None:
            arrays["expected_values"], arrays["expected_indices"] = _storable(expected[0]), expected[1]
    np.savez(os.path.join(folder, "inputs.npz"), **arrays)
    spec_text = target_spec if isinstance(target_spec, str) else failure.target
    fuzz_command = (f"topkspec fuzz --target {spec_text} --spec {result.profile}"
                    + (f" --seed {result.seed}" if result.seed is not None else "")
                    + f" --max-examples {result.max_examples}")
    document = {
        "title": title_of(failure), "target": failure.target, "target_spec": spec_text,
        "version": result.version, "profile": result.profile, "group": failure.group,
        "relation": relation, "case": failure.case.to_dict(),
        "calls": [_call_dict(case) for case, _ in calls],
        "violation": failure.violation.to_dict(), "seed": result.seed,
        "invalid_rules": sorted(failure.draw.rules) if failure.draw is not None else None,
    }
    with open(os.path.join(folder, "case.json"), "w") as handle:
        json.dump(document, handle, indent=2, default=str)
        handle.write("\n")
    with open(os.path.join(folder, "report.md"), "w") as handle:
        handle.write(report_markdown(failure, result, relation, fuzz_command))
    with open(os.path.join(folder, "repro.py"), "w") as handle:
        handle.write(repro_source(failure, relation, target_spec, timeout))
    failure.report_dir = folder
    return folder


def write_reports(result, directory: str, *, target_spec=None, timeout: float = 5.0) -> list[str]:
    """One report folder per failure of the run."""
    return [write_report(f, result, directory, target_spec=target_spec, index=i, timeout=timeout)
            for i, f in enumerate(result.failures, 1)]

