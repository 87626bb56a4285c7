"""`topkspec corpus DIR`: conformance cases for test suites that cannot call Python.

    DIR/onnx/test_topk<opset>_<type>_<pattern>/   ONNX backend-test folders (onnx_files)
    DIR/dml/<level>_<op>_<type>_..._<pattern>.json DirectML cases, valid and invalid (dml_files)
    DIR/README.md                                  what the corpus holds and how it was made

Deterministic for a topkspec version: the same files, byte for byte, on every machine. The
cases are chosen for coverage (valid.py), not drawn at random; `from_reports` adds the shrunk
counterexamples a campaign kept, as regression cases.
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
    from topkspec.targets.base import selects_largest

    values, indices = reference_topk(item.x, axis=item.case.norm_axis, k=item.case.k, largest=selects_largest(item.case))
    return values, indices.astype(item.case.index_dtype)


def write_corpus(out_dir: str, profiles=PROFILES, from_reports: str | None = None) -> dict:
    """Writes the corpus under `out_dir` (its onnx/ and dml/ folders are made anew); returns
    counts: {"onnx": n, "dml_valid": n, "dml_invalid": n, "from_reports": n}."""
    from topkspec.corpus.dml_files import invalid_entries, valid_entry, write_dml_case
    from topkspec.corpus.onnx_files import write_onnx_case
    from topkspec.spec import parse_profile

    version = _version()
    items = valid_cases(profiles)
    extra_valid, extra_invalid = ([], []) if from_reports is None else report_cases(from_reports, version)
    items += extra_valid
    onnx_dir, dml_dir = os.path.join(out_dir, "onnx"), os.path.join(out_dir, "dml")
    for folder in (onnx_dir, dml_dir):
        if os.path.isdir(folder):
            shutil.rmtree(folder)
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
    for entry in invalid_entries(profiles, version) + extra_invalid:
        os.makedirs(dml_dir, exist_ok=True)
        write_dml_case(dml_dir, entry)
        counts["dml_invalid"] += 1
    counts["from_reports"] = len(extra_valid) + len(extra_invalid)
    with open(os.path.join(out_dir, "README.md"), "w") as handle:
        handle.write(readme_text(version, profiles, counts, items, from_reports))
    return dict(counts)


def report_cases(reports_dir: str, version: str) -> tuple:
    """([ValidCase], [invalid DirectML entry]) from every report folder under `reports_dir`:
    each call a kept counterexample made, when the spec fixes its result (valid) or when it is
    a DirectML descriptor CreateOperator must refuse (invalid)."""
    from topkspec.corpus.dml_files import _still_invalid
    from topkspec.spec import Case, descriptor, parse_profile, validate

    if not os.path.isdir(reports_dir):
        raise CorpusError(f"--from-reports {reports_dir}: not a folder")
    valid, invalid = [], []
    for name in sorted(os.listdir(reports_dir)):
        folder = os.path.join(reports_dir, name)
        case_file, inputs_file = os.path.join(folder, "case.json"), os.path.join(folder, "inputs.npz")
        if not (os.path.isfile(case_file) and os.path.isfile(inputs_file)):
            continue
        try:
            with open(case_file) as handle:
                document = json.load(handle)
            arrays = np.load(inputs_file)
            calls = [(Case.from_dict(call), arrays[f"x{i}"]) for i, call in enumerate(document["calls"])
                     if f"x{i}" in arrays.files]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorpusError(f"--from-reports: {folder} is not a readable report: {exc}") from None
        for i, (case, x) in enumerate(calls):
            from topkspec.spec import dtypes

            x = x.view(dtypes.numpy_dtype(case.dtype)) if x.dtype != np.dtype(dtypes.numpy_dtype(case.dtype)) else x
            label = f"report_{file_slug(name)}_{i}"
            desc = descriptor(case)
            found = sorted({f.rule for f in validate(desc, case.profile)})
            if not found:
                if unique_result(case, x) is None:
                    valid.append(ValidCase(label, case, x, ("regression",)))
                continue
            if parse_profile(case.profile).family == "dml":
                invalid.append({"name": label, "topkspec": version, "FeatureLevel": desc["FeatureLevel"],
                                "descriptor": desc,
                                "expected": {"outcome": "refused", "rules": found, "how": f"from report {name}",
                                             "level_bound": not _still_invalid(desc)},
                                "covers": {"rules": found, "patterns": ["regression"]}})
    return valid, invalid


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
