"""`topkspec corpus DIR`: conformance cases for test suites that cannot call Python.

    DIR/onnx/test_topk<opset>_<type>_<pattern>/   ONNX backend-test folders (onnx_files)
    DIR/dml/<level>_<op>_<type>_..._<pattern>.json DirectML cases, valid and invalid (dml_files)
    DIR/README.md                                  what the corpus holds and how it was made
    DIR/.topkspec-written                          the files above: a re-run replaces those only

Deterministic for a topkspec version: the same files, byte for byte, on every machine. The
cases are chosen for coverage (valid.py), not drawn at random; `from_reports` adds the shrunk
counterexamples a campaign kept, as regression cases.

Imports the spec, the targets and DirectML's protocol (its descriptor layout); nothing above them.
"""
from __future__ import annotations

import json
import os
import shutil
from collections import Counter

import numpy as np

from topkspec.corpus.valid import PROFILES, ValidCase, file_slug, unique_result, valid_cases
from topkspec.errors import UsageError


class CorpusError(UsageError):
    """A corpus that cannot be written: the folder, a profile or a report folder is wrong."""


def _version() -> str:
    from topkspec import __version__

    return __version__


def expected(item) -> tuple:
    """The spec's result for a corpus case (values, indices as its index type)."""
    from topkspec.spec.reference import reference_topk
    from topkspec.spec.case import selects_largest

    values, indices = reference_topk(item.x, axis=item.case.norm_axis, k=item.case.k, largest=selects_largest(item.case))
    return values, indices.astype(item.case.index_dtype)


def write_corpus(out_dir: str, profiles=PROFILES, from_reports: str | None = None) -> dict:
    """Writes the corpus under `out_dir`; returns counts: {"onnx": n, "dml_valid": n,
    "dml_invalid": n, "from_reports": n}, and with `from_reports` also "reports_skipped":
    [(report folder, why it gave no case)].

    A corpus written there before (the files its manifest lists) is replaced; nothing else in
    the folder is touched. A folder that holds files and no manifest is refused (CorpusError)."""
    from topkspec.errors import owned_entries, replace_owned, staging_folder

    try:
        owned_entries(out_dir, "topkspec corpus")
    except UsageError as exc:
        raise CorpusError(str(exc)) from None
    extra = ([], [], []) if from_reports is None else report_cases(from_reports, _version())
    staged = staging_folder(out_dir)
    try:
        counts = _write_cases(staged, profiles, extra, from_reports)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    try:
        replace_owned(out_dir, staged, "topkspec corpus")
    except UsageError as exc:
        raise CorpusError(str(exc)) from None
    return {**counts, "reports_skipped": extra[2]} if from_reports is not None else counts


def _write_cases(out_dir: str, profiles, extra: tuple, from_reports) -> dict:
    """Writes onnx/, dml/ and README.md into the new folder `out_dir`; returns the counts."""
    from topkspec.corpus.dml_files import invalid_entries, valid_entry, write_dml_case
    from topkspec.corpus.onnx_files import write_onnx_case
    from topkspec.spec import parse_profile

    version = _version()
    extra_valid, extra_invalid, _skipped = extra
    from topkspec.corpus.dml_layouts import layout_items

    items = valid_cases(profiles)
    items = items + layout_items(items) + extra_valid
    onnx_dir, dml_dir = os.path.join(out_dir, "onnx"), os.path.join(out_dir, "dml")
    counts = Counter()
    for item in items:
        values, indices = expected(item)
        if parse_profile(item.case.profile).family == "onnx":
            write_onnx_case(onnx_dir, item, values, indices)
            counts["onnx"] += 1
        else:
            os.makedirs(dml_dir, exist_ok=True)
            write_dml_case(dml_dir, valid_entry(item, values, indices, version))
            counts["dml_valid"] += 1
            if "layout" in item.patterns:  # its variant: "input_permuted", "flag_...", "graph"
                counts["dml_layout"] += 1
                counts["layout " + item.patterns[-1]] += 1
    for entry in invalid_entries(profiles, version) + extra_invalid:
        os.makedirs(dml_dir, exist_ok=True)
        write_dml_case(dml_dir, entry)
        counts["dml_invalid"] += 1
    counts["from_reports"] = len(extra_valid) + len(extra_invalid)
    with open(os.path.join(out_dir, "README.md"), "w") as handle:
        handle.write(readme_text(version, profiles, counts, items, from_reports))
    return dict(counts)


def _distinct_input(case) -> np.ndarray:
    """An input of distinct values for a case whose report holds none (the runtime refused the
    case before any call, a value type it has no kernel for): any input shows that refusal."""
    from topkspec.spec import dtypes

    size = int(np.prod(case.shape))
    return np.arange(size).astype(dtypes.numpy_dtype(case.dtype)).reshape(case.shape)


def _report_calls(folder: str) -> tuple[list, dict]:
    """([(Case, x)] the report's calls, with their inputs), and its case.json.
    A report of a refused valid case that made no call gives its case with a made-up input."""
    from topkspec.spec import Case, dtypes

    with open(os.path.join(folder, "case.json")) as handle:
        document = json.load(handle)
    arrays = np.load(os.path.join(folder, "inputs.npz"))
    calls = [(Case.from_dict(call), arrays[f"x{i}"]) for i, call in enumerate(document["calls"])
             if f"x{i}" in arrays.files]
    if not document["calls"] and document.get("relation") == "accept":
        case = Case.from_dict(document["case"])
        calls = [(case, _distinct_input(case))]
    wanted = [np.dtype(dtypes.numpy_dtype(case.dtype)) for case, _ in calls]
    return [(case, x.view(want) if x.dtype != want else x) for (case, x), want in zip(calls, wanted)], document


def report_cases(reports_dir: str, version: str) -> tuple:
    """([ValidCase], [invalid DirectML entry], [(report folder, why it gave no case)]) from every
    report folder under `reports_dir`: each call a kept counterexample made, when the spec fixes
    its result (valid) or when it is a DirectML descriptor CreateOperator must refuse (invalid)."""
    from topkspec.corpus.dml_files import _still_invalid
    from topkspec.spec import descriptor, parse_profile, validate

    if not os.path.isdir(reports_dir):
        raise CorpusError(f"--from-reports {reports_dir}: not a folder")
    valid, invalid, skipped = [], [], []
    for name in sorted(os.listdir(reports_dir)):
        folder = os.path.join(reports_dir, name)
        if not all(os.path.isfile(os.path.join(folder, f)) for f in ("case.json", "inputs.npz")):
            skipped.append((name, "not a report folder (no case.json and inputs.npz)"))
            continue
        try:
            calls, document = _report_calls(folder)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorpusError(f"--from-reports: {folder} is not a readable report: {exc}") from None
        why = []
        for i, (case, x) in enumerate(calls):
            label = f"report_{file_slug(name)}_{i}"
            desc = descriptor(case)
            found = sorted({f.rule for f in validate(desc, case.profile)})
            if not found:
                open_result = unique_result(case, x)
                if open_result is None:
                    valid.append(ValidCase(label, case, x, ("regression",)))
                else:
                    why.append(f"the spec fixes no one result for it ({open_result})")
            elif parse_profile(case.profile).family == "dml":
                invalid.append({"name": label, "topkspec": version, "FeatureLevel": desc["FeatureLevel"],
                                "descriptor": desc,
                                "expected": {"outcome": "refused", "rules": found, "how": f"from report {name}",
                                             "level_bound": not _still_invalid(desc)},
                                "covers": {"rules": found, "patterns": ["regression"]}})
            else:
                why.append(f"an invalid ONNX case (it breaks {', '.join(found)}): the ONNX backend-test "
                           "layout has no expected refusal")
        if not calls:
            skipped.append((name, "it holds no call with its input (a descriptor judged as written: "
                                  "`topkspec validate` checks those)"))
        elif len(why) == len(calls):
            skipped.append((name, "; ".join(dict.fromkeys(why))))
    return valid, invalid, skipped


def readme_text(version: str, profiles, counts: Counter, items, from_reports) -> str:
    patterns = Counter(p for item in items for p in item.patterns)
    lines = [
        "# TopK conformance corpus",
        "",
        f"Written by topkspec {version} (`topkspec corpus{' --from-reports ' + os.path.basename(os.path.normpath(from_reports)) if from_reports else ''}`)"
        f" for the profiles {', '.join(profiles)}. The same topkspec version writes the same files, byte for byte.",
        "",
        "Each case has exactly one right answer: no NaN, sorted output, zeros of one sign per sequence, and for",
        "DirectML no tie across the K-th place and K below the axis size (where the documents leave the answer",
        "open, no case is written). The expected outputs are topkspec's reference, bit for bit.",
        "",
        f"- `onnx/`: {counts['onnx']} ONNX node tests in the backend-test layout (`model.onnx`,",
        "  `test_data_set_0/input_0.pb` X, `input_1.pb` K from opset 10, `output_0.pb` Values, `output_1.pb`",
        "  Indices). `data.json` sets rtol and atol to 0 and says which rules and pattern the case covers.",
        "  Load them with `onnx.backend.test.loader.load_model_tests(data_dir=DIR, kind=\"onnx\")`.",
        f"  {sum(1 for item in items if getattr(item.case, 'context', None))} of them put the TopK inside a small graph"
        " (`graph_*` patterns: K computed from X's shape or from",
        "  another tensor, X after a Transpose, Reshape or Cast, outputs consumed by other nodes), whose inputs",
        "  and further outputs are numbered in the graph's order.",
        f"- `dml/`: {counts['dml_valid']} valid DirectML cases (descriptor, input, expected outputs) and",
        f"  {counts['dml_invalid']} descriptors CreateOperator must refuse, each naming the rules it breaks;",
        "  `level_bound` marks one only a DirectML that stops at its FeatureLevel can refuse. Tensors are",
        "  little-endian bytes in `base64` (and `values` for reading, up to 64 elements).",
        "  `topkspec directml replay DIR/dml` runs them through DirectML.dll.",
        "",
        "Patterns (cases each): " + ", ".join(f"{p} {n}" for p, n in sorted(patterns.items())) + ".",
        "",
        "Rules are those of `topkspec spec` (the ONNX TopK page, https://onnx.ai/onnx/operators/onnx__TopK.html,",
        "and the DML_TOP_K1_OPERATOR_DESC page, https://learn.microsoft.com/en-us/windows/win32/api/directml/"
        "ns-directml-dml_top_k1_operator_desc).",
        "",
    ]
    if counts.get("from_reports"):
        lines.insert(-1, f"{counts['from_reports']} cases are counterexamples from kept reports"
                         " (names starting with `report_`).")
    return "\n".join(lines)
