"""The conformance matrix: a fixed budget against several targets, one markdown table of
rules by target, each cell the run's verdict on the rule (fuzz.verdicts), broken ones linking
to their reports."""
from __future__ import annotations

import os

from topkspec.fuzz.verdicts import BROKEN, BROKEN_BY_READING
from topkspec.properties.failures import ADAPTER_ERROR
from topkspec.report import slug


def cell(rule: str, result, out_dir: str) -> str:
    """One table cell: the run's verdict on `rule` (see fuzz.verdicts), a broken one linking to
    its report."""
    from topkspec.fuzz.verdicts import verdict_of

    if isinstance(result, str):
        return "not run"  # the target cannot run here (not installed, say); the reason is under the table
    verdict = verdict_of(result, rule)
    text = verdict.text().replace("|", "/")
    if verdict.kind in (BROKEN, BROKEN_BY_READING):
        text = f"**{text}**"
        failure = verdict.failure
        if failure is not None and failure.report_dir:
            return f"[{text}]({os.path.relpath(os.path.join(failure.report_dir, 'report.md'), out_dir)})"
    return text


def stated_by_column(rule: str, profiles: list) -> str:
    """Who states the rule at the profiles the runs judged by (it can depend on the spec version:
    onnx.k.positive from TopK-10 on), as each run's cells and summary say it: one word when they
    agree, else the word at each profile."""
    from topkspec.fuzz.verdicts import status_word

    words = {profile: status_word(rule, profile) for profile in profiles or [None]}
    if len(set(words.values())) == 1:
        return next(iter(words.values()))
    return "; ".join(f"{word} at {profile}" for profile, word in words.items())


def format_matrix(results: dict, out_dir: str = ".") -> str:
    """Markdown: a row per rule (the output rules, and any other rule a run saw broken), a
    column per target, the same verdicts the runs' summaries give; notes on what could not run."""
    from topkspec.fuzz.verdicts import rules_to_show

    names = list(results)
    rules: list = []
    for result in results.values():
        if not isinstance(result, str):
            rules += [rule for rule in rules_to_show(result) if rule not in rules]
    if not rules:
        from topkspec import spec
        rules = [rule.id for rule in spec.RULE_LIST if rule.scope == "output"]
    profiles = sorted({result.profile for result in results.values() if not isinstance(result, str)})
    lines = ["| rule | stated by | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|---|" + "---|" * len(names)]
    for rule in rules:
        lines.append(f"| `{rule}` | {stated_by_column(rule, profiles)} | "
                     + " | ".join(cell(rule, results[n], out_dir) for n in names) + " |")
    lines.append("")
    lines.append("Cells: holds (examples that kept the rule), broken or broken by our reading only (failure "
                 "class; links to the report), known (a declared deviation, seen N times), unsupported (why), "
                 "not evaluated (no example reached the rule), not run (the target cannot run here: why below). Stated by: the documents, or our reading of them.")
    for name, result in results.items():
        if isinstance(result, str):
            lines.append(f"- `{name}`: not run here: {result}")
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
               isolate=None, timeout=5.0, out_dir: str = ".", progress=None, known=None, report_known=False,
               documents_only=False, max_axis_size=None, max_elements=None):
    """(markdown, exit code): run each target, then the table; the code is 1 when any broke a
    rule, else 3 when any judged too little (see RunResult.exit_code), else 0.
    An unknown target is bad usage (TargetError, before any run); one that cannot run here, or
    whose worker process does not start, becomes a column of 'not run' that says why."""
    from topkspec.errors import remove_if_empty, writable_folder
    from topkspec.targets.registry import get_target

    made = writable_folder(report_dir, "cannot write reports to") if report_dir else []  # before any target starts
    try:
        for name in names:
            get_target(name).close()  # bad names fail before any run starts
        results = _run_each(names, max_examples=max_examples, seed=seed, profile=profile, report_dir=report_dir,
                            isolate=isolate, timeout=timeout, progress=progress, known=known,
                            report_known=report_known, documents_only=documents_only,
                            max_axis_size=max_axis_size, max_elements=max_elements)
    finally:
        remove_if_empty(made)
    codes = {r.exit_code for r in results.values() if not isinstance(r, str)}
    status = 1 if 1 in codes else max(codes | {0})
    return format_matrix(results, out_dir), status


def _run_each(names, *, max_examples, seed, profile, report_dir, isolate, timeout, progress, known, report_known,
              documents_only, max_axis_size=None, max_elements=None) -> dict:
    """{name: RunResult, or why it could not run} for each target in turn (the matrix so far on Ctrl-C)."""
    from topkspec.fuzz.config import RunConfig, RunError
    from topkspec.targets.isolation import TargetCrashed, TargetHung
    from topkspec.fuzz.run import run_fuzz
    from topkspec.targets.registry import TargetError

    results: dict = {}
    for number, name in enumerate(names, 1):
        if progress is not None:
            progress.write(f"topkspec: matrix target {number} of {len(names)}: {name}\n")
        config = RunConfig(target=name, profile=profile, max_examples=max_examples, seed=seed,
                           settings="ci", report_dir=os.path.join(report_dir, slug(name)),
                           isolate=isolate, timeout=timeout, progress=progress, known=known,
                           report_known=report_known, documents_only=documents_only,
                           max_axis_size=max_axis_size, max_elements=max_elements)
        try:
            results[name] = run_fuzz(config)
        except (RunError, TargetError, TargetCrashed, TargetHung) as exc:  # unavailable, or no worker starts
            results[name] = str(exc)
            continue
        if results[name].interrupted:
            break  # Ctrl-C: the table so far
    return results
