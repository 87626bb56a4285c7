"""The plain words of a report: what happened, in a title a maintainer files as it is
("ONNX Runtime TopK-24 (CPU) accepts K = 0 and returns empty outputs")."""
from __future__ import annotations

from topkspec.properties import evidence, failures
from topkspec.properties.catalogue import WORDS

def case_text(case) -> str:
    """'float32[2], K = 2, largest' (axis and sortedness when they matter)."""
    parts = [f"{case.dtype}{list(case.shape)}", f"K = {case.k}"]
    if case.rank > 1:
        parts.append(f"axis {case.axis}")
    parts.append("largest" if case.largest else "smallest")
    if not case.sorted:
        parts.append("sorted=0")
    if getattr(case, "context", None):  # the TopK inside an ONNX graph (spec.graphs)
        from topkspec.spec.graphs import describe
        parts.append(describe(case.context))
    return ", ".join(parts)


def broken_field(rule: str, case) -> str:
    """What an invalid case asks for, by the rule it breaks: 'axis 1 for a rank-1 input'."""
    tail = rule.rsplit(".", 1)[-1] if "." in rule else rule
    if rule.endswith("k.positive"):
        return f"K = {case.k}"
    if rule.endswith(("k.max", "k.max_strict")):
        n = case.axis_size if 0 <= case.norm_axis < case.rank else "?"
        relation = "equal to" if case.k == n else "above"
        return f"K = {case.k}, {relation} the axis size {n}"
    if rule.endswith("axis.range"):
        return f"axis {case.axis} for a rank-{case.rank} input"
    if rule.endswith(("dtype.T", "dtype.value_supported")):
        return f"{case.dtype} input, which {case.profile} does not allow"
    if rule.endswith("dtype.index_supported"):
        return f"{case.index_dtype} indices, which {case.profile} does not allow"
    if rule.endswith("rank.supported"):
        return f"a rank-{case.rank} input, which {case.profile} does not allow"
    if rule.endswith("attr.boolean"):
        return "largest or sorted other than 0 and 1"
    return f"a descriptor that breaks {rule} ({tail})"


def _accepted(rule: str, case) -> str:
    """What an accepted invalid case asked for, by the rule it breaks."""
    return f"accepts {broken_field(rule, case)}"


def _on_invalid(failure) -> str:
    """' on axis 1 for a rank-1 input, which breaks dml.axis.range' for a failure on a case drawn to break
    a rule (the broken rule and its field), else ''."""
    draw = failure.draw if failure.draw is not None else getattr(failure.case, "draw", None)
    if draw is None or not draw.rules:
        return ""
    rule = sorted(draw.rules)[0]
    return f" on {broken_field(rule, failure.case)}, which breaks {rule}"


def _returned(outputs) -> str:
    out = next((o for o in reversed(outputs) if o is not None), None)
    if out is None:
        return ""
    values = out[0]
    if getattr(values, "size", 1) == 0:
        return " and returns empty outputs"
    return f" and returns values of shape {list(values.shape)}"


# Diagnoses a title states only where the evidence supports them (properties.evidence): indices
# counted from 1 when every index is off by exactly one; ties out of index order when the
# values are right, in order, and only tied elements are named otherwise.
_DIAGNOSES = {"out.indices.base": evidence.one_based, "out.ties.index_order": evidence.ties_only,
              "out.ties.kth_place": evidence.ties_only}


def _evidence(failure):
    """(case, x, values, indices) of the call that failed, or None."""
    output = failure.outputs[-1] if failure.outputs else None
    if output is None or failure.x is None:
        return None
    return (failure.case, failure.x, *output)


def _supported(rule: str, failure) -> bool:
    """Whether the failure's evidence supports the diagnosis `rule`'s words state."""
    guard = _DIAGNOSES.get(rule)
    if guard is None:
        return True
    shown = _evidence(failure)
    try:
        return shown is not None and guard(*shown)
    except Exception:  # outputs the evidence cannot be read from: no diagnosis
        return False


def _neutral(failure) -> str:
    """A title that states no diagnosis: wrong values, or (the values right) wrong indices."""
    shown = _evidence(failure)
    try:
        kind = evidence.diagnosis(*shown) if shown is not None else evidence.VALUES
    except Exception:
        kind = evidence.VALUES
    return "returns wrong values" if kind in (evidence.VALUES, evidence.SHAPE) else "returns wrong indices"


def what_happened(failure) -> str:
    """The verb phrase of the title: 'accepts K = 0 and returns empty outputs'."""
    case, kind = failure.case, failure.failure_class
    if kind == failures.ACCEPTS_INVALID:
        return _accepted(failure.rule, case) + _returned(failure.outputs)
    if kind == failures.REJECTS_VALID:
        return f"refuses a valid case ({case_text(case)})"
    if kind == failures.INTERNAL_ERROR:  # not a refusal: the library failed in its own code
        return f"fails with an internal error on a valid case ({case_text(case)})"
    if kind == failures.CRASH:
        return f"crashes the process{_on_invalid(failure)} ({case_text(case)})"
    if kind == failures.TIMEOUT:
        return f"does not answer within the time limit{_on_invalid(failure)} ({case_text(case)})"
    if kind == failures.ADAPTER_ERROR:  # a drawn descriptor is shown as drawn ("K = '1'")
        shown = failure.draw.how if failure.draw is not None and failure.draw.how else case_text(case)
        return f"adapter breaks before the runtime is judged ({shown})"
    if kind == failures.NONDETERMINISTIC:
        return f"returns different results for the same input ({case_text(case)})"
    rules = set(failure.violation.rules)
    phrase = next((text for rule, text in WORDS if rule in rules and _supported(rule, failure)), None)
    if phrase is None:
        phrase = _neutral(failure) if rules & set(_DIAGNOSES) else f"breaks {failure.rule}"
    if "out.nan.unspecified" in rules and "NaN" not in phrase:  # judged with NaN in the input
        phrase += " when the input holds NaN"
    return f"{phrase} ({case_text(case)})"


def refused_word(failure) -> str:
    """What a valid case got instead of a result: refused, or (an internal error) the library failed."""
    return "failed inside its own code (no refusal)" if failure.failure_class == failures.INTERNAL_ERROR else "refused"


def title(stack, failure) -> str:
    """'<runtime> <operator> (<device>) <what happened>'."""
    return f"{stack.label} {what_happened(failure)}"


# Who decides a title's verdict, after an em dash so that it cannot be read as part of what the
# target did ("accepts K = 0 (as the documents state it)" read as if the documents allowed it).
_DECIDES = {"documented": " — the documents decide it", "interpretation": " — our reading decides it",
            "unspecified": " — our reading decides it"}


def decided_by(statement) -> str:
    """The end of a report's title for a rule's Statement (spec.queries.stated_by): who decides
    that the target is wrong; an adapter error says it gives no verdict on the target."""
    return _DECIDES.get(statement.status, f" ({statement.phrase})")

