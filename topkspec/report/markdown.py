"""report.md: a bug report a maintainer files as it is: a plain title, the quoted rule, the
minimal case, expected against actual (each side named), the repro and the stack."""
from __future__ import annotations

import json
import platform

import numpy as np

from topkspec.properties import failures
from topkspec.report.cite import contract_citations, one_line
from topkspec.report.kinds import kind_paragraph
from topkspec.spec.kinds import FEATURE_REQUEST
from topkspec.report.compare import array_text, compared_outputs, side_by_side
from topkspec.repro.program import broken_rules, descriptor_of
from topkspec.report.wording import case_text, refused_word
from topkspec.spec.queries import rule_status


def message_of(violation) -> str:
    """The violation's message, which names neither rule nor call (the report shows both on
    lines of their own); a message made elsewhere that begins with its rule id loses it."""
    text = violation.message
    for rule in violation.rules:
        if text.startswith(f"{rule}: "):
            return text[len(rule) + 2:]
    return text


def _citable(case):
    """The case as the citations read it (family, op, profile): a stand-in for a descriptor no
    Case describes gives its profile's family and no operator."""
    from types import SimpleNamespace

    from topkspec.spec.descriptors import dml_operator
    from topkspec.spec.profiles import parse_profile

    if getattr(case, "op", None) is not None:
        return case
    family, op = parse_profile(case.profile).family, None
    descriptor = getattr(getattr(case, "draw", None), "descriptor", None)
    if isinstance(descriptor, dict):  # the operator it names, when it names one
        try:
            op = dml_operator(descriptor.get("Type")) if family == "dml" else "TopK"
        except ValueError:
            pass
    return SimpleNamespace(profile=case.profile, family=family, op=op)


def case_words(case) -> str:
    """The case in words ('float32[2], K = 2, largest'), or what a stand-in says of its descriptor."""
    return case_text(case) if hasattr(case, "shape") else case.describe()


def rule_section(rule_id: str, case, profile: str, contract=None) -> list[str]:
    """The quoted sentences of a rule, each with its document, address and section, and the
    rule with its status at the run's `profile` (the title's). For a runtime held to a
    `contract` of its own, the runtime's own sentence where its contract speaks for the rule
    (report.cite.contract_citations), and what every TopK keeps where it does not."""
    from topkspec import spec
    from topkspec.spec.contracts import speaks_for
    from topkspec.spec.queries import rule_statement

    rule = spec.RULES.get(rule_id)
    own = speaks_for(contract, rule_id) is not None
    lines = []
    if contract is not None and contract.implements == "own" and not own and rule is not None:
        lines += [f"{contract.name} is held to its own documentation, which this rule does not depend on: "
                  f"it is plain correctness, which every TopK keeps. The ONNX or DirectML sentence it stands on:", ""]
    for cited in contract_citations(rule_id, _citable(case), contract):
        where = f"[{cited['title']}]({cited['url']})" if cited["url"] else cited["title"]
        lines += [f"> {cited['quote']}", "", f"— {where}, {cited['section']}."
                  + (f" ({cited['note']})" if cited["note"] else ""), ""]
    if rule is not None:
        lines.append(f"Rule `{rule.id}` ({rule_statement(rule.id, profile, contract).status}): {rule.statement}"
                     + (f" Why: {rule.reason}" if rule.reason and not own else ""))
    return lines


def _descriptor(failure) -> str:
    """The failure's descriptor as JSON: the one judged as written, else the case's form."""
    from topkspec import spec

    written = descriptor_of(failure)
    if written is not None:
        return json.dumps(written)
    try:
        return json.dumps(spec.descriptor(failure.case))
    except Exception:
        return json.dumps(failure.case.to_dict(), default=str)


def _output(out) -> str:
    values, indices = out
    return f"values {array_text(values)}, indices {array_text(indices)}"


def expected_and_actual(failure, relation: str, stack, timeout: float, contract=None) -> list[str]:
    """The two sides, each named: expected (the spec) against actual (the runtime)."""
    v, case = failure.violation, failure.case
    runtime = stack.label
    last = next((o for o in reversed(failure.outputs) if o is not None), None)
    if descriptor_of(failure) is not None and relation in ("reject", "accept"):
        if relation == "reject":
            return [f"- **Expected** (the spec): a refusal, because {one_line(failure.rule, _citable(case), contract)}",
                    f"- **Actual** ({runtime}): accepted ({v.actual})", ""]
        return [f"- **Expected** (the spec): acceptance; the descriptor is valid at `{case.profile}`",
                f"- **Actual** ({runtime}): refused ({v.actual})", ""]
    if relation == "reject":
        return [f"- **Expected** (the spec): an error, because {one_line(failure.rule, case, contract)}",
                f"- **Actual** ({runtime}): " + (f"a result: {_output(last)}" if last else str(v.actual)), ""]
    if relation == "accept":
        return [f"- **Expected** (the spec): a result; the case is valid at `{case.profile}`",
                f"- **Actual** ({runtime}): {refused_word(failure)}: {v.actual}", ""]
    broken = broken_rules(failure) if relation in ("crash", "hang") else []
    if broken:  # a case drawn to break a rule: the spec asks for a clean refusal of it
        what = "no answer" if relation == "hang" else "the process died"
        return [f"- **Expected** (the spec): a refusal (a clean error), because {one_line(broken[0], case, contract)}",
                f"- **Actual** ({runtime}): {what}: {v.actual}", ""]
    if relation == "hang":
        return [f"- **Expected**: {v.expected or 'an answer'} (the run's time limit)",
                f"- **Actual** ({runtime}): no answer: {v.actual}", ""]
    if relation == "crash":
        return ["- **Expected** (the spec): a result", f"- **Actual** ({runtime}): the process died: {v.actual}", ""]
    lines = []
    shown = compared_outputs(failure, relation)
    if shown is not None:
        at = failure.calls[-1][0] if relation == "result" else failure.calls[0][0]
        left, lv, right, rv = shown
        lines.append(side_by_side(at, left, lv, f"{right} ({runtime})" if right == "actual" else right, rv))
        return lines
    plain = v.to_dict()
    return [f"- **Expected** (the spec): {plain['expected']}", f"- **Actual** ({runtime}): {plain['actual']}", ""]


def summary(failure, relation: str, stack) -> str:
    """The opening sentence: the case, what the runtime did, in plain words."""
    v, case = failure.violation, failure.case
    last = next((o for o in reversed(failure.outputs) if o is not None), None)
    if descriptor_of(failure) is not None:  # judged on the descriptor as written
        if relation == "reject":
            draw = failure.draw if failure.draw is not None else getattr(case, "draw", None)
            how = f": {draw.how}" if draw is not None and draw.how else ""
            return f"{stack.label} accepted the descriptor below ({v.actual}), though it breaks the rule below{how}."
        if relation == "accept":
            return f"{stack.label} refused the descriptor below ({v.actual}), though it is valid at `{case.profile}`."
        given = f"Given the descriptor below, {stack.label}"
    else:
        given = f"With {case_text(case)}, {stack.label}"
    if relation == "reject":
        returned = f"returned {_output(last)}" if last else "returned a result"
        return f"{given} {returned} instead of an error, though the case breaks the rule below."
    if relation == "accept" and failure.failure_class == failures.INTERNAL_ERROR:  # the library's bug
        return f"{given} failed inside its own code instead of answering ({v.actual}), though the case is valid at " \
               f"`{case.profile}`: an error no refusal is made of, a bug in the library."
    if relation == "accept":
        return f"{given} refused the case ({v.actual}), though it is valid at `{case.profile}`."
    if relation in ("crash", "hang"):
        return f"{given} {'killed its process' if relation == 'crash' else 'did not answer'}: {v.actual}"
    if failure.failure_class == failures.ADAPTER_ERROR:
        return (f"{given}: the adapter's own code failed, so nothing is known of the runtime "
                f"yet; fix the adapter and run again. {message_of(v)}")
    return f"{given} broke the rule below: {message_of(v)}."


def after_words(failure) -> str:
    """' after TopK on float16[1], K = 1, largest' for a failure that needs earlier calls in its
    process (Failure.prior), '' for one that fails alone."""
    prior = getattr(failure, "prior", None) or []
    if not prior:
        return ""
    more = f" and {len(prior) - 1} more call{'s' if len(prior) > 2 else ''}" if len(prior) > 1 else ""
    return f" after TopK on {case_words(prior[-1][0])}{more}"


def earlier_section(failure) -> list[str]:
    """The calls a failure needs before its own, state-setting calls first in the report."""
    prior = getattr(failure, "prior", None) or []
    if not prior:
        return []
    one = len(prior) == 1
    lines = [f"It fails only after {'this call' if one else f'these {len(prior)} calls'} in the same process: "
             f"alone, in a fresh process, the case does not fail. `repro.py` makes {'it' if one else 'them'} first.",
             ""]
    lines += [f"{n}. TopK on {case_words(case)} at `{case.profile}`: input `{array_text(x)}`"
              for n, (case, x) in enumerate(prior, 1)]
    return lines + [""]


def environment(stack) -> list[str]:
    lines = [f"- **Runtime**: {stack.label}"
             + (": " + ", ".join(f"{name} {version}" for name, version in stack.versions.items())
                if stack.versions else "")]
    lines += [f"- {detail}" for detail in stack.details]
    lines.append(f"- numpy {np.__version__}, Python {platform.python_version()}, "
                 f"{platform.system()} {platform.machine()}")
    return lines


def time_limit_paragraph(failure, timeout: float) -> list[str]:
    """What a timeout is: a time limit reached, not a rule broken, and how to set the limit."""
    limit = failure.violation.expected or f"an answer within {timeout:g} s"
    return ["## The time limit", "",
            f"No rule of the spec is in question: the run expected {limit} and got none, so the call was "
            f"stopped. A hang and a call slower than the limit look alike here: run again with a longer "
            f"limit (`topkspec fuzz --timeout SECONDS`) to tell them apart. `repro.py` waits for the same "
            f"limit."]


# ONNX's open question of where NaN sorts in TopK, and the pull request that would answer it.
NAN_DISCUSSION = ("https://github.com/onnx/onnx/issues/4716", "https://github.com/onnx/onnx/pull/7754")


def nan_paragraph(failure) -> list[str]:
    """For a failure with NaN in its input: where NaN goes is open, and this result is wrong
    wherever it goes (the NaN check files nothing else under a documented rule)."""
    if "out.nan.unspecified" not in failure.violation.rules + failure.violation.also:
        return []
    issue, pull = NAN_DISCUSSION
    decided = ("so the rule above decides it, whatever the answer"
               if failure.rule != "out.nan.unspecified" else "so only our reading of NaN decides it")
    return ["## Where NaN goes", "",
            f"Neither text says where NaN sorts, and ONNX's question is open ({issue}; the pull request "
            f"{pull} would make NaN larger than every number). topkspec asks whether some placement of NaN "
            f"(largest, smallest, or anywhere) makes this result right: none does here, {decided}.", ""]


def known_paragraph(upstream) -> list[str]:
    """The lines that say a failure is a declared deviation (see known.known_upstream), with
    its link, so nobody files a duplicate: the report's first lines after the title."""
    if upstream is None:
        return []
    entry, source = upstream
    if entry.unreported:  # topkspec's own finding: its report is the one to file
        return [f"**Known to topkspec, not reported upstream**: {source} declares it: "
                f"{entry.reason or entry.describe()}. topkspec's {entry.url} is written for the tracker: "
                f"file that one rather than this; `--known` counts it instead of failing on it.", ""]
    link = f" ({entry.url})" if entry.url else ""
    return [f"**Known upstream**: {source} declares it: {entry.reason or entry.describe()}{link}. Read that "
            f"before filing this; `--known` counts it instead of failing on it.", ""]


def report_markdown(failure, result, relation: str, *, title: str, stack, repro: str, rerun: str,
                    timeout: float, upstream=None, kind=None) -> str:
    from topkspec import __version__
    from topkspec import spec

    case, v = failure.case, failure.violation
    from topkspec.spec.queries import profile_text

    opening = summary(failure, relation, stack)
    if failure.prior:  # the state-setting calls first
        opening = f"After TopK on {'; '.join(case_words(c) for c, _ in failure.prior)} in the same process: " \
                  + opening[0].lower() + opening[1:]
    if kind is not None and kind.id == FEATURE_REQUEST:
        opening = "A feature request, not a bug report: " + opening[0].lower() + opening[1:]
    parts = [f"# {title}", "", *(kind_paragraph(kind) if kind else []), *known_paragraph(upstream), opening, ""]
    if failure.failure_class == failures.TIMEOUT:  # no spec rule is in question either
        parts += time_limit_paragraph(failure, timeout)
    elif failure.failure_class != failures.ADAPTER_ERROR:  # no spec rule is in question
        parts += ["## The rule", "", f"Judged by {profile_text(case.profile)}, profile `{case.profile}`:", ""]
        parts += rule_section(failure.rule, case, result.profile, getattr(result, "contract", None))
    others = [r for r in v.rules + v.also if r != failure.rule]
    if others:
        parts += ["", "It also breaks:"]
        for rule_id in others:
            rule = spec.RULES.get(rule_id)
            parts.append(f"- `{rule_id}`" + (f" ({rule_status(rule_id, result.profile)}): {rule.statement}"
                                             + (f" Why: {rule.reason}" if rule.reason else "") if rule else ""))
    parts += ["", *nan_paragraph(failure), "## The case", "", *earlier_section(failure),
              f"{case_words(case)} at `{case.profile}`:", "", "```json", _descriptor(failure), "```", ""]
    if failure.drawn is not None:
        parts += [f"The property group `{failure.group}` drew {case_words(failure.drawn)} and made this call to "
                  f"check it; this call is the one that failed.", ""]
    if failure.draw is not None:
        parts += [f"It breaks {', '.join(f'`{r}`' for r in sorted(failure.draw.rules))}: {failure.draw.how}.", ""]
    if failure.x is not None:
        parts += [f"Input: `{array_text(failure.x)}`", ""]
    parts += ["## Expected and actual", ""]
    parts += expected_and_actual(failure, relation, stack, timeout, getattr(result, "contract", None))
    beside = ("`case.json` beside it holds the whole case" if descriptor_of(failure) is not None else
              "`inputs.npz` and `case.json` beside it hold the inputs and the whole case")
    parts += ["## Reproduce", "", f"`python repro.py` exits 1 while the bug is there and 0 once it is fixed "
              f"({beside}):", "",
              "```python", repro.rstrip("\n"), "```", "", "## Environment", ""]
    parts += environment(stack)
    found = f"property group `{failure.group}`" + (f", seed {result.seed}" if result.seed is not None else "")
    again = ("To run the same search again" if result.seed is not None else
             "To search again (saved failures replay first from the example database)")
    parts += ["", f"Found by topkspec {__version__} ({found}). {again}:", "",
              "```sh", rerun, "```", ""]
    return "\n".join(parts)
