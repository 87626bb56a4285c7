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


def one_line(rule_id: str, case) -> str:
    """'"<quote>" (<title>, <section>)' for the first citation, else the rule's statement."""
    from topkspec import spec

    found = citations(rule_id, case)
    if not found:
        rule = spec.RULES.get(rule_id)
        return rule.statement if rule else rule_id
    first = found[0]
    return f'"{first["quote"]}" ({first["title"]}, {first["section"]})'
