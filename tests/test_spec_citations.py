"""Rule sources: public documents by title and address, the deciding sentence quoted, and
nothing a user cannot open (no working-copy file names, no design notes)."""
import json
import re

import pytest

from topkspec import spec
from topkspec.spec.citations import applicable, section_title
from topkspec.spec.tables import DOCUMENTS

PRIVATE = re.compile(r"\d{3}_[0-9a-f]{16}\.txt|DESIGN\.md|seed", re.IGNORECASE)


def test_the_export_names_no_private_file():
    text = json.dumps(spec.export())
    found = sorted(set(PRIVATE.findall(text)))
    assert not found, f"the export names files users cannot open: {found}"


@pytest.mark.parametrize("rule", spec.RULE_LIST, ids=lambda r: r.id)
def test_every_source_quotes_a_sentence_of_a_known_document(rule):
    assert rule.sources, f"{rule.id}: no sources"
    for cited in rule.sources:
        assert cited["doc"] in DOCUMENTS, f"{rule.id}: unknown document {cited['doc']!r}"
        assert cited["section"] and len(cited["quote"]) > 10, f"{rule.id}: section and quote needed, got {cited}"
    assert not PRIVATE.search(rule.source), f"{rule.id}: source line {rule.source!r}"


@pytest.mark.parametrize("rule", spec.RULE_LIST, ids=lambda r: r.id)
def test_every_rule_cites_each_family_it_applies_to(rule):
    families = {"dml": ["dml"], "dml_call": ["dml"], "onnx": ["onnx"], "lowering": ["dml", "onnx"]}.get(rule.scope, ["dml", "onnx"])
    if rule.id == "out.topk_equals_topk1":
        families = ["dml"]  # a DirectML relation between its two operators
    if rule.id == "out.unsorted.set":
        families = ["onnx"]  # only ONNX has sorted=0
    if rule.id == "self.k_input":
        families = ["onnx"]  # only an ONNX model takes K two ways: an initializer or an input
    for family in families:
        assert applicable(rule.sources, family), f"{rule.id}: no {family} source among {rule.source}"


def _schema_text(version: str) -> str:
    import onnx

    schema = onnx.defs.get_schema("TopK", int(version))
    parts = [schema.doc]
    parts += [p.description for p in list(schema.inputs) + list(schema.outputs)]
    parts += [a.description for a in schema.attributes.values()]
    parts += [t.description for t in schema.type_constraints]
    return " ".join(" ".join(parts).split())


def _onnx_citations():
    seen = {}
    for rule in spec.RULE_LIST:
        for cited in rule.sources:
            if cited["doc"] == "onnx-topk":
                seen[(cited["section"], cited["quote"])] = cited
    return list(seen.values())


@pytest.mark.parametrize("cited", _onnx_citations(), ids=lambda c: c["section"] + ":" + c["quote"][:30])
def test_onnx_quotes_are_the_schema_text_of_each_version_they_name(cited):
    import onnx

    assert cited.get("versions"), f"ONNX citation without versions: {cited}"
    for version in cited["versions"]:
        text = _schema_text(version)
        quote = cited["quote"]
        if cited["section"] == "Attributes":  # the attribute list: each "name - TYPE" is in the schema
            names = sorted(re.findall(r"(\w+) - INT", quote))
            have = sorted(onnx.defs.get_schema("TopK", int(version)).attributes)
            assert names == have, f"TopK-{version} attributes: quote names {names}, schema has {have}"
            continue
        if quote.startswith(("T in", "I in")):  # a type constraint: the listed types and the sentence
            param, listed, sentence = re.fullmatch(r"(\w) in \((.*)\): (.*)", quote).groups()
            constraint = next(t for t in onnx.defs.get_schema("TopK", int(version)).type_constraints
                              if t.type_param_str == param)
            assert sorted(listed.split(", ")) == sorted(constraint.allowed_type_strs), \
                f"TopK-{version} {param}: quote lists {listed}, schema allows {constraint.allowed_type_strs}"
            quote = sentence
        assert " ".join(quote.split()) in text, f"TopK-{version}: {quote!r} is not in the schema text"


def test_a_report_on_one_family_quotes_only_that_family():
    rule = spec.RULES["out.ties.index_order"]
    dml = rule.sources_for("dml", "TOP_K1")
    onnx_24 = rule.sources_for("onnx", "TopK", "24")
    assert {DOCUMENTS[c["doc"]]["family"] for c in dml} == {"dml"}, f"dml sources: {dml}"
    assert [c["doc"] for c in dml] == ["dml-top-k1"], f"TOP_K1 cases quote the TOP_K1 page, got {dml}"
    assert [c["doc"] for c in onnx_24] == ["onnx-topk"], f"onnx sources: {onnx_24}"


def test_onnx_sections_are_named_by_the_profiles_version():
    cited = spec.RULES["onnx.k.positive"].sources_for("onnx", "TopK", "24")
    assert [section_title(c, "24") for c in cited] == ["TopK - 24, Inputs: K"], f"sections: {cited}"
    at_1 = spec.RULES["onnx.k.positive"].sources_for("onnx", "TopK", "1")
    assert [c["section"] for c in at_1] == ["Attributes: k"], f"TopK-1 has k as an attribute: {at_1}"
