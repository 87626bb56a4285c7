"""Invalid descriptors: each draw starts from a valid case and breaks one named rule.

`BREAKERS` maps every descriptor rule with a check to a function (profile) -> strategy of
InvalidDraw, or None where the profile gives no way to break it; the breakers register
themselves by rule id (dml.py, onnx.py; see registry.py). A draw's `rules` are exactly the
rules `spec.validate` reports for it: the rule it breaks plus any rule that cannot help
breaking with it (see the rule's `co_broken`).

Imports the spec and the valid-case strategies it starts from (strategies.cases, arguments).
"""
from __future__ import annotations

from hypothesis import strategies as st

from topkspec import spec
from topkspec.spec import dtypes
from topkspec.strategies import arguments
from topkspec.strategies.invalid import dml as _dml, onnx as _onnx  # noqa: F401 (they register)
from topkspec.strategies.invalid.registry import BREAKERS, IMPOSSIBLE_RULES, InvalidDraw

# Rules whose breakers can carry a Case, so a call can show whether a runtime refuses them;
# the rest (a malformed member, an attribute at the wrong opset) only `validate` judges.
CASE_RULES = IMPOSSIBLE_RULES | frozenset({
    "dml.k.max_strict", "dml.rank.supported", "dml.dtype.value_supported", "dml.dtype.index_supported",
    "onnx.dtype.T"})


def carries_cases(profile, rule: str) -> bool:
    """Whether draws breaking `rule` at `profile` can carry a Case, so that a call can show
    the refusal. onnx.dtype.T carries one only where some value type lies outside T."""
    if rule not in CASE_RULES:
        return False
    if rule == "onnx.dtype.T":
        allowed = spec.value_types(profile, "TopK")
        return any(t not in allowed for t in dtypes.ALL_VALUE_TYPES)
    return True


def breakable_rules(profile, *, strict_doc=None) -> list[str]:
    """The ids of the descriptor rules that `invalid_descriptors(profile, rule)` can break.

    - profile: the spec profile, such as "dml:5.0" or "onnx:24".
    - strict_doc: True or False for the rules in force under that setting; default None, all.

    Gives a list of rule ids in the spec's order. Checks its arguments at once
    (InvalidStrategyArgument).

    >>> "onnx.k.positive" in breakable_rules("onnx:24")
    True
    >>> breakable_rules("dml:5.0", strict_doc="yes")
    Traceback (most recent call last):
    ...
    topkspec.strategies.arguments.InvalidStrategyArgument: strict_doc='yes' must be True, False or None
    """
    prof = arguments.check_profile(profile)
    arguments.check_optional_bool("strict_doc", strict_doc)
    out = []
    for rule in spec.RULE_LIST:
        if rule.check is None or rule.scope != prof.family:
            continue
        if strict_doc is True and rule.lenient_only or strict_doc is False and rule.strict_only:
            continue
        if not any(op in rule.ops for op in spec.ops(prof)) and rule.id != "dml.operator.available":
            continue
        if BREAKERS[rule.id](prof.name) is not None:
            out.append(rule.id)
    return out


def invalid_descriptors(profile, rule=None) -> st.SearchStrategy[InvalidDraw]:
    """Descriptors that each break one rule of a profile, with the ids of the rules they break.

    - profile: the spec profile, such as "dml:5.0" or "onnx:24".
    - rule: the id of the rule to break, one of `breakable_rules(profile)`; default None, every
      breakable rule, each about as often.

    Draws `InvalidDraw` values: `.descriptor`, `.rules` (exactly what `spec.validate` reports
    for it), `.profile` and `.case` where the breakage is a Case. Arguments are checked when
    the strategy is first used (InvalidStrategyArgument), a rule too: one that is unknown, has
    no check, or cannot be broken at the profile (dml.direction.enum where TOP_K1 does not exist).

    >>> draw = invalid_descriptors("onnx:24", "onnx.k.positive").example()
    >>> sorted(draw.rules), draw.profile
    (['onnx.k.positive'], 'onnx:24')
    >>> invalid_descriptors("dml:2.0", "dml.direction.enum").validate()
    Traceback (most recent call last):
    ...
    topkspec.strategies.arguments.InvalidStrategyArgument: rule='dml.direction.enum' cannot be broken at dml:2.0
    """
    def checked():
        prof = arguments.check_profile(profile)
        if rule is None:  # the rule first, so every rule is drawn about as often
            return st.one_of([BREAKERS[r](prof.name) for r in sorted(breakable_rules(prof))])
        if not isinstance(rule, str) or rule not in spec.RULES:
            arguments.fail("rule", rule, "is not a rule id of the spec (unknown rule)")
        if rule not in BREAKERS:
            arguments.fail("rule", rule, "has no descriptor check, so no descriptor breaks it")
        if rule not in breakable_rules(prof):
            arguments.fail("rule", rule, f"cannot be broken at {prof.name}")
        return BREAKERS[rule](prof.name)
    return st.deferred(checked)


__all__ = ["BREAKERS", "CASE_RULES", "IMPOSSIBLE_RULES", "InvalidDraw", "breakable_rules", "carries_cases",
           "invalid_descriptors"]
