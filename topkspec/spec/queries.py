"""What a profile allows: operators, value and index types, ranks (canonical type names)."""
from __future__ import annotations

from typing import NamedTuple

from topkspec.spec import dtypes
from topkspec.spec.checks import support_row
from topkspec.spec.profiles import parse_profile
from topkspec.spec.tables import DML_FEATURE_LEVELS, DML_SUPPORT, ONNX_VERSIONS

_TABLES = {"dml_support": DML_SUPPORT, "dml_feature_levels": DML_FEATURE_LEVELS}
ONNX_MAX_RANK = 8  # ONNX sets no bound; the strategies and matrices stop where DirectML does


def ops(profile) -> list[str]:
    """Operators the profile has: ["TOP_K", "TOP_K1"] (TOP_K alone before 2_1) or ["TopK"]."""
    prof = parse_profile(profile)
    if prof.family == "onnx":
        return ["TopK"]
    return [op for op in ("TOP_K", "TOP_K1") if support_row(_TABLES, op, prof.level) is not None]


def _row(profile, op):
    prof = parse_profile(profile)
    row = support_row(_TABLES, op, prof.level)
    if row is None:
        raise ValueError(f"DML_OPERATOR_{op} does not exist at {prof.name}")
    return row


def value_types(profile, op=None) -> list[str]:
    prof = parse_profile(profile)
    if prof.family == "onnx":
        return list(ONNX_VERSIONS[prof.opset]["T"])
    return [dtypes.canonical(t) for t in _row(prof, op or ops(prof)[-1])["value_types"]]


def index_types(profile, op=None) -> list[str]:
    prof = parse_profile(profile)
    if prof.family == "onnx":
        return list(ONNX_VERSIONS[prof.opset]["I"])
    return [dtypes.canonical(t) for t in _row(prof, op or ops(prof)[-1])["index_types"]]


def ranks(profile, op=None) -> list[int]:
    prof = parse_profile(profile)
    if prof.family == "onnx":
        return list(range(1, ONNX_MAX_RANK + 1))
    return list(_row(prof, op or ops(prof)[-1])["ranks"])



def tables_used(profile) -> dict:
    """Which table judges each operator: {"TOP_K1": "5_0", "TOP_K": "5_0"} (the support row a
    DirectML level uses) or {"TopK": "24"} (the TopK version an opset resolves to)."""
    prof = parse_profile(profile)
    if prof.family == "onnx":
        return {"TopK": prof.opset}
    return {op: support_row(_TABLES, op, prof.level)["since"] for op in ops(prof)}


def profile_text(profile) -> str:
    """How a profile is judged, in words: 'ONNX TopK-24'; a profile that names no known
    level or TopK version says which tables stand in for it."""
    prof = parse_profile(profile)
    used = tables_used(prof)
    if prof.family == "onnx":
        text = f"ONNX TopK-{used['TopK']}"
        if str(prof.requested_opset) != used["TopK"]:
            text += f" (the newest TopK version at or below opset {prof.requested_opset})"
        return text
    rows = ", ".join(f"DML_{op} by its DML_FEATURE_LEVEL_{since} table" for op, since in used.items())
    text = f"DirectML DML_FEATURE_LEVEL_{prof.level_name} ({rows}"
    if prof.level_name not in DML_FEATURE_LEVELS:
        text += f"; {prof.level_name} is no feature level this spec knows, so the newest tables below it stand in"
    text += ")"
    return text


# A rule's status at a profile, in the words each place shows it: case.json's rule_status, the
# summary's and the matrix's column, a report's title. Every place reads `stated_by`.
NOT_A_RULE = "adapter error"  # a failure filed under a pseudo-rule: the adapter broke, no rule is in question
TIME_LIMIT = "time limit"  # the pseudo-rule "timeout": no answer within the run's limit, no rule in question
_WORDS = {TIME_LIMIT: (TIME_LIMIT, "a time limit, no rule in question"),
          "documented": ("documents", "as the documents state it"),
          "interpretation": ("our reading", "our reading of the documents"),
          "unspecified": ("our reading", "our reading of the documents"),
          NOT_A_RULE: (NOT_A_RULE, "adapter error: no verdict on the target")}


class Statement(NamedTuple):
    """Who states a rule at a profile.

    status: "documented", "interpretation", "unspecified", or "adapter error" for a pseudo-rule
    outside the spec (an adapter error, filed under "adapter"); word: "documents", "our
    reading" or "adapter error" (tables, summaries); phrase: the same for a report's title."""

    status: str
    word: str
    phrase: str

    @property
    def is_reading(self) -> bool:
        """Our reading of the documents, not their statement: `--documents-only` notes it.
        An adapter error is neither, and never set aside."""
        return self.status in ("interpretation", "unspecified")


def stated_by(rule_id: str, profile=None) -> Statement:
    """Who states the rule at `profile` (a profile string or Profile): documented where a later
    spec version states what an earlier one left to our reading (Rule.documented_from)."""
    from topkspec.spec.rules import DOCUMENTED, RULES

    rule = RULES.get(rule_id)
    if rule is None:
        status = TIME_LIMIT if rule_id == "timeout" else NOT_A_RULE
    elif profile is not None and any(_at_or_after(profile, first) for first in rule.documented_from):
        status = DOCUMENTED
    else:
        status = rule.status
    return Statement(status, *_WORDS[status])


def rule_statement(rule_id: str, profile=None, contract=None) -> Statement:
    """Who states the rule for a runtime held to `contract` (spec.contracts): where the contract
    speaks for the rule (a framework's own promise, or a point changed from the ONNX or
    DirectML text) its promise's status, else the spec's (stated_by)."""
    from topkspec.spec.contracts import speaks_for

    promise = speaks_for(contract, rule_id)
    if promise is None:
        return stated_by(rule_id, profile)
    return Statement(promise.status, *_WORDS[promise.status])


def rule_status(rule_id: str, profile=None) -> str:
    """The rule's status at `profile` (see stated_by)."""
    return stated_by(rule_id, profile).status


def _at_or_after(profile, first) -> bool:
    """Whether `profile` is `first` or a later version of the same family."""
    from topkspec.spec.profiles import parse_profile

    try:
        profile, first = parse_profile(profile), parse_profile(first)
    except ValueError:
        return False
    if profile.family != first.family:
        return False
    if profile.family == "onnx":
        return int(profile.opset) >= int(first.opset)
    return profile.level >= first.level
