"""Each finding carries its rule's status at the descriptor's version, and the citations for
that version: an interpretation that a later text states is documented from there on
(`documented_from`, which the export explains)."""
import json

import pytest

from topkspec import spec
from spec_breakers import onnx_base


def _finding(desc, rule):
    return next(f for f in spec.validate(desc) if f.rule == rule)


@pytest.mark.parametrize("opset, status", [(1, "interpretation"), (10, "documented"), (11, "documented"),
                                           (24, "documented")])
def test_k_positive_is_documented_from_topk_10(opset, status):
    desc = onnx_base(opset)
    desc["k"] = 0
    if opset == 1:
        desc["attributes"]["k"] = 0
    found = _finding(desc, "onnx.k.positive")
    assert found.status == status, f"opset {opset}: expected {status}, got {found.status}"
    versions = [c.get("versions") for c in found.citations]
    assert all(str(spec.parse_profile(f"onnx:{opset}").opset) in v for v in versions), versions
    assert found.to_dict()["status"] == status and found.to_dict()["citations"] == [dict(c) for c in found.citations]


@pytest.mark.parametrize("opset, status", [(10, "interpretation"), (11, "documented"), (13, "documented")])
def test_axis_range_is_documented_from_topk_11(opset, status):
    desc = onnx_base(opset)
    desc["attributes"]["axis"] = 5
    assert _finding(desc, "onnx.axis.range").status == status


def test_a_rule_without_documented_from_keeps_its_status_and_a_malformed_version_has_none():
    desc = onnx_base(11)
    desc["k"] = 9
    assert _finding(desc, "onnx.k.max").status == "interpretation"
    desc["opset"] = "11"
    assert _finding(desc, "onnx.desc.fields").status == "documented"


def test_the_export_explains_documented_from_and_the_status_follows_the_exported_data():
    exported = json.loads(json.dumps(spec.export()))
    assert "documented_from" in exported["documented_from"] and "status" in exported["documented_from"]
    desc = onnx_base(11)
    desc["k"] = 0
    for rule in exported["rules"]:
        if rule["id"] == "onnx.k.positive":
            rule["documented_from"] = ["onnx:24"]  # an edited export: the validator follows it
    found = next(f for f in spec.Validator(exported).validate(desc) if f.rule == "onnx.k.positive")
    assert found.status == "interpretation", found
