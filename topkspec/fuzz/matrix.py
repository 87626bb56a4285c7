"""The conformance matrix: a fixed budget against several targets, one markdown table of
output rules by target (holds, broken with a link to its report, unsupported, not checked)."""
from __future__ import annotations

import os

from topkspec.properties.failures import ADAPTER_ERROR
from topkspec.report import slug


def _rules_checked(result) -> dict:
    """{rule: examples} from the examples per property of a run."""
    from topkspec.properties import BY_NAME

    checked: dict = {}
    for name, count in result.checks.items():
        prop = BY_NAME.get(name)
        for rule in (prop.rules if prop else ()):
            checked[rule] = checked.get(rule, 0) + count
    return checked


def cell(rule: str, result, out_dir: str) -> str:
    """One table cell: what became of `rule` in the run."""
    if isinstance(result, str):
        return "unsupported"  # the target cannot run here; the reason is under the table
    for failure in result.failures:
        if rule in failure.violation.rules:
            label = f"**broken** ({failure.failure_class})"
            if failure.report_dir:
                return f"[{label}]({os.path.relpath(os.path.join(failure.report_dir, 'report.md'), out_dir)})"
            return label
    examples = _rules_checked(result).get(rule, 0)
    return f"holds ({examples})" if examples else "not checked"


def format_matrix(results: dict, out_dir: str = ".") -> str:
    """Markdown: a row per output rule, a column per target; notes on what could not run."""
    from topkspec import spec

    names = list(results)
    lines = ["| rule | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|" + "---|" * len(names)]
    for rule in spec.RULE_LIST:
        if rule.scope != "output":
            continue
        lines.append(f"| `{rule.id}` | " + " | ".join(cell(rule.id, results[n], out_dir) for n in names) + " |")
    lines.append("")
    lines.append("Cells: holds (examples checked), broken (failure class; links to the report), "
                 "unsupported (the target cannot run here), not checked (no example reached the rule).")
    for name, result in results.items():
        if isinstance(result, str):
            lines.append(f"- `{name}`: unsupported here: {result}")
        else:
            gaps = sum(result.unsupported.values())
            thin = ", ".join(f"{group} {judged} of {ran}" for group, judged, ran in result.thin_groups())
            broken = [f for f in result.failures if f.failure_class == ADAPTER_ERROR]
            lines.append(f"- `{name}`: {result.version}, spec {result.profile}, {result.total_examples} examples"
                         + (f", {gaps} drawn cases outside what it supports" if gaps else "")
                         + (f"; too little judged ({thin}): no verdict" if thin else "")
                         + (f"; its adapter broke (no verdict on the runtime): {broken[0].violation.actual}"
                            if broken else ""))
    return "\n".join(lines) + "\n"


def run_matrix(names, *, max_examples: int = 200, seed=None, profile=None, report_dir="topkspec-reports",
               isolate=None, timeout=5.0, out_dir: str = ".", progress=None):
    """(markdown, exit code): run each target, then the table; the code is 1 when any broke a
    rule, else 3 when any judged too little (see RunResult.exit_code), else 0.
    An unknown target is bad usage (TargetError, before any run); one that cannot run here, or
    whose worker process does not start, becomes a column of 'unsupported' that says why."""
    from topkspec.fuzz.config import RunConfig, RunError
    from topkspec.fuzz.isolation import TargetCrashed, TargetHung
    from topkspec.fuzz.run import run_fuzz
    from topkspec.targets.registry import TargetError, get_target

    for name in names:
        get_target(name).close()  # bad names fail before any run starts
    results: dict = {}
    for number, name in enumerate(names, 1):
        if progress is not None:
            progress.write(f"topkspec: matrix target {number} of {len(names)}: {name}\n")
        config = RunConfig(target=name, profile=profile, max_examples=max_examples, seed=seed,
                           settings_profile="ci", report_dir=os.path.join(report_dir, slug(name)),
                           isolate=isolate, timeout=timeout, progress=progress)
        try:
            results[name] = run_fuzz(config)
        except (RunError, TargetError, TargetCrashed, TargetHung) as exc:  # unavailable, or no worker starts
            results[name] = str(exc)
            continue
        if results[name].interrupted:
            break  # Ctrl-C: the table so far
    codes = {r.exit_code for r in results.values() if not isinstance(r, str)}
    status = 1 if 1 in codes else max(codes | {0})
    return format_matrix(results, out_dir), status
