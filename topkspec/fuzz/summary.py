"""What a run shows a person: progress lines while it runs and the summary at its end."""
from __future__ import annotations

import time


class Progress:
    """Progress lines on a stream (at most one a second): examples done against the budget,
    failures found, time so far and examples per second."""

    def __init__(self, stream, total: int, label: str = ""):
        self.stream = stream
        self.total = total
        self.label = label
        self.start = time.monotonic()
        self.last = 0.0

    def update(self, result, group: str, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not force and now - self.last < 1.0:
            return
        self.last = now
        elapsed = now - self.start
        done = result.total_examples
        rate = f"{done / elapsed:.1f} examples/s" if elapsed > 0 else "-"
        found = len(result.failures)
        label = f"{self.label} " if self.label else ""
        # Shrinking a failure runs examples beyond the budget, so the count may pass it.
        self.stream.write(f"topkspec: {label}[{group}] {done}/{self.total} examples, {found} failure"
                          f"{'' if found == 1 else 's'}, {elapsed:.1f} s, {rate}\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own (which target a matrix or bench is on)."""
        if self.stream is not None:
            self.stream.write(f"topkspec: {text}\n")
            self.stream.flush()


def budget_lines(result) -> list[str]:
    """Examples per group against its share of the budget, and why a group used more or fewer."""
    from topkspec.fuzz.config import MAX_SEARCHES

    budgets = getattr(result, "budgets", None) or {}
    if not budgets:
        return []
    failed = result.groups_that_failed()
    parts = ", ".join(f"{g} {result.examples.get(g, 0)}/{share}" for g, share in budgets.items())
    lines = [f"examples by group against its share of the budget of {result.max_examples}: {parts}"]
    for group, share in budgets.items():
        used = result.examples.get(group, 0)
        if used == share:
            continue
        if group in failed and used > share:
            why = "shrinking its failures runs further examples (each one counted)"
        elif group in failed:
            why = (f"each search stops looking some time after its last new failure, and a group makes at most "
                   f"{MAX_SEARCHES}")
        elif used > share:
            why = "examples saved in the example database replay first and count too"
        else:
            why = ("Hypothesis stopped early: it ran out of new inputs to try, or a crashing or "
                   "hanging target was not retried")
        lines.append(f"  {group}: {used} of {share}: {why}")
    return lines


def failure_heading(failure, result, where: str = "") -> str:
    """'[class] rule (who states it): case', then `where`, then '(known upstream: link)' when a
    known-deviation list declares it ('known to topkspec' when its link is a finding of the register): the line a failure gets wherever a run lists it."""
    from topkspec.fuzz.verdicts import status_word
    from topkspec.known import known_upstream

    upstream = known_upstream(failure, result, result.target)
    status = status_word(failure.rule, result.profile, getattr(result, "contract", None))
    return (f"[{failure.failure_class}] {failure.rule} ({status}): {failure.case.describe()}{where}"
            + (f" ({'known to topkspec' if upstream[0].unreported else 'known upstream'}: "
               f"{upstream[0].url or upstream[0].reason})" if upstream else ""))


def kind_line(failure, result) -> str:
    """'kind: standard (fails the run): <the argument it makes>' for a failure of the run."""
    from topkspec.spec.kinds import fails_run

    kind = result.kind(failure)
    fails = "fails the run" if fails_run(kind.id, result.fail_on) else "does not fail the run"
    return f"kind: {kind.id} ({fails}): {kind.argument}"


def kind_counts(result) -> list[str]:
    """The failures counted per kind (spec.kinds), and which kinds fail the run (--fail-on)."""
    from topkspec.spec.kinds import ADAPTER, KINDS

    if not result.failures:
        return []
    counts = result.failures_by_kind()
    lines = [f"failures by kind (the run fails on {', '.join(result.fail_on)}; the adapter's own errors always, "
             f"open never):"]
    lines += [f"  {kind:<28} {counts[kind]}" for kind in (*KINDS, ADAPTER) if counts[kind]]
    if not result.failing():
        lines.append("  none of them fails the run (exit 0 unless something else does): their kinds are not in "
                     "--fail-on")
    return lines


def format_summary(result) -> str:
    """The end-of-run summary a person reads."""
    from topkspec.report.summary import failure_lines
    from topkspec.spec.queries import profile_text

    from topkspec.fuzz.config import EXIT_VACUOUS, MIN_JUDGED_SHARE
    from topkspec.fuzz.verdicts import known_lines, verdict_lines

    rate = f" ({result.total_examples / result.seconds:.1f} a second)" if result.seconds > 0 else ""
    strict = " (strict doc: K below the axis size)" if getattr(result, "strict_doc", False) else ""
    lines = [f"topkspec fuzz: {result.target} ({result.version}), spec {result.profile}{strict}: "
             f"{profile_text(result.profile)}",
             f"{result.total_examples} examples in {result.seconds:.1f}s{rate}"
             + (f", seed {result.seed}" if result.seed is not None else "")]
    if getattr(result, "interrupted", False):
        lines.append("interrupted (Ctrl-C): the run so far; failures found before the interrupt are "
                     "reported, perhaps not fully shrunk")
    lines.extend(f"note: {note}" for note in getattr(result, "notes", ()))
    lines += budget_lines(result)
    judged_by = "the documents alone (--documents-only)" if result.documents_only else "the documents and our reading"
    lines.append(f"verdict per rule, judged by {judged_by} (who states the rule: the documents, or our reading "
                 f"of them):")
    lines += verdict_lines(result)
    lines.append("coverage per type and rank:")
    by_type: dict = {}
    for (dtype, rank), count in result.coverage.items():
        by_type.setdefault(dtype, {})[rank] = count
    for dtype in sorted(by_type):
        ranks = ", ".join(f"rank {r}: {c}" for r, c in sorted(by_type[dtype].items()))
        lines.append(f"  {dtype:<10} {ranks}")
    lines += graph_lines(result)
    if getattr(result, "layouts", None):
        lines += layout_coverage_lines(result.layouts)
    if result.unsupported:
        lines.append("unsupported cases by reason (examples set aside, not judged: neither failures nor the "
                     "known deviations' counts):")
        for reason, count in result.unsupported.most_common():
            lines.append(f"  {count:>5}  {reason}")
    if getattr(result, "refused_k_at_axis_size", 0):
        lines.append(f"DirectML K equal to the axis size refused (the text says K is less than the axis size; "
                     f"not a failure, --strict-doc applies the text): {result.refused_k_at_axis_size}")
    if result.not_runnable:
        lines.append(f"invalid descriptors drawn that no call can carry (see `topkspec validate`): "
                     f"{result.not_runnable}")
    thin = [] if getattr(result, "interrupted", False) else result.thin_groups()
    for group, judged, ran in thin:
        lines.append(f"too little judged in group {group}: {judged} of its {ran} examples (fewer than "
                     f"{MIN_JUDGED_SHARE:.0%}; the rest unsupported, refused as allowed or not runnable)")
    lines += known_lines(result)
    for rule, first in result.readings.items():
        lines.append(f"note: {rule} (our reading) broke; not a failure under --documents-only: {first}")
    if result.failures:
        lines.append("failures by class:")
    elif result.errors:
        pass
    elif result.unreproduced:
        lines.append("failures: none filed; what failed in the run failed in no fresh process (below), so it is "
                     "no failure of any case (exit 0 unless something else failed)")
    elif thin:
        lines.append("failures: none found, but the run judged too little to say the properties hold "
                     f"(exit {EXIT_VACUOUS})")
    elif getattr(result, "interrupted", False):
        lines.append("failures: none found before the interrupt")
    elif result.known_seen or result.readings:
        set_aside = (["known deviations"] if result.known_seen else []) + (
            ["rules of our reading, notes under --documents-only"] if result.readings else [])
        lines.append(f"failures: none that fail the run (exit 0); what broke, listed above, is "
                     f"{' and '.join(set_aside)}")
    else:
        lines.append("failures: none, every property held")
    for name, count in sorted(result.failures_by_class().items()):
        lines.append(f"  {name:<28} {count}")
    lines += kind_counts(result)
    for failure in result.failures:
        where = f" -> {failure.report_dir}" if failure.report_dir else ""
        lines.append(f"  {failure_heading(failure, result, where)}")
        if not failure.report_dir:
            lines += failure_lines(failure)
        if failure.violation.also:  # one report for the bug: the rules it names beside its own
            lines.append(f"      also breaks: {', '.join(failure.violation.also)}")
        lines.append(f"      {kind_line(failure, result)}")
    if result.known_failures:
        lines.append("known deviations reported (--report-known; not failures):")
    for failure in result.known_failures:
        where = f" -> {failure.report_dir}" if failure.report_dir else ""
        lines.append(f"  [{failure.failure_class}] {failure.rule}: {failure.case.describe()}{where}")
    if result.unreproduced:
        from topkspec.fuzz.confirm import not_filed_line
        lines += [not_filed_line(failure, saved) for failure, saved in result.unreproduced]
    if result.timing["confirm_s"]:
        lines.append(f"replaying failures in fresh processes before filing them: {result.timing['confirm_s']:.1f}s "
                     f"(not in the examples' time above)")
    for group, message in result.errors:
        lines.append(f"error in group {group} (a fault of the suite, not the target): {message}")
    return "\n".join(lines)


def graph_lines(result) -> list[str]:
    """The share of each ONNX graph context among the examples run (spec.graphs), where any
    example ran inside a graph; nothing otherwise."""
    from topkspec.spec import graphs

    counts = getattr(result, "graphs", None) or {}
    total = sum(counts.values())
    if not any(context and count for context, count in counts.items()):
        return []
    lines = ["coverage per graph context (the ONNX model around the TopK):"]
    for context in (None, *graphs.CONTEXTS):
        if counts.get(context):
            lines.append(f"  {graphs.describe(context):<50} {100 * counts[context] / total:5.1f}%")
    return lines


def layout_coverage_lines(layouts) -> list[str]:
    """The layout group's share of each input layout, output layout, flag and compile mode."""
    judged = layouts["alone"] + layouts["graph"]
    lines = [f"coverage per layout (the layout group's {judged} laid-out DirectML calls):"]
    for part in ("input", "output", "flag"):
        shares = [(name.split(" ", 1)[1], n) for name, n in sorted(layouts.items()) if name.startswith(part + " ")]
        lines.append(f"  {part:<8}" + ", ".join(f"{name} {100 * n / judged:.0f}%" for name, n in shares))
    lines.append(f"  {'compile':<8}alone {100 * layouts['alone'] / judged:.0f}%, in a graph "
                 f"{100 * layouts['graph'] / judged:.0f}%")
    return lines
