"""What a property is: one object holding its check, the rules it enforces, when it applies,
the words of a report's title and, for a relation between calls, how a report replays it.

A new property is one `Property` in the module of its kind (result.py, metamorphic.py,
self_consistency.py, acceptance.py), added to that module's PROPERTIES, plus its planted-bug tests
(tests/test_properties_planted.py, and tests/test_properties_only.py for a bug it alone
catches). The engine, the verdicts and the reports read everything
else from the catalogue (catalogue.py).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from topkspec.properties.failures import Violation
from topkspec.spec.rules import Rule, rule

RESULT = "result"  # check(case, x, values, indices)
METAMORPHIC = "metamorphic"  # check(case, x, run)
ACCEPTANCE = "acceptance"  # check_accepts_valid(case, run, x=None), check_rejects_invalid(draw, run, x=None)

# When a result property applies: to every result, to sorted or unsorted requests only, or only
# to input holding NaN (with NaN only `with_nan` properties apply).
ALWAYS, SORTED, UNSORTED, NAN = "always", "sorted", "unsorted", "nan"


def rules(*ids: str) -> tuple[Rule, ...]:
    """The spec's Rule objects for `ids`: an id the spec lacks fails here, at import."""
    return tuple(rule(rule_id) for rule_id in ids)


def names_the_call(check: Callable) -> Callable:
    """`check`, its violation ending with the call it judged: its first argument, a Case (or
    an invalid draw's case). A call a check inside it named already stays: the innermost knows
    which of a relation's calls broke."""
    @functools.wraps(check)
    def checked(subject, *args, **options):
        try:
            return check(subject, *args, **options)
        except Violation as violation:
            violation.at(getattr(subject, "case", subject))
            raise
    checked.names_the_call = True
    return checked


@dataclass(frozen=True)
class Relation:
    """How a report lines up a relation between calls to the target (repro.relations says how
    repro.py replays it).

    - calls: how many of the failure's calls a report shows and repro.py makes (the pair, or
      the one repeated);
    - sides(first, second, case0, case1): (left title, left, right title, right) for the
      side-by-side table, the outputs aligned to be compared position by position.
    """

    calls: int
    sides: Callable


@dataclass(frozen=True)
class Property:
    """One property: `check` enforces `rules` (the spec's Rule objects); `kind` says how it is called (RESULT,
    METAMORPHIC, ACCEPTANCE); `with_nan`: it holds, and is checked, when the input has NaN.

    - when: for a result property, which results it applies to (ALWAYS, SORTED, UNSORTED, NAN);
    - group: the fuzz group whose examples a metamorphic property checks ("metamorphic", or
      "deterministic" for one about repeating a call: its calls are never shared);
    - words: (Rule, verb phrase) pairs for a report's title when a wrong result is filed
      under that rule ("returns values out of order"), most specific first;
    - relation: for a relation between calls, how a report shows and replays it (its name is
      the property's);
    - residual: it compares the whole result with the reference, so whatever else broke in an
      example breaks it too: it speaks only when nothing else broke;
    - judges_at(profile): whether it can judge any case at a profile (None: at every one);
    - self_consistency: it holds the target to itself where the contract leaves the answer
      open (two calls that ask the same thing get the same answer): a failure is the target
      contradicting itself, an argument that needs no document.
    """

    name: str
    check: Callable
    rules: tuple
    kind: str
    with_nan: bool
    when: str = ALWAYS
    group: str | None = None
    words: tuple = ()
    relation: Relation | None = None
    residual: bool = False
    judges_at: Callable | None = None
    self_consistency: bool = False

    def __post_init__(self):
        if not getattr(self.check, "names_the_call", False):  # every failure message ends with its call
            raise TypeError(f"{self.name}: decorate its check with @names_the_call")
        for named, _ in self.words:
            if not isinstance(named, Rule):
                raise TypeError(f"{self.name}: words name the spec's Rule objects, not {named!r}")

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rules)

    def applies(self, case, has_nan: bool) -> bool:
        """For a result property: whether it judges a result of `case` (input with NaN or not)."""
        if has_nan:
            return self.with_nan and self.when in (ALWAYS, NAN)
        return {ALWAYS: True, SORTED: case.sorted, UNSORTED: not case.sorted, NAN: False}[self.when]

    def to_dict(self) -> dict:
        return {"name": self.name, "rules": list(self.rule_ids), "kind": self.kind, "with_nan": self.with_nan}
