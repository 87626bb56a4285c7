"""How small the reports are: over a file of planted bugs, at each profile and seed, each
failure's case as Hypothesis's shrinker left it (before) and as the reducer left it (after), and
what the reducer cost.

    python -m topkspec.fuzz.size_bench --bugs tests/planted_bugs.py --spec onnx:24 --spec dml:5.0

A report is *minimal* when its case has as few elements as the smallest case any run (any seed,
before or after) found for the same bug, profile and rule: the bug's own floor as far as these
runs can tell. Prints one JSON line per run, then a table a person reads.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import defaultdict


def _elements(case) -> int | None:
    shape = getattr(case, "shape", None)
    return None if shape is None else math.prod(shape)


def run_once(path: str, bug: str, profile: str, seed: int, max_examples: int) -> dict:
    """One run of a planted bug: per failure (rule, elements before, after), the reducer's cost."""
    from topkspec.fuzz.config import RunConfig
    from topkspec.fuzz.run import run_fuzz

    start = time.perf_counter()
    result = run_fuzz(RunConfig(target=f"{path}:{bug}", profile=profile, max_examples=max_examples, seed=seed,
                                settings="ci"))
    reduced = {key: entry for key, *entry in getattr(result, "reductions", [])}
    reports = []
    for failure in result.failures:
        after = _elements(failure.case)
        if after is None:
            continue
        before, _, seconds, calls, steps = reduced.get(failure.key, (failure.case, None, 0.0, 0, 0))
        reports.append({"rule": failure.rule, "class": failure.failure_class, "group": failure.group,
                        "before": _elements(before), "after": after, "case_before": before.describe(),
                        "case_after": failure.case.describe(), "reduce_s": round(seconds, 3),
                        "checks": calls, "steps": steps})
    return {"bug": bug, "profile": profile, "seed": seed, "run_s": round(time.perf_counter() - start, 2),
            "reduce_s": round(result.timing["reduce_s"], 3), "reports": reports}


def summarise(runs: list[dict]) -> dict:
    """Per profile: reports, minimal before and after, far larger (over 4 times the floor), and
    the reducer's seconds (per report: median, max; per run: total against the run)."""
    floor = defaultdict(lambda: math.inf)
    for run in runs:
        for report in run["reports"]:
            key = (run["bug"], run["profile"], report["rule"])
            floor[key] = min(floor[key], report["before"], report["after"])
    table = {}
    for profile in dict.fromkeys(run["profile"] for run in runs):
        rows = [(run, report) for run in runs if run["profile"] == profile for report in run["reports"]]
        at_floor = lambda side: sum(rep[side] <= floor[(run["bug"], profile, rep["rule"])]  # noqa: E731
                                    for run, rep in rows)
        far = lambda side: sum(rep[side] > 4 * floor[(run["bug"], profile, rep["rule"])]  # noqa: E731
                               for run, rep in rows)
        cost = [rep["reduce_s"] for _, rep in rows if rep["checks"]]
        mine = [run for run in runs if run["profile"] == profile]
        table[profile] = {
            "runs": len(mine), "reports": len(rows),
            "minimal_before": at_floor("before"), "minimal_after": at_floor("after"),
            "far_larger_before": far("before"), "far_larger_after": far("after"),
            "largest_before": max((rep["before"] for _, rep in rows), default=0),
            "largest_after": max((rep["after"] for _, rep in rows), default=0),
            "reduce_s_median": round(statistics.median(cost), 3) if cost else 0.0,
            "reduce_s_max": round(max(cost), 3) if cost else 0.0,
            "reduce_s_total": round(sum(run["reduce_s"] for run in mine), 2),
            "run_s_total": round(sum(run["run_s"] for run in mine), 2),
        }
    return table


def format_table(table: dict) -> str:
    lines = ["| profile | runs | reports | minimal before | minimal after | over 4x before | over 4x after "
             "| largest before | largest after | reducer s per report (median, max) | reducer s / run s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for profile, row in table.items():
        lines.append(f"| {profile} | {row['runs']} | {row['reports']} | {row['minimal_before']} | "
                     f"{row['minimal_after']} | {row['far_larger_before']} | {row['far_larger_after']} | "
                     f"{row['largest_before']} | {row['largest_after']} | {row['reduce_s_median']}, "
                     f"{row['reduce_s_max']} | {row['reduce_s_total']} / {row['run_s_total']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    from topkspec.fuzz.bench import planted_bugs

    parser = argparse.ArgumentParser(description="how small the reports of planted bugs are, before and "
                                                 "after the reducer")
    parser.add_argument("--bugs", default="tests/planted_bugs.py", metavar="FILE[:NAME,...]")
    parser.add_argument("--spec", dest="profiles", action="append", help="profile (repeatable; default onnx:24, "
                                                                          "dml:5.0)")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--max-examples", type=int, default=300)
    args = parser.parse_args(argv)
    path, bugs = planted_bugs(args.bugs)
    runs = []
    for profile in args.profiles or ["onnx:24", "dml:5.0"]:
        for bug in bugs:
            for seed in range(args.seeds):
                runs.append(run_once(path, bug, profile, seed, args.max_examples))
                print(json.dumps(runs[-1]), flush=True)
    table = summarise(runs)
    print(json.dumps({"summary": table}))
    print(format_table(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
