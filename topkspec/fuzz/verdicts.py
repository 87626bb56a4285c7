"""One verdict per rule: what a run concluded about each rule it could check.

- holds: every example that reached the rule kept it (N, counted after the check ran);
- broken: a failure filed under the rule, on a rule the documents state;
- broken by our reading only: the same, on a rule that is our interpretation of the documents
  (with --documents-only, a note, not a failure);
- known: it broke only in ways a known-deviation entry declares;
- unsupported: no example could reach it, for a reason the target gives;
- not promised: the runtime's contract leaves it open (spec.contracts), so it fails no target;
- not evaluated: no example reached it;
- not reproduced: it broke in the run only, in no fresh process (fuzz.confirm): no failure.
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
NOT_PROMISED = "not promised"
NOT_REPRODUCED = "not reproduced"
VERDICTS = (HOLDS, BROKEN, BROKEN_BY_READING, KNOWN, UNSUPPORTED, NOT_PROMISED, NOT_EVALUATED, NOT_REPRODUCED)

# The groups whose examples reach a rule, where it is not the valid group (for `unsupported`).
_RULE_GROUPS = {"out.invalid_rejected": ("invalid",), "out.valid_accepted": ("valid", "accepts"), "out.deterministic": ("deterministic",),
                "out.prefix": ("metamorphic",), "out.axis_moves": ("metamorphic",),
                "out.topk_equals_topk1": ("metamorphic",), "out.nan.unspecified": ("nan",),
                **{rule: ("self",) for rule in ("self.batch", "self.prefix", "self.axis", "self.k_input", "self.repeat")},
                **{rule: ("layout",) for rule in ("out.layout.same_answer", "out.layout.no_write_outside",
                                                  "out.layout.half_precision")}}


def is_reading(rule_id: str, profile=None, contract=None) -> bool:
    """True when the rule is our reading of the documents (at `profile`, for a runtime held to
    `contract`), not their statement."""
    from topkspec.spec.queries import rule_statement

    return rule_statement(rule_id, profile, contract).is_reading


def status_word(rule_id: str, profile=None, contract=None) -> str:
    """'documents', 'our reading' or 'adapter error': who says the rule (at `profile`, for a
    runtime held to `contract`), in a word for tables and summaries (spec.queries.rule_statement)."""
    from topkspec.spec.queries import rule_statement

    return rule_statement(rule_id, profile, contract).word


@dataclass
class RuleVerdict:
    rule: str
    kind: str  # one of VERDICTS
    count: int = 0  # examples that held it (holds), broke it (broken, known)
    detail: str = ""  # the failure class, the known entry, the reason it is unsupported
    failure: object = None  # the Failure a broken verdict reports
    profile: str | None = None  # the spec profile the run judged by
    contract: object = None  # the Contract the run held the target to

    @property
    def status(self) -> str:
        return status_word(self.rule, self.profile, self.contract)

    def text(self) -> str:
        """'holds (812)', 'broken (wrong result)', 'known (34): reason', ..."""
        count = f" ({self.count})" if self.count and self.kind in (HOLDS, KNOWN) else ""
        detail = f": {self.detail}" if self.detail and self.kind in (KNOWN, UNSUPPORTED, NOT_PROMISED,
                                                                      NOT_EVALUATED, NOT_REPRODUCED) else ""
        if self.kind in (BROKEN, BROKEN_BY_READING) and self.detail:
            detail = f" ({self.detail})"
        return f"{self.kind}{count}{detail}"


def _failure_rules(failure) -> set:
    """The rules a failure breaks for the verdicts: the rule it is filed under and those its
    report names as also broken; for an accepted invalid descriptor, the rule it breaks and the
    acceptance rule (out.invalid_rejected)."""
    if failure.failure_class == failures.ACCEPTS_INVALID:
        return {failure.rule, failure.violation.rules[0]}
    return {failure.rule, *failure.violation.also}


# The rules a validator (a target that computes nothing) is judged by.
_VALIDATOR_RULES = ("out.valid_accepted", "out.invalid_rejected")


def rules_to_show(result) -> list:
    """The output rules (for a validator, the two acceptance rules), then every other rule the
    run could break (the descriptor rules its invalid group drew), held or saw broken, in the
    spec's order."""
    from topkspec import spec

    seen = set(result.broken_seen) | {r for f in result.failures for r in _failure_rules(f)}
    seen |= set(getattr(result, "descriptor_rules", ())) | {r for r, n in result.held.items() if n}
    judged = (lambda rule: rule.scope == "output") if result.computes else (lambda rule: rule.id in _VALIDATOR_RULES)
    ids = [r.id for r in spec.RULE_LIST if judged(r) or r.id in seen]
    return ids + sorted(seen - set(ids))


def _unsupported_reason(result, rule: str) -> str:
    """Why no example could reach the rule, or '' when examples could have."""
    from topkspec.properties.catalogue import CATALOGUE

    for prop in CATALOGUE:  # a relation that has nothing to compare at the profile (two operators)
        if rule == prop.rule_ids[0] and prop.judges_at is not None and not prop.judges_at(result.profile):
            return f"its property ({prop.name}) judges no case at {result.profile}"
    groups = _RULE_GROUPS.get(rule, ("valid",))
    planned = [g for g in groups if g in result.budgets]
    if not planned:
        if rule == "out.invalid_rejected":
            contract = getattr(result, "contract", None)
            if contract is not None and contract.implements == "own":
                return f"{contract.name}'s contract promises to refuse nothing a call can carry"
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
    verdict.contract = getattr(result, "contract", None)
    return verdict


def _not_promised(result, rule: str) -> str:
    """Why the run's contract leaves `rule` open ('' when it promises it)."""
    from topkspec.spec.contracts import QUESTIONS, unpromised_rules

    contract = getattr(result, "contract", None)
    promise = unpromised_rules(contract).get(rule) if contract is not None else None
    if promise is None:
        return ""
    said = f"{contract.name} promises {QUESTIONS[promise.point]}: {promise.value.replace('_', ' ')}"
    if promise.value in ("empty", "clamped", "wrapped"):  # an answer instead of a refusal
        return f"{said}, an answer instead of a refusal, which no check holds it to yet"
    return said


def _verdict_of(result, rule: str) -> RuleVerdict:
    why_open = _not_promised(result, rule)
    if why_open and not result.broken_seen[rule]:
        return RuleVerdict(rule, NOT_PROMISED, 0, why_open)
    kept = [f for f in result.failures if rule in _failure_rules(f)]
    if kept:
        kind = BROKEN_BY_READING if is_reading(rule, result.profile, getattr(result, "contract", None)) else BROKEN
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
    unreproduced = [f for f, _ in getattr(result, "unreproduced", ()) if rule in _failure_rules(f)]
    if unreproduced:  # its failure reproduced in no fresh process: not filed
        return RuleVerdict(rule, NOT_REPRODUCED, result.broken_seen[rule],
                           "broke in the run's worker only, in no fresh process; not filed (see below)")
    if result.broken_seen[rule]:  # broke only alongside a failure another rule reported first
        kind = BROKEN_BY_READING if is_reading(rule, result.profile, getattr(result, "contract", None)) else BROKEN
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
