"""Where the documents and DirectML differ: a fixed descriptor set through CreateOperator.

`fixed_descriptors()` is the set: valid descriptors of every operator, type, index type, rank
and axis position, the optional tensor fields used well, and descriptors breaking each rule in
the ways that matter (K = 0, K at and above the axis size, the axis out of range, a foreign
direction, the outputs' sizes, ranks and types, the optional fields misused...), plus
descriptors whose verdict depends on a feature level other than the device's.

`compare()` asks the spec (at the descriptor's own level and at the device's, with and without
strict_doc) and DirectML (CreateOperator, one DirectML.dll per version asked for) about each,
and `markdown()` writes the table of the rows where they differ. `topkspec directml compare`
prints it; the README's table is its output, and `--observations` writes the file the rules'
`observations` come from (topkspec/spec/observations.json).
"""
from __future__ import annotations

import copy
import json
import os
import re
import sys

from topkspec.errors import UsageError
from topkspec.directml.worker import protocol

UINT_MAX = 2**32 - 1


def _tensor(dtype, sizes, **extra):
    return {"DataType": dtype, "Sizes": list(sizes), **extra}


def make(op="TOP_K1", dtype="FLOAT32", sizes=(1, 1, 3, 4), axis=None, k=2, direction="DECREASING",
         index="UINT32", level="6_4", out=None):
    """A DirectML JSON descriptor; `out` overrides the output sizes."""
    axis = len(sizes) - 1 if axis is None else axis
    if out is None:
        out = list(sizes)
        if 0 <= axis < len(sizes):
            out[axis] = k
    body = {"InputTensor": _tensor(dtype, sizes), "OutputValueTensor": _tensor(dtype, out),
            "OutputIndexTensor": _tensor(index, out), "Axis": axis, "K": k}
    if op == "TOP_K1":
        body["AxisDirection"] = direction
    return {"Type": op, "FeatureLevel": level, "Desc": body}


def _with(desc, path, value):
    """A copy of desc with Desc[path...] set (None removes it)."""
    desc = copy.deepcopy(desc)
    node = desc["Desc"]
    for key in path[:-1]:
        node = node[key]
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return desc


_VALUE_TYPES = ["FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
_ALL_TYPES = list(protocol.DATA_TYPES)


def fixed_descriptors() -> list[dict]:
    """[{"name", "descriptor"}] in a fixed order (see the module text)."""
    out = []

    def add(name, desc):
        out.append({"name": name, "descriptor": desc})

    # -- valid: types, index types, ranks, axes, K at its ends, directions -------------------
    for op in ("TOP_K1", "TOP_K"):
        for dtype in _VALUE_TYPES:
            for index in ("UINT32", "UINT64"):
                add(f"{op} {dtype} values, {index} indices", make(op, dtype, index=index))
    for rank in range(1, 9):
        sizes = [2] * (rank - 1) + [5]
        add(f"TOP_K1 rank {rank}, K = 1", make(sizes=sizes, k=1))
        add(f"TOP_K1 rank {rank}, K = axis size", make(sizes=sizes, k=5))
    for axis in range(4):
        add(f"TOP_K1 4-D, axis {axis}", make(sizes=(2, 3, 4, 5), axis=axis, k=2))
        add(f"TOP_K 4-D, axis {axis}", make("TOP_K", sizes=(2, 3, 4, 5), axis=axis, k=2))
    add("TOP_K1 INCREASING", make(direction="INCREASING"))
    add("TOP_K1 {1,1,8,4096} K = 100", make(sizes=(1, 1, 8, 4096), k=100))
    add("TOP_K1 {1,1,64,1000} K = 17", make(sizes=(1, 1, 64, 1000), k=17))
    add("TOP_K1 axis of 1, K = 1", make(sizes=(3, 1), axis=1, k=1))
    base = make()
    add("Strides given, packed", _with(base, ("InputTensor", "Strides"), [12, 12, 4, 1]))
    add("Strides given, input padded (row stride 8)",
        _with(_with(base, ("InputTensor", "Strides"), [24, 24, 8, 1]), ("InputTensor", "TotalTensorSizeInBytes"), 88))
    add("Strides with a 0 (input rows broadcast)", _with(base, ("InputTensor", "Strides"), [0, 0, 0, 1]))
    add("Strides transposed (input stored [1,1,4,3])", _with(base, ("InputTensor", "Strides"), [12, 12, 1, 3]))
    for name in ("OutputValueTensor", "OutputIndexTensor"):
        add(f"{name} rows padded (stride 4)", _with(base, (name, "Strides"), [12, 12, 4, 1]))
        add(f"{name} Strides with a 0 (rows share an address)", _with(base, (name, "Strides"), [0, 0, 0, 1]))
    add("OutputValueTensor Strides interleaved (row stride 1, column stride 1)",
        _with(base, ("OutputValueTensor", "Strides"), [6, 6, 1, 1]))
    add("TotalTensorSizeInBytes exactly the minimum", _with(base, ("InputTensor", "TotalTensorSizeInBytes"), 48))
    add("TotalTensorSizeInBytes above the minimum", _with(base, ("InputTensor", "TotalTensorSizeInBytes"), 4096))
    for alignment in (0, 16, 256):
        add(f"GuaranteedBaseOffsetAlignment = {alignment}",
            _with(base, ("InputTensor", "GuaranteedBaseOffsetAlignment"), alignment))
    add("Flags = 0 (DML_TENSOR_FLAG_NONE)", _with(base, ("InputTensor", "Flags"), 0))
    add("a 4 GiB input (2^30 float32), K = 1", make(sizes=(1, 1, 1, 2**30), k=1))

    # -- K ------------------------------------------------------------------------------------
    add("K = 0", make(k=0))
    add("K = axis size + 1", make(k=5, out=[1, 1, 3, 5]))
    add("K = twice the axis size", make(k=8))
    add("K = UINT_MAX", make(k=UINT_MAX))
    add("TOP_K K = axis size", make("TOP_K", k=4))
    add("TOP_K K = 0", make("TOP_K", k=0))
    add("TOP_K K = axis size + 1", make("TOP_K", k=5))
    # -- Axis ---------------------------------------------------------------------------------
    for axis in (4, 5, UINT_MAX):
        add(f"Axis = {axis} for rank 4", make(axis=axis, k=2, out=[1, 1, 3, 4]))
    # -- AxisDirection -------------------------------------------------------------------------
    for direction in (2, 7, 255, -1):
        add(f"AxisDirection = {direction}", _with(base, ("AxisDirection",), direction))
    # -- ranks --------------------------------------------------------------------------------
    for rank in (9, 10):
        add(f"rank {rank}", make(sizes=[1] * (rank - 1) + [4], k=2))
    add("rank 0 (no dimensions)", make(sizes=[], axis=0, k=1, out=[]))
    # -- types --------------------------------------------------------------------------------
    add("FLOAT64 values (TOP_K1)", make(dtype="FLOAT64"))
    add("FLOAT64 values (TOP_K)", make("TOP_K", dtype="FLOAT64"))
    for index in [t for t in _ALL_TYPES if t not in ("UINT32", "UINT64")]:
        add(f"{index} indices", make(index=index))
    add("FLOAT32 input, FLOAT16 output values", _with(base, ("OutputValueTensor", "DataType"), "FLOAT16"))
    add("UINT32 input, INT32 output values", _with(make(dtype="UINT32"), ("OutputValueTensor", "DataType"), "INT32"))
    add("DataType 0 (UNKNOWN) everywhere", make(dtype=0, index=3))
    add("DataType 12 (UINT4 in DirectML.h 6_3+) everywhere", make(dtype=12))
    # -- output shapes and ranks -----------------------------------------------------------------
    add("OutputValueTensor K+1 along the axis", _with(base, ("OutputValueTensor", "Sizes"), [1, 1, 3, 3]))
    add("OutputIndexTensor K+1 along the axis", _with(base, ("OutputIndexTensor", "Sizes"), [1, 1, 3, 3]))
    add("both outputs K+1 along the axis", _with(_with(base, ("OutputValueTensor", "Sizes"), [1, 1, 3, 3]),
                                                 ("OutputIndexTensor", "Sizes"), [1, 1, 3, 3]))
    add("both outputs with another batch size", _with(_with(base, ("OutputValueTensor", "Sizes"), [1, 1, 4, 2]),
                                                      ("OutputIndexTensor", "Sizes"), [1, 1, 4, 2]))
    add("outputs of rank 5, input rank 4", _with(_with(base, ("OutputValueTensor", "Sizes"), [1, 1, 1, 3, 2]),
                                                ("OutputIndexTensor", "Sizes"), [1, 1, 1, 3, 2]))
    add("OutputIndexTensor of rank 3", _with(base, ("OutputIndexTensor", "Sizes"), [1, 3, 2]))
    # -- sizes and the optional fields -----------------------------------------------------------
    zero = make(sizes=(1, 0, 3, 4), out=[1, 0, 3, 2])
    add("a size of 0 (dimension 1)", zero)
    add("TotalTensorSizeInBytes 4 below the minimum", _with(base, ("InputTensor", "TotalTensorSizeInBytes"), 44))
    add("TotalTensorSizeInBytes = 0", _with(base, ("InputTensor", "TotalTensorSizeInBytes"), 0))
    add("OutputIndexTensor TotalTensorSizeInBytes below the minimum",
        _with(base, ("OutputIndexTensor", "TotalTensorSizeInBytes"), 8))
    for alignment in (1, 4, 8, 3, 24):
        add(f"GuaranteedBaseOffsetAlignment = {alignment}",
            _with(base, ("InputTensor", "GuaranteedBaseOffsetAlignment"), alignment))
    add("Flags = 1 (DML_TENSOR_FLAG_OWNED_BY_DML) on the input", _with(base, ("InputTensor", "Flags"), 1))
    add("Flags = 1 on an output", _with(base, ("OutputValueTensor", "Flags"), 1))
    add("Strides of 3 entries for rank 4", _with(base, ("InputTensor", "Strides"), [12, 4, 1]))
    add("member K missing", _with(base, ("K",), None))
    add("TOP_K with an AxisDirection", _with(make("TOP_K"), ("AxisDirection",), "DECREASING"))
    # -- levels below the device's ---------------------------------------------------------------
    add("TOP_K1 at DML_FEATURE_LEVEL_1_0", make(level="1_0"))
    add("TOP_K1 at DML_FEATURE_LEVEL_2_0", make(level="2_0"))
    add("TOP_K1 rank 3 at DML_FEATURE_LEVEL_2_1 (4-D only)", make(sizes=(1, 3, 4), level="2_1"))
    add("TOP_K at DML_FEATURE_LEVEL_1_0", make("TOP_K", level="1_0"))
    add("TOP_K FLOAT32 rank 2 at DML_FEATURE_LEVEL_2_0 (4-D only)", make("TOP_K", sizes=(3, 4), level="2_0"))
    add("TOP_K INT32 at DML_FEATURE_LEVEL_2_0 (floats only)", make("TOP_K", dtype="INT32", level="2_0"))
    add("INT64 values at DML_FEATURE_LEVEL_3_1", make(dtype="INT64", level="3_1"))
    add("UINT64 indices at DML_FEATURE_LEVEL_3_1", make(index="UINT64", level="3_1"))
    return out


# -- the comparison -------------------------------------------------------------------------

def _rules(desc, profile=None, strict=False) -> list[str]:
    from topkspec import spec

    return sorted({f.rule for f in spec.validate(desc, profile, strict_doc=strict)})


OTHER_LEVEL = "another level: agrees at the device's"


def classify(row: dict, verdict: dict) -> str:
    """How one DirectML verdict relates to the documents for one row. DirectML judges by its
    device's feature level (CreateOperator takes none), so the documents are read at that level;
    a row whose verdict the descriptor's own level would change, and where DirectML agrees with
    its own level, is OTHER_LEVEL: DirectML cannot speak to the descriptor's level there."""
    if not verdict.get("expressible", True):
        return "not expressible"
    accepted = verdict["accepted"]
    at_device, own = row["rules_at_device"], row["rules"]
    if accepted and at_device:
        return "documents forbid, DirectML accepts"
    if not accepted and not at_device:
        return "documents allow, DirectML refuses"
    if set(own) != set(at_device):
        return OTHER_LEVEL
    if accepted and row["strict_rules"]:
        return "the text forbids, DirectML accepts"
    return "agree"


def compare(versions=None, stream=None) -> dict:
    """Every fixed descriptor judged by the spec and by DirectML (each version asked for)."""
    from topkspec.directml.windows.environment import installed_dlls
    from topkspec.targets.runtimes.directml import DirectMLTarget, level_name

    rows = []
    for item in fixed_descriptors():
        desc = item["descriptor"]
        rows.append({"name": item["name"], "descriptor": desc, "rules": _rules(desc),
                     "strict_rules": _rules(desc, strict=True), "verdicts": {}})
    runs = {}
    for version in versions or [None]:
        saved = os.environ.get("TOPKSPEC_DIRECTML_DLL")
        if version is not None:
            if version not in installed_dlls():
                raise UsageError(f"DirectML {version} is not installed: run `topkspec directml setup --version {version}`")
            os.environ["TOPKSPEC_DIRECTML_DLL"] = version
        target = DirectMLTarget()
        try:
            ok, why = target.available()
            if not ok:
                raise UsageError(f"the directml target is not available: {why}")
            stack = target.report_stack()
            name = stack["directml"]
            level = target.feature_level
            runs[name] = {"adapter": stack["adapter"], "feature_level": level_name(level),
                          "summary": stack["summary"], "file_version": stack["directml_file_version"]}
            if stream:
                stream.write(f"topkspec directml compare: {len(rows)} descriptors through {stack['summary']}\n")
            for row in rows:
                row["rules_at_device"] = _rules(row["descriptor"], f"dml:{level_name(level)}")
                verdict = target.verdict(row["descriptor"])
                verdict["class"] = classify(row, verdict)
                row["verdicts"][name] = verdict
        finally:
            target.close()
            if version is not None:
                if saved is None:
                    os.environ.pop("TOPKSPEC_DIRECTML_DLL", None)
                else:
                    os.environ["TOPKSPEC_DIRECTML_DLL"] = saved
    return {"directml": runs, "rows": rows}


def _verdict_text(verdict: dict) -> str:
    if not verdict.get("expressible", True):
        return "not expressible"
    return ("accepted" if verdict["accepted"] else "refused") + f" ({verdict['detail'].split(' (')[0]})"


def _documents_text(row) -> str:
    if row["rules"]:
        return "invalid: " + ", ".join(f"`{r}`" for r in row["rules"])
    if row["strict_rules"]:
        return "valid; the literal text forbids it: " + ", ".join(f"`{r}`" for r in row["strict_rules"])
    return "valid"


def markdown(result: dict) -> str:
    """The table of rows where the documents and DirectML differ (or DirectML versions differ)."""
    names = list(result["directml"])
    rows = result["rows"]
    lines = []
    for name in names:
        run = result["directml"][name]
        counts = {}
        for row in rows:
            cls = row["verdicts"][name]["class"]
            counts[cls] = counts.get(cls, 0) + 1
        lines.append(f"- DirectML {name} ({run['file_version']}) on {run['adapter']}, feature level "
                     f"{run['feature_level']}: {len(rows)} descriptors, "
                     + ", ".join(f"{n} {c}" for c, n in sorted(counts.items(), key=lambda i: -i[1])) + ".")
    lines.append("")
    header = "| descriptor | the documents (spec rules broken) | " + " | ".join(f"DirectML {n}" for n in names) + " |"
    lines += [header, "|" + "---|" * (2 + len(names))]
    groups: dict = {}  # rows that read the same are one line
    for row in rows:
        verdicts = [row["verdicts"][n] for n in names]
        classes = {v["class"] for v in verdicts}
        texts = {_verdict_text(v) for v in verdicts}
        if classes == {"agree"} and len(texts) == 1:
            continue
        cells = tuple(f"{_verdict_text(v)}: {v['class']}" for v in verdicts)
        groups.setdefault((_documents_text(row), cells), []).append(row["name"])
    for (documents, cells), members in groups.items():
        named = members if len(members) <= 5 else members[:4] + [f"{len(members) - 4} more alike"]
        lines.append(f"| {'; '.join(named)} | {documents} | " + " | ".join(cells) + " |")
    if not groups:
        lines.append("| (none) | | " + " | ".join("" for _ in names) + " |")
    lines.append("")
    lines.append("*another level*: CreateOperator takes no feature level and DirectML judges by its device's, so "
                 "where the descriptor's own level reads differently DirectML cannot speak to it. *not expressible*: "
                 "no C struct holds the JSON, so DirectML is never asked. Rows where every DirectML agrees with the "
                 "documents are left out.")
    return "\n".join(lines) + "\n"


# A strict-only rule's observation belongs to its lenient twin too.
_ALSO = {"dml.k.max_strict": ("dml.k.max",)}


def observations(result: dict) -> dict:
    """The rules' observations: what DirectML did where it and the documents differ, one
    entry per rule, DirectML version and outcome, naming the descriptors."""
    entries: dict = {}
    for row in result["rows"]:
        for name, verdict in row["verdicts"].items():
            cls = verdict["class"]
            if cls == "the text forbids, DirectML accepts":
                rules = row["strict_rules"]
            elif cls == "documents forbid, DirectML accepts":
                rules = row["rules"]
            elif cls == "documents allow, DirectML refuses":
                rules = ["out.valid_accepted"]
            else:
                continue
            run = result["directml"][name]
            for rule in [r for first in rules for r in (first, *_ALSO.get(first, ()))]:
                key = (rule, name, cls, _verdict_text(verdict))
                entry = entries.setdefault(key, {
                    "implementation": f"DirectML {name}", "file_version": run["file_version"],
                    "feature_level": run["feature_level"], "adapter": run["adapter"],
                    "observed": f"{cls}: CreateOperator {_verdict_text(verdict)}", "descriptors": []})
                entry["descriptors"].append(row["name"])
    by_rule: dict = {}
    for (rule, *_), entry in entries.items():
        by_rule.setdefault(rule, []).append(entry)
    return {"generated_by": "topkspec directml compare --observations",
            "descriptor_count": len(result["rows"]), "rules": by_rule}


README_BLOCK = re.compile(r"(<!-- directml-compare(?: versions=([\w.,]+))? -->\n)(.*?)(<!-- /directml-compare -->)", re.S)


def rewrite_readme(path: str, stream=None) -> int:
    """Regenerates every block between `<!-- directml-compare [versions=A,B] -->` and
    `<!-- /directml-compare -->` in a markdown file; returns how many."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    blocks = list(README_BLOCK.finditer(text))
    if not blocks:
        raise UsageError(f"{path} has no <!-- directml-compare --> block")
    out, at = [], 0
    for block in blocks:
        versions = block.group(2).split(",") if block.group(2) else None
        out += [text[at:block.start()], block.group(1), markdown(compare(versions, stream=stream)), block.group(4)]
        at = block.end()
    out.append(text[at:])
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(out))
    return len(blocks)


def cmd_compare(args) -> int:
    if getattr(args, "readme", None):
        count = rewrite_readme(args.readme, stream=sys.stderr)
        print(f"topkspec: {count} table(s) regenerated in {args.readme}", file=sys.stderr)
        return 0
    versions = [v.strip() for v in args.versions.split(",") if v.strip()] if args.versions else None
    result = compare(versions, stream=sys.stderr)
    text = markdown(result)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
        print(f"topkspec: differences written to {args.out}", file=sys.stderr)
    else:
        print(text, end="")
    if args.json_out:
        with open(args.json_out, "w") as handle:
            json.dump(result, handle, indent=2)
    if args.observations:
        with open(args.observations, "w") as handle:
            json.dump(observations(result), handle, indent=2)
            handle.write("\n")
    return 0
