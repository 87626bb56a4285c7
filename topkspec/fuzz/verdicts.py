"""One verdict per rule: what a run concluded about each rule it could check.

- holds: every example that reached the rule kept it (N, counted after the check ran);
- broken: a failure filed under the rule, on a rule the documents state;
- broken by our reading only: the same, on a rule that is our interpretation of the documents
  (with --documents-only, a note, not a failure);
- known: it broke only in ways a known-deviation entry declares;
- unsupported: no example could reach it, for a reason the target gives;
- not evaluated: no example reached it.
"""
from __future__ import annotations

from dataclasses import dataclass

from topkspec.properties import failures

HOLDS = "holds"
BROKEN = "broken"
BROKEN_BY_READING = "broken by our reading only"
KNOWN = "known"
UNSUPPORTED = "unsupported"
NOT_EVALUATED = "not evaluated"
VERDICTS = (HOLDS, BROKEN, BROKEN_BY_READING, KNOWN, UNSUPPORTED, NOT_EVALUATED)

# The groups whose examples reach a rule, where it is not the valid group (for `unsupported`).
_RULE_GROUPS = {"out.invalid_rejected": ("invalid",), "out.valid_accepted": ("valid", "accepts"), "out.deterministic": ("deterministic",),
                "out.prefix": ("metamorphic",), "out.axis_moves": ("metamorphic",),
                "out.topk_equals_topk1": ("metamorphic",), "out.nan.unspecified": ("nan",)}


def is_reading(rule_id: str, profile=None) -> bool:
    """True when the rule is our reading of the documents (at `profile`), not their statement."""
    from topkspec.spec.queries import stated_by

    return stated_by(rule_id, profile).is_reading


def status_word(rule_id: str, profile=None) -> str:
    """'documents', 'our reading' or 'adapter error': who says the rule (at `profile`), in a word
    for tables and summaries (spec.queries.stated_by)."""
    from topkspec.spec.queries import stated_by

    return stated_by(rule_id, profile).word


@dataclass
class RuleVerdict:
    rule: str
    kind: str  # one of VERDICTS
    count: int = 0  # examples that held it (holds), broke it (broken, known)
    detail: str = ""  # the failure class, the known entry, the reason it is unsupported
    failure: object = None  # the Failure a broken verdict reports
    profile: str | None = None  # the spec profile the run judged by

    @property
    def status(self) -> str:
        return status_word(self.rule, self.profile)

    def text(self) -> str:
        """'holds (812)', 'broken (wrong result)', 'known (34): reason', ..."""
        count = f" ({self.count})" if self.count and self.kind in (HOLDS, KNOWN) else ""
        detail = f": {self.detail}" if self.detail and self.kind in (KNOWN, UNSUPPORTED, NOT_EVALUATED) else ""
        if self.kind in (BROKEN, BROKEN_BY_READING) and self.detail:
            detail = f" ({self.detail})"
        return f"{self.kind}{count}{detail}"


def _failure_rules(failure) -> set:
    """The rules a failure breaks for the verdicts: the rule it is filed under, and for an
    accepted invalid descriptor also the acceptance rule (out.invalid_rejected)."""
    rules = {failure.rule}
    if failure.failure_class == failures.ACCEPTS_INVALID:
        rules.add(failure.violation.rules[0])
    return rules


# The rules a validator (a target that computes nothing) is judged by.
_VALIDATOR_RULES = ("out.valid_accepted", "out.invalid_rejected")


def rules_to_show(result) -> list:
    """The output rules (for a validator, the two acceptance rules), then every other rule the
    run saw broken, in the spec's order."""
    from topkspec import spec

    seen = set(result.broken_seen) | {r for f in result.failures for r in _failure_rules(f)}
    judged = (lambda rule: rule.scope == "output") if result.computes else (lambda rule: rule.id in _VALIDATOR_RULES)
    ids = [r.id for r in spec.RULE_LIST if judged(r) or r.id in seen]
    return ids + sorted(seen - set(ids))


def _unsupported_reason(result, rule: str) -> str:
    """Why no example could reach the rule, or '' when examples could have."""
    groups = _RULE_GROUPS.get(rule, ("valid",))
    planned = [g for g in groups if g in result.budgets]
    if not planned:
        if rule == "out.invalid_rejected":
            return "the target does not refuse invalid input (it does not validate)"
        return ""
    if any(result.judged[g] for g in planned) or not result.unsupported:
        return ""
    reason, _ = result.unsupported.most_common(1)[0]
    return f"every case drawn was outside what the target supports ({reason})"


def rule_verdicts(result) -> list:
    """[RuleVerdict] for the rules the run could speak of, in the spec's order."""
    return [verdict_of(result, rule) for rule in rules_to_show(result)]


def verdict_of(result, rule: str) -> RuleVerdict:
    """The run's verdict on one rule."""
    verdict = _verdict_of(result, rule)
    verdict.profile = result.profile
    return verdict


def _verdict_of(result, rule: str) -> RuleVerdict:
    kept = [f for f in result.failures if rule in _failure_rules(f)]
    if kept:
        kind = BROKEN_BY_READING if is_reading(rule, result.profile) else BROKEN
        classes = ", ".join(sorted({f.failure_class for f in kept}))
        return RuleVerdict(rule, kind, result.broken_seen[rule], classes, kept[0])
    if rule in result.readings:  # --documents-only: our reading broken, noted only
        return RuleVerdict(rule, BROKEN_BY_READING, result.broken_seen[rule], "a note under --documents-only")
    known = [(entry, n) for (seen, entry), n in result.known_by_rule.items() if seen == rule]
    if known:
        known.sort(key=lambda item: -item[1])
        entry = known[0][0]
        detail = entry.reason or entry.describe()
        if len(known) > 1:
            detail += f" (and {len(known) - 1} more declared deviation{'s' if len(known) > 2 else ''})"
        return RuleVerdict(rule, KNOWN, sum(n for _, n in known), detail)
    if result.broken_seen[rule]:  # broke only alongside a failure another rule reported first
        kind = BROKEN_BY_READING if is_reading(rule, result.profile) else BROKEN
        return RuleVerdict(rule, kind, result.broken_seen[rule],
                           "in examples that broke a rule reported first; no report of its own")
    if result.held[rule]:
        return RuleVerdict(rule, HOLDS, result.held[rule])
    why = _unsupported_reason(result, rule)
    if why:
        return RuleVerdict(rule, UNSUPPORTED, 0, why)
    return RuleVerdict(rule, NOT_EVALUATED, 0, "no example reached it")


def verdict_lines(result, indent: str = "  ") -> list:
    """The verdicts as summary lines: rule, who says it, verdict."""
    lines = []
    for verdict in rule_verdicts(result):
        where = ""
        if verdict.failure is not None and verdict.failure.report_dir:
            where = f" -> {verdict.failure.report_dir}"
        lines.append(f"{indent}{verdict.rule:<28} {verdict.status:<11} {verdict.text()}{where}")
    return lines


def _reached(result, rule_pattern: str) -> bool:
    """Whether some example of the run reached a rule the pattern names (it held or broke)."""
    import fnmatch

    from topkspec import spec

    rules = fnmatch.filter(spec.RULES, rule_pattern)
    if any(rule.startswith(("dml.", "onnx.")) for rule in rules):  # descriptor rules: the invalid group judges them
        return result.judged["invalid"] > 0 or any(r in result.broken_seen for r in rules)
    return any(result.held[r] or result.broken_seen[r] for r in rules)


def known_lines(result, indent: str = "  ") -> list:
    """Known deviations seen (with how often), and the entries of the list never seen."""
    known = getattr(result, "known", None)
    if known is None:
        return []
    lines = [f"known deviations ({known.source}):"]
    for entry, count in sorted(result.known_seen.items(), key=lambda item: -item[1]):
        lines.append(f"{indent}seen {count:>5}  {entry.describe()}")
    unseen = sorted((entry for entry in known if entry not in result.known_seen),  # those that apply first
                    key=lambda entry: entry.outside(result.profile, result.version) is not None)
    for entry in unseen:
        outside = entry.outside(result.profile, result.version)
        if outside:
            lines.append(f"{indent}known, does not apply to this run ({outside}): {entry.describe()}")
        elif _reached(result, entry.rule):
            lines.append(f"{indent}known, not seen (fixed, or not drawn in this run): {entry.describe()}")
        else:
            lines.append(f"{indent}known, not reached (no example of this run could show it): {entry.describe()}")
    if len(lines) == 1:
        lines.append(f"{indent}none listed")
    return lines
