"""The validator: every violated rule of a descriptor, each with id, message and source.

It runs from the exported spec document alone (export.export()), the same data another
language's validator reads.
"""
from __future__ import annotations

from dataclasses import dataclass

from topkspec.spec.case import Case
from topkspec.spec.checks import CHECK_KINDS
from topkspec.spec.descriptors import descriptor, normalise


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    source: str

    def to_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "source": self.source}


class Validator:
    def __init__(self, exported: dict):
        self.rules = exported["rules"]
        self.tables = exported["tables"]
        self._plans: dict = {}  # (family, op, strict_doc) -> the checks that apply, in order

    def _plan(self, family: str, op: str, strict_doc: bool) -> list:
        """[(rule id, requires, check function, params, source)] for one kind of descriptor,
        worked out once: a validator that other tools call per descriptor must be cheap."""
        key = (family, op, strict_doc)
        if key not in self._plans:
            self._plans[key] = [
                (rule["id"], tuple(rule["requires"]), CHECK_KINDS[rule["check"]["kind"]][1],
                 {k: v for k, v in rule["check"].items() if k != "kind"}, rule["source"])
                for rule in self.rules
                if rule["scope"] == family and op in rule["ops"] and rule["check"] is not None
                and not (rule["strict_only"] and not strict_doc) and not (rule["lenient_only"] and strict_doc)]
        return self._plans[key]

    def validate(self, desc, profile=None, *, strict_doc: bool = False) -> list[Finding]:
        """Every rule the descriptor (a JSON dict or a Case) breaks. Raises DescriptorError or
        ProfileError (both ValueError) for input that is no TopK descriptor at all."""
        if isinstance(desc, Case):
            profile = profile or desc.profile
            desc = descriptor(desc)
        view, prof = normalise(desc, profile)
        op = view["Type"] if prof.family == "dml" else "TopK"
        ctx = {"family": prof.family, "level": prof.level, "opset": prof.opset,
               "level_name": prof.level_name if prof.family == "dml" else None}
        not_held: set = set()  # rules broken or skipped: the rules that require them are skipped
        findings = []
        for rule_id, requires, check, params, source in self._plan(prof.family, op, strict_doc):
            if requires and not_held.intersection(requires):
                not_held.add(rule_id)
                continue
            messages = check(view, params, self.tables, ctx)
            if messages:
                not_held.add(rule_id)
                findings.append(Finding(rule_id, "; ".join(messages), source))
        return findings


_default: Validator | None = None


def default_validator() -> Validator:
    global _default
    if _default is None:
        from topkspec.spec.export import export

        _default = Validator(export())
    return _default


def validate(desc, profile=None, *, strict_doc: bool = False) -> list[Finding]:
    """Every rule `desc` breaks under `profile` (default: the descriptor's own level/opset)."""
    return default_validator().validate(desc, profile, strict_doc=strict_doc)


def is_valid(desc, profile=None, *, strict_doc: bool = False) -> bool:
    return not validate(desc, profile, strict_doc=strict_doc)
