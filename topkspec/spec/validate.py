"""The validator: every violated rule of a descriptor, each with id, message and source.

It runs from the exported spec document alone (export.export()), the same data another
language's validator reads.

Other validators call it per descriptor, so it is kept cheap: the rules that apply to one kind
of descriptor (family, operator, feature level or TopK version, strict_doc) are worked out
once into a plan with their check functions, parameters and context (plan_context), and a
call runs that plan. A Validator reads its document when it makes a plan: change the document,
make a new Validator. Importing this module loads nothing else; the checks, the normaliser and
the export load with the first Validator.
"""
from __future__ import annotations

import sys


class Finding:
    """One violated rule: its id, the messages joined by '; ', and its sources in one line.
    Immutable, compared and hashed by its fields (as a frozen dataclass would be)."""

    __slots__ = ("rule", "message", "source")
    __match_args__ = ("rule", "message", "source")

    def __init__(self, rule: str, message: str, source: str):
        object.__setattr__(self, "rule", rule)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "source", source)

    def __setattr__(self, name, value):
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.rule, self.message, self.source) == (other.rule, other.message, other.source)
        return NotImplemented

    def __hash__(self):
        return hash((self.rule, self.message, self.source))

    def __repr__(self):
        return f"Finding(rule={self.rule!r}, message={self.message!r}, source={self.source!r})"

    def __reduce__(self):
        return (Finding, (self.rule, self.message, self.source))

    def to_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "source": self.source}


def plan_context(tables, family, op, level=None, level_name=None, opset=None) -> dict:
    """The ctx the checks of one kind of descriptor read: family, level, opset, level_name, and for
    DirectML what they would otherwise look up per descriptor: the support row, the member sets
    and the DataType names (each left out where the tables do not give it: the checks then read
    the tables themselves, and fail as they would)."""
    from topkspec.spec.checks import support_row
    from topkspec.spec.descriptors import PLAIN_TENSOR_FIELDS

    ctx = {"family": family, "level": level, "opset": opset, "level_name": level_name}
    for key, make in (("row", lambda: support_row(tables, op, level)),
                      ("desc_fields", lambda: frozenset(tables["dml_desc_fields"][op])),
                      ("plain_tensor", lambda: type(tables["dml_tensor_fields"]["optional"]) is list
                       and type(tables["dml_tensor_fields"]["required"]) is list
                       and set(tables["dml_tensor_fields"]["required"]) == PLAIN_TENSOR_FIELDS),
                      ("data_types", lambda: frozenset(t for t in tables["dml_data_types"] if type(t) is str))
                      ) if family == "dml" else ():
        try:
            ctx[key] = make()
        except (KeyError, TypeError, ValueError):
            pass
    return ctx


class Validator:
    def __init__(self, exported: dict):
        from topkspec.spec.checks import CHECK_KINDS
        from topkspec.spec.descriptors import normalise

        self.rules = exported["rules"]
        self.tables = exported["tables"]
        self._kinds, self._normalise = CHECK_KINDS, normalise
        # (family, op, level or TopK version, strict_doc) -> (the checks that apply in order, ctx)
        self._plans: dict = {}
        # (Case, profile, strict_doc) -> its findings: a run asks about the same case again and
        # again (each relation's calls, each repeat, Hypothesis's mutations of an example)
        self._by_case: dict = {}

    def _plan(self, prof, op: str, strict_doc: bool):
        """[(rule id, requires, check function, params, source)] and the ctx for one kind of
        descriptor, worked out once: a validator that other tools call per descriptor must be cheap."""
        family = prof.family
        if family == "dml":
            ctx = plan_context(self.tables, family, op, level=prof.level, level_name=prof.level_name)
        else:
            ctx = plan_context(self.tables, family, op, opset=prof.opset)
        checks = [
            (rule["id"], frozenset(rule["requires"]), self._kinds[rule["check"]["kind"]][1],
             {k: v for k, v in rule["check"].items() if k != "kind"}, rule["source"])
            for rule in self.rules
            if rule["scope"] == family and op in rule["ops"] and rule["check"] is not None
            and not (rule["strict_only"] and not strict_doc) and not (rule["lenient_only"] and strict_doc)]
        return checks, ctx

    def validate(self, desc, profile=None, *, strict_doc: bool = False) -> list[Finding]:
        """Every rule the descriptor (a JSON dict or a Case) breaks. Raises DescriptorError or
        ProfileError (both ValueError) for input that is no TopK descriptor at all."""
        if type(desc) is not dict:
            case = sys.modules.get("topkspec.spec.case")  # no Case made before it is loaded
            if case is not None and isinstance(desc, case.Case):
                key = (desc, profile, strict_doc)
                try:
                    hash(key)
                except TypeError:  # a hand-made Case with a list in it, say
                    return self._validate_case(desc, profile, strict_doc)
                if key not in self._by_case:
                    if len(self._by_case) >= _CASES_KEPT:
                        self._by_case.clear()
                    self._by_case[key] = tuple(self._validate_case(desc, profile, strict_doc))
                return list(self._by_case[key])
        return self._validate(desc, profile, strict_doc)

    def _validate_case(self, case, profile, strict_doc: bool) -> list[Finding]:
        from topkspec.spec.descriptors import descriptor

        return self._validate(descriptor(case), profile or case.profile, strict_doc)

    def _validate(self, desc, profile, strict_doc: bool) -> list[Finding]:
        view, prof = self._normalise(desc, profile)
        if prof.family == "dml":
            key = (view["Type"], prof.level, strict_doc)
        else:
            key = ("TopK", prof.opset, strict_doc)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(prof, key[0], strict_doc)
        checks, ctx = plan
        tables = self.tables
        not_held = None  # rules broken or skipped: the rules that require them are skipped
        findings = []
        for rule_id, requires, check, params, source in checks:
            if not_held and requires and not not_held.isdisjoint(requires):
                not_held.add(rule_id)
                continue
            messages = check(view, params, tables, ctx)
            if messages:
                if not_held is None:
                    not_held = set()
                not_held.add(rule_id)
                findings.append(Finding(rule_id, "; ".join(messages), source))
        return findings


_default: Validator | None = None
# How many cases a validator remembers the findings of (Findings are immutable).
_CASES_KEPT = 4096


def default_validator() -> Validator:
    global _default
    if _default is None:
        from topkspec.spec.export import export

        _default = Validator(export())
    return _default


def validate(desc, profile=None, *, strict_doc: bool = False) -> list[Finding]:
    """Every rule `desc` breaks under `profile` (default: the descriptor's own level/opset)."""
    return (_default or default_validator()).validate(desc, profile, strict_doc=strict_doc)


def is_valid(desc, profile=None, *, strict_doc: bool = False) -> bool:
    return not validate(desc, profile, strict_doc=strict_doc)
