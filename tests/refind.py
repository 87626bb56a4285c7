"""The campaign re-finds the findings register: one CI-sized campaign per target that has
findings (1000 examples, a fixed seed, no known list), and for each finding whether the
campaign reported its rule.

    python tests/refind.py                      # every target of the register
    python tests/refind.py tract onnx-checker   # some of them

prints, per target, the findings re-found out of those it has, with the campaign's time, and
exits 1 when one was missed (2 when a named target has no findings). tests/test_refind.py runs
the cheap ones by default (TOPKSPEC_REFIND=all: every target whose runtime is here).

A finding is read from findings/README.md's register (its first table): its folder (the first
column's link), its rule (the `rule` column), its status (a withdrawn or fixed one is skipped).
A finding of kind contradicts-itself on a point its contract leaves open is skipped too: its two
calls disagree, and a campaign's rules, which judge one call at a time, file neither. Its target
is the longest target name its folder starts with. A campaign reports the rule when one of its failures is filed under it,
or breaks it as a descriptor (a crash on an invalid descriptor is filed under
out.invalid_rejected, with the rules the descriptor breaks).
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGISTER = os.path.join(ROOT, "findings", "README.md")
EXAMPLES, SEED = 1000, 1
# Seconds per call: a loaded machine (CI's two cores) must not turn a slow first call into a hang.
TIMEOUT = 30.0
# A finding judged at another profile than its target's default one, by its report.
PROFILES = {"onnx-checker-topk1-k-above-axis-size-accepted": "onnx:1", "tvm-topk10-ignores-k": "onnx:10",
            "tvm-bfloat16-wrong-values": "onnx:24",
            # jax's default profile (dml:5.0, seed 1) draws no -0.0 before +0.0 in 1000 examples
            "jax-negative-zero-ranked-below-positive-zero": "onnx:24"}


@dataclass(frozen=True)
class Finding:
    folder: str
    target: str
    rule: str
    profile: str | None


def _cells(line: str) -> list:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def register(path: str = REGISTER) -> list:
    """Every finding of the register not withdrawn, as Finding."""
    from topkspec.targets.registry import known_names

    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    # The register is the first table; the one under "Not filed" holds open points, not bugs.
    lines = []
    for line in text[text.index("\n|"):].splitlines()[1:]:
        if not line.lstrip().startswith("|"):
            break
        lines.append(line)
    header = [cell.lower() for cell in _cells(lines[0])]
    column = {name: header.index(name) for name in ("finding", "rule", "status", "contract")}
    if "kind" in header:
        column["kind"] = header.index("kind")
    names = sorted(known_names(), key=len, reverse=True)
    findings = []
    for line in lines[2:]:
        cells = _cells(line)
        folder = re.search(r"\]\(([^/)]+)/", cells[column["finding"]]).group(1)
        if cells[column["status"]].lower().startswith(("withdrawn", "fixed in")):
            continue  # not a bug by the runtime's contract, or gone from the version installed
        two_calls = "kind" in column and cells[column["kind"]] == "contradicts-itself"
        if two_calls and "leaves open:" in cells[column["contract"]]:
            continue  # two calls on a point the contract leaves open: no rule of one call files it
        rule = cells[column["rule"]].strip("`")
        target = next(name for name in names if folder.startswith(name + "-"))
        findings.append(Finding(folder, target, rule, PROFILES.get(folder)))
    return findings


def reported(result) -> set:
    """{rule} the campaign reported: each failure's filed rule and the rules its descriptor breaks."""
    from topkspec.fuzz.results import filed_rule

    rules = set()
    for failure in result.failures:
        rules.add(filed_rule(failure.violation))
        if failure.draw is not None:
            rules.update(failure.draw.rules)
    return rules


def campaign(target: str, profile: str | None):
    """(RunResult, seconds) of one CI-sized campaign, no known list, reports in a scratch folder."""
    from topkspec.fuzz.config import RunConfig
    from topkspec.fuzz.run import run_fuzz

    with tempfile.TemporaryDirectory(prefix="topkspec-refind-") as reports:
        start = time.perf_counter()
        result = run_fuzz(RunConfig(target=target, profile=profile, max_examples=EXAMPLES, seed=SEED, settings="ci",
                                    timeout=TIMEOUT, report_dir=reports))
        return result, time.perf_counter() - start


def refind(target: str, findings: list) -> dict:
    """{"found": [folder], "missed": [folder], "seconds": s} for one target's findings, one
    campaign per profile they need."""
    found, missed, seconds = [], [], 0.0
    for profile in sorted({f.profile for f in findings}, key=str):
        result, spent = campaign(target, profile)
        seconds += spent
        rules = reported(result)
        for finding in (f for f in findings if f.profile == profile):
            (found if finding.rule in rules else missed).append(finding.folder)
    return {"found": found, "missed": missed, "seconds": seconds}


def available(target: str) -> tuple[bool, str]:
    from topkspec.targets import get_target
    from topkspec.targets.base import availability

    return availability(get_target(target))


def main(argv: list) -> int:
    findings = register()
    by_target: dict = {}
    for finding in findings:
        by_target.setdefault(finding.target, []).append(finding)
    names = argv or list(by_target)
    unknown = [name for name in names if name not in by_target]
    if unknown:
        print(f"no findings for {', '.join(unknown)}; the register has {', '.join(by_target)}", file=sys.stderr)
        return 2
    missed_any = False
    for name in names:
        ok, why = available(name)
        if not ok:
            print(f"{name:14} not run: {why}")
            continue
        outcome = refind(name, by_target[name])
        total = len(by_target[name])
        print(f"{name:14} {len(outcome['found'])}/{total} re-found in {outcome['seconds']:.0f} s"
              + (f"; missed: {', '.join(outcome['missed'])}" if outcome["missed"] else ""), flush=True)
        missed_any |= bool(outcome["missed"])
    return 1 if missed_any else 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main(sys.argv[1:]))
