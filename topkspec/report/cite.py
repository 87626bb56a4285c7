"""The rule text a report quotes: the citations of the report's own spec family, with the
document's title, address and the section as a reader finds it."""
from __future__ import annotations

from topkspec.spec.profiles import parse_profile


def topk_version(case) -> str | None:
    """The ONNX TopK version a case is judged by ("24"); None for DirectML."""
    profile = parse_profile(case.profile)
    return profile.opset if profile.family == "onnx" else None


def citations(rule_id: str, case) -> list[dict]:
    """[{quote, title, url, section, note}] for `rule_id` as the case's profile reads it."""
    from topkspec import spec
    from topkspec.spec.citations import section_title
    from topkspec.spec.tables import DOCUMENTS

    rule = spec.RULES.get(rule_id)
    if rule is None:
        return []
    version = topk_version(case)
    out = []
    for cited in rule.sources_for(case.family, case.op, version):
        doc = DOCUMENTS[cited["doc"]]
        out.append({"quote": cited["quote"], "title": doc["title"], "url": doc["url"],
                    "section": section_title(cited, version), "note": cited.get("note", "")})
    return out


def contract_citations(rule_id: str, case, contract=None) -> list[dict]:
    """The citations a report quotes for `rule_id` when the runtime is held to `contract`: the
    contract's own promise where it speaks for the rule (a framework's documentation, or a
    point changed from ONNX's or DirectML's text), else the spec's (citations)."""
    from topkspec.spec.contracts import QUESTIONS, speaks_for

    promise = speaks_for(contract, rule_id)
    if promise is None:
        return citations(rule_id, case)
    section = f"{QUESTIONS[promise.point]}: {promise.value.replace('_', ' ')}"
    note = promise.reason if promise.status != "documented" else ""
    return [{"quote": promise.quote or "(declared without a quoted sentence)", "title": promise.title,
             "url": promise.url, "section": section, "note": note}]


def one_line(rule_id: str, case, contract=None) -> str:
    """'"<quote>" (<title>, <section>)' for the first citation (contract_citations), else the
    rule's statement."""
    from topkspec import spec

    found = contract_citations(rule_id, case, contract)
    if not found:
        rule = spec.RULES.get(rule_id)
        return rule.statement if rule else rule_id
    first = found[0]
    return f'"{first["quote"]}" ({first["title"]}, {first["section"]})'
