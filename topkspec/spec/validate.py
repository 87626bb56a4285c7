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
        state: dict[str, str] = {}  # rule id -> "held" | "broken" | "skipped"
        findings = []
        for rule in self.rules:
            if rule["scope"] != prof.family or op not in rule["ops"] or rule["check"] is None:
                continue
            if (rule["strict_only"] and not strict_doc) or (rule["lenient_only"] and strict_doc):
                continue
            if any(state.get(req, "held") != "held" for req in rule["requires"]):
                state[rule["id"]] = "skipped"
                continue
            params = {k: v for k, v in rule["check"].items() if k != "kind"}
            messages = CHECK_KINDS[rule["check"]["kind"]][1](view, params, self.tables, ctx)
            state[rule["id"]] = "broken" if messages else "held"
            if messages:
                findings.append(Finding(rule["id"], "; ".join(messages), rule["source"]))
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
