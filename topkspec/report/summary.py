"""What the command line shows of each failure when no report folder is written: the input,
expected against actual (each side named) and the rule's sentence."""
from __future__ import annotations

from topkspec.report.cite import one_line
from topkspec.report.compare import array_text, compared_outputs
from topkspec.report.markdown import message_of
from topkspec.report.wording import refused_word

LIMIT = 16  # elements shown of each array


def _pair(out) -> str:
    values, indices = out
    return f"values {array_text(values, LIMIT)}, indices {array_text(indices, LIMIT)}"


def sides(failure) -> tuple[str, str]:
    """(expected, actual) in words, for the failure's relation."""
    relation = failure.relation
    v = failure.violation
    last = next((o for o in reversed(failure.outputs) if o is not None), None)
    if relation == "reject":
        return "an error (the case is invalid)", (f"a result: {_pair(last)}" if last else str(v.actual))
    if relation in ("accept", "crash", "hang"):
        what = {"accept": refused_word(failure), "crash": "the process died", "hang": "no answer"}[relation]
        return "a result", f"{what}: {v.actual}"
    shown = compared_outputs(failure, relation)
    if shown is not None:
        left, lv, right, rv = shown
        return f"{_pair(lv)}{left[len('expected'):]}", f"{_pair(rv)}{right[len('actual'):]}"
    plain = v.to_dict()
    return str(plain["expected"]), str(plain["actual"])


def failure_lines(failure, indent: str = "      ") -> list[str]:
    """The lines under a failure's heading in the summary."""
    expected, actual = sides(failure)
    lines = [f"what:     {message_of(failure.violation)}"]
    if failure.x is not None:
        lines.append(f"input:    {array_text(failure.x, LIMIT)}")
    lines += [f"expected: {expected}", f"actual:   {actual}",
              f"rule:     {one_line(failure.rule, failure.case)}"]
    return [indent + line for line in lines]
