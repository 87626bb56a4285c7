"""The cases a portable DirectML bundle replays without Python (`topkspec directml bundle`):
the two DirectML findings with what the spec expects of each, the stored corpus's DirectML
files, and one ordinary case for `run info`."""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from topkspec.directml_tools.bundle.make import BundleError

REPOSITORY = Path(__file__).resolve().parents[2]
FINDINGS = ("directml-nan-hides-larger-values", "directml-nan-duplicate-indices")
SMOKE_CASE = "3_1_top_k1_float32_uint32_distinct"  # an ordinary case: `run info` shows the device with it


def finding_expectation(case: dict) -> str:
    """What the spec expects of a NaN finding's case, in two lines: the input and the rule."""
    import numpy as np

    from topkspec.corpus.dml_files import read_tensor

    desc = case["descriptor"]["Desc"]
    x = read_tensor(case["input"], "float32").reshape(-1)
    k, n = desc["K"], x.size
    largest = desc.get("AxisDirection", "DML_AXIS_DIRECTION_DECREASING").endswith("DECREASING")
    numbers = np.sort(x[~np.isnan(x)])
    top = (numbers[::-1] if largest else numbers)[:k]
    nans = [int(i) for i in np.flatnonzero(np.isnan(x))]
    shown = [("nan" if np.isnan(v) else f"{v:g}") for v in x[:8]] + (["..."] if n > 8 else [])
    leading = ", ".join(f"{v:g}" for v in top[:3]) + (", ..." if len(top) > 3 else "")
    return (f"input:    float32[{n}] = [{', '.join(shown)}] (NaN at {nans}), K = {k}, "
            f"{'largest' if largest else 'smallest'} first\n"
            f"expected: indices distinct and in 0..{n - 1}, each value the input's element at its index, and "
            f"the non-NaN values returned, in order, the input's top non-NaN values ({leading}); NaN may come "
            f"anywhere")


def write_cases(cases: Path) -> dict:
    """cases/findings (the two findings' case.json, expected.txt), cases/corpus, cases/smoke."""
    from topkspec.corpus import PROFILES, write_corpus

    findings = cases / "findings"
    findings.mkdir(parents=True)
    lines = []
    for name in FINDINGS:
        source = REPOSITORY / "findings" / name / "case.json"
        if not source.is_file():
            raise BundleError(f"{source} not found: make the bundle from a topkspec checkout")
        case = json.loads(source.read_text())
        (findings / f"{name}.json").write_text(json.dumps(case, indent=1) + "\n")
        lines += [f"{name}: {line}" for line in finding_expectation(case).splitlines()]
    (findings / "expected.txt").write_text("\n".join(lines) + "\n")
    with tempfile.TemporaryDirectory() as scratch:
        counts = write_corpus(scratch, PROFILES)
        shutil.copytree(Path(scratch) / "dml", cases / "corpus")
    (cases / "smoke").mkdir()
    smoke = next(p for p in sorted((cases / "corpus").iterdir()) if p.name.startswith(SMOKE_CASE))
    shutil.copy(smoke, cases / "smoke" / smoke.name)
    return {"findings": len(FINDINGS), "corpus": counts.get("dml_valid", 0) + counts.get("dml_invalid", 0)}
