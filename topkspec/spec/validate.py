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
    """One violated rule: its id, the messages joined by '; ', its sources in one line, its
    status at the descriptor's version (documented, interpretation, unspecified: an
    interpretation is documented at and after the versions its rule's documented_from names),
    and the citations for that version (the rule's sources of the descriptor's family,
    operator and TopK version). Immutable, compared and hashed by its fields."""

    __slots__ = ("rule", "message", "source", "status", "citations")
    __match_args__ = ("rule", "message", "source", "status", "citations")

    def __init__(self, rule: str, message: str, source: str, status: str | None = None, citations=()):
        object.__setattr__(self, "rule", rule)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "citations", tuple(citations))

    def __setattr__(self, name, value):
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return ((self.rule, self.message, self.source, self.status, self.citations)
                    == (other.rule, other.message, other.source, other.status, other.citations))
        return NotImplemented

    def __hash__(self):
        return hash((self.rule, self.message, self.source, self.status))

    def __repr__(self):
        return f"Finding(rule={self.rule!r}, message={self.message!r}, source={self.source!r}, status={self.status!r})"

    def __reduce__(self):
        return (Finding, (self.rule, self.message, self.source, self.status, self.citations))

    def to_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "source": self.source, "status": self.status,
                "citations": [dict(c) for c in self.citations]}


class Verdict:
    """What judging one descriptor found: `findings` (the broken rules, as validate returns
    them), `not_checked` ([{"rule", "reason"}]: rules that need a value the descriptor leaves
    unknown, or that require such a rule) and `profile` (the version judged by, "onnx:11", or
    None when the descriptor names none it can be judged by)."""

    __slots__ = ("findings", "not_checked", "profile")

    def __init__(self, findings: list, not_checked: list, profile):
        self.findings, self.not_checked, self.profile = findings, not_checked, profile

    @property
    def valid(self) -> bool:
        return not self.findings

    def __repr__(self):
        return f"Verdict(findings={self.findings!r}, not_checked={self.not_checked!r}, profile={self.profile!r})"


def _version_key(profile: str, family: str):
    """The number a documented_from profile ("onnx:10", "dml:1.0") compares by, or None."""
    name, _, version = profile.partition(":")
    if name != family:
        return None
    if family == "onnx":
        return int(version)
    major, _, minor = version.partition(".")
    return (int(major) << 12) | (int(minor or 0) << 8)


def status_at(rule: dict, family: str, version) -> str:
    """The rule's status at a version (DirectML level value, ONNX TopK version as an int; None:
    unknown): an interpretation whose documented_from names a profile of the family at or below
    the version is documented there."""
    if rule["status"] == "interpretation" and version is not None:
        for profile in rule.get("documented_from", ()):
            since = _version_key(profile, family)
            if since is not None and since <= version:
                return "documented"
    return rule["status"]


def citations_at(rule: dict, documents: dict, family: str, op: str, version) -> list:
    """The rule's sources of the family, narrowed to the operator and the TopK version where any
    match them (as citations.applicable does)."""
    mine = [s for s in rule["sources"] if documents.get(s["doc"], {}).get("family") == family]
    mine = [s for s in mine if op in documents[s["doc"]].get("ops", ())] or mine
    if version is not None and family == "onnx":
        mine = [s for s in mine if str(version) in s.get("versions", [str(version)])] or mine
    return mine


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
        from topkspec.spec.checks import CHECK_KINDS, Unknown
        from topkspec.spec.descriptors import normalise

        self.rules = exported["rules"]
        self.tables = exported["tables"]
        self.documents = exported.get("documents", {})
        self._kinds, self._normalise, self._unknown = CHECK_KINDS, normalise, Unknown
        # (family, op, level or TopK version, strict_doc) -> (the checks that apply in order, ctx)
        self._plans: dict = {}
        # (Case, profile, strict_doc) -> its findings: a run asks about the same case again and
        # again (each relation's calls, each repeat, Hypothesis's mutations of an example)
        self._by_case: dict = {}

    def _plan(self, prof, family: str, op: str, strict_doc: bool):
        """[(rule id, requires, check function, params, source, status, citations)] and the ctx
        for one kind of descriptor, worked out once: a validator that other tools call per
        descriptor must be cheap. `prof` None: the descriptor names no version (only the rules
        that need none can be checked: every other rule requires *.desc.fields)."""
        if family == "dml":
            version = prof.level if prof is not None else None
            ctx = plan_context(self.tables, family, op, level=version,
                               level_name=prof.level_name if prof is not None else None)
        else:
            ctx = plan_context(self.tables, family, op, opset=prof.opset if prof is not None else None)
            version = int(prof.opset) if prof is not None else None
        checks = [
            (rule["id"], frozenset(rule["requires"]), self._kinds[rule["check"]["kind"]][1],
             {k: v for k, v in rule["check"].items() if k != "kind"}, rule["source"],
             status_at(rule, family, version), tuple(citations_at(rule, self.documents, family, op, version)))
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
        return self._judge(desc, profile, strict_doc)[0]

    def judge(self, desc, profile=None, *, strict_doc: bool = False) -> Verdict:
        """The Verdict on a descriptor: its findings, the rules not checked for a value it leaves
        unknown (null), and the profile it was judged by."""
        case = sys.modules.get("topkspec.spec.case")
        if type(desc) is not dict and case is not None and isinstance(desc, case.Case):
            from topkspec.spec.descriptors import descriptor

            profile = profile or desc.profile
            desc = descriptor(desc)
        findings, not_checked, prof = self._judge(desc, profile, strict_doc)
        return Verdict(findings, not_checked, prof.name if prof is not None else None)

    def _validate_case(self, case, profile, strict_doc: bool) -> list[Finding]:
        from topkspec.spec.descriptors import descriptor

        return self._judge(descriptor(case), profile or case.profile, strict_doc)[0]

    def _judge(self, desc, profile, strict_doc: bool):
        view, prof = self._normalise(desc, profile)
        if "Type" in view:
            family = "dml"
            key = (view["Type"], prof.level if prof is not None else None, strict_doc)
        else:
            family = "onnx"
            key = ("TopK", prof.opset if prof is not None else None, strict_doc)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(prof, family, key[0], strict_doc)
        checks, ctx = plan
        tables = self.tables
        not_held = None  # rules broken or skipped: the rules that require them are skipped
        unknown = None  # rules not checked: the rules that require them are not checked either
        findings, not_checked = [], []
        for rule_id, requires, check, params, source, status, citations in checks:
            if not_held and requires and not not_held.isdisjoint(requires):
                not_held.add(rule_id)
                continue
            if unknown and requires and not unknown.isdisjoint(requires):
                unknown.add(rule_id)
                first = next(r for r in unknown if r in requires)
                not_checked.append({"rule": rule_id, "reason": f"it requires {first}, which is not checked"})
                continue
            try:
                messages = check(view, params, tables, ctx)
            except self._unknown as exc:
                if unknown is None:
                    unknown = set()
                unknown.add(rule_id)
                not_checked.append({"rule": rule_id, "reason": str(exc)})
                continue
            if messages:
                if not_held is None:
                    not_held = set()
                not_held.add(rule_id)
                findings.append(Finding(rule_id, "; ".join(messages), source, status, citations))
        return findings, not_checked, prof


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


def judge(desc, profile=None, *, strict_doc: bool = False) -> Verdict:
    """The Verdict on `desc`: its findings, the rules not checked (a null value) and the profile."""
    return (_default or default_validator()).judge(desc, profile, strict_doc=strict_doc)


def is_valid(desc, profile=None, *, strict_doc: bool = False) -> bool:
    return not validate(desc, profile, strict_doc=strict_doc)
