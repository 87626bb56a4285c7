"""The JSON export: it round-trips, and it alone drives the validator's verdicts."""
import copy
import json

import numpy as np
import pytest

from topkspec import reference_topk, spec
from spec_breakers import BREAKERS, dml_base


def _roundtrip():
    return json.loads(json.dumps(spec.export()))


def test_export_round_trips_through_json():
    exported = spec.export()
    assert _roundtrip() == exported
    assert exported["schema_version"] == spec.SCHEMA_VERSION


def test_export_lists_every_rule_and_check_kind():
    exported = spec.export()
    assert [r["id"] for r in exported["rules"]] == [r.id for r in spec.RULE_LIST]
    for rule in exported["rules"]:
        if rule["check"] is not None:
            assert rule["check"]["kind"] in exported["check_kinds"], rule["id"]
        assert rule["status"] in exported["statuses"]


@pytest.mark.parametrize("rule_id", sorted(BREAKERS))
def test_validator_from_export_alone_gives_the_same_verdicts(rule_id):
    desc, strict = BREAKERS[rule_id]
    from_export = spec.Validator(_roundtrip())
    assert from_export.validate(copy.deepcopy(desc), strict_doc=strict) == spec.validate(desc, strict_doc=strict)


def test_verdicts_follow_the_exported_tables_not_code():
    desc = dml_base(level="5_0")
    desc["Desc"]["InputTensor"]["DataType"] = desc["Desc"]["OutputValueTensor"]["DataType"] = "FLOAT64"
    assert not spec.is_valid(desc)
    edited = _roundtrip()
    edited["tables"]["dml_support"]["TOP_K1"][-1]["value_types"].append("FLOAT64")
    assert spec.Validator(edited).validate(desc) == []


def test_verdicts_follow_the_exported_rule_parameters():
    desc = dml_base()
    desc["Desc"]["K"] = 5
    for name in ("OutputValueTensor", "OutputIndexTensor"):
        desc["Desc"][name]["Sizes"] = [2, 3, 5]
    edited = _roundtrip()
    rule = next(r for r in edited["rules"] if r["id"] == "dml.k.max")
    rule["check"]["inclusive"] = False
    assert [f.rule for f in spec.Validator(edited).validate(desc)] == ["dml.k.max"]


def test_every_cited_document_has_a_title_and_an_address():
    exported = spec.export()
    cited = {s["doc"] for rule in exported["rules"] for s in rule["sources"]}
    missing = cited - set(exported["documents"])
    assert not missing, f"cited documents without an entry in `documents`: {sorted(missing)}"
    for doc, entry in exported["documents"].items():
        assert entry["title"] and entry["url"].startswith("https://"), f"document {doc}: {entry}"
        assert entry["family"] in ("dml", "onnx"), f"document {doc}: family {entry['family']!r}"


def test_revisions_and_their_differences_are_recorded():
    exported = spec.export()
    revisions = exported["dml_revisions"]
    assert len(revisions) == 3, f"dml_revisions: expected the 2_1, 3_1 and current revisions, got {list(revisions)}"
    for name, revision in revisions.items():
        assert revision["document"] in exported["documents"], f"revision {name}: document {revision['document']}"
    topics = {d["topic"] for d in exported["dml_revision_differences"]}
    assert "tensor constraint between the outputs" in topics
    for diff in exported["dml_revision_differences"]:
        assert set(diff["claims"]) <= set(revisions), f"{diff['topic']}: claims by unknown revisions"
        for rule_id in diff["rules"]:
            assert rule_id in spec.RULES


def test_feature_levels_and_enums():
    t = spec.tables
    assert t.DML_OPERATOR_TYPES == {"TOP_K": 71, "TOP_K1": 112}
    assert t.DML_AXIS_DIRECTIONS == {"INCREASING": 0, "DECREASING": 1}
    assert t.DML_FEATURE_LEVELS["1_0"] == 0x1000 and t.DML_FEATURE_LEVELS["6_4"] == 0x6400
    assert len(t.DML_FEATURE_LEVELS) == 15
    assert t.DML_DATA_TYPES["FLOAT64"] == 9 and t.DML_DATA_TYPES["INT64"] == 11


@pytest.mark.parametrize("example", spec.tables.DML_WORKED_EXAMPLES, ids=lambda e: e["name"])
def test_worked_examples(example):
    case = spec.Case("dml:2.1", "TOP_K1", "float32", tuple(example["sizes"]), example["axis"], example["k"],
                     largest=example["direction"] == "DECREASING")
    desc = spec.descriptor(case)
    assert spec.validate(desc) == []
    x = np.array(example["input"], dtype=np.float32)
    values, indices = reference_topk(x, axis=example["axis"], k=example["k"], largest=case.largest)
    np.testing.assert_array_equal(values, np.array(example["values"], dtype=np.float32))
    np.testing.assert_array_equal(indices, np.array(example["indices"]))


def test_lowering_maps_onnx_to_top_k1():
    node = {"op_type": "TopK", "opset": 11, "X": {"dtype": "int32", "shape": [4, 3]}, "k": 4,
            "attributes": {"axis": -2, "largest": 0, "sorted": 0}}
    lowered = spec.lower_onnx_to_dml(node, "3_1")
    assert lowered.ok
    body = lowered.descriptor["Desc"]
    assert body["Axis"] == 0 and body["K"] == 4
    assert body["AxisDirection"] == "DML_AXIS_DIRECTION_INCREASING"
    assert body["OutputIndexTensor"]["DataType"] == "DML_TENSOR_DATA_TYPE_UINT32"
    assert spec.validate(lowered.descriptor) == []


def test_lowering_pads_to_four_dims_at_2_1_and_refuses_more():
    node = {"op_type": "TopK", "opset": 10, "X": {"dtype": "float16", "shape": [5]}, "k": 2,
            "attributes": {}}
    lowered = spec.lower_onnx_to_dml(node, "2_1")
    assert lowered.descriptor["Desc"]["InputTensor"]["Sizes"] == [1, 1, 1, 5]
    assert lowered.descriptor["Desc"]["Axis"] == 3
    node["X"]["shape"] = [1, 1, 1, 1, 5]
    assert [f.rule for f in spec.lower_onnx_to_dml(node, "2_1").violations] == ["lower.rank"]
    assert spec.lower_onnx_to_dml(node, "3_1").ok


@pytest.mark.parametrize("dtype,level,ok", [("float64", "6_4", False), ("int64", "3_1", False),
                                            ("int64", "5_0", True), ("bfloat16", "6_4", False)])
def test_lowering_value_types(dtype, level, ok):
    node = {"op_type": "TopK", "opset": 24, "X": {"dtype": dtype, "shape": [4, 4]}, "k": 1, "attributes": {}}
    lowered = spec.lower_onnx_to_dml(node, level)
    assert lowered.ok is ok
    if not ok:
        assert [f.rule for f in lowered.violations] == ["lower.dtype"]


def test_lowering_reports_the_nodes_own_violations():
    node = {"op_type": "TopK", "opset": 11, "X": {"dtype": "float32", "shape": [4]}, "k": 0}
    assert [f.rule for f in spec.lower_onnx_to_dml(node, "5_0").violations] == ["onnx.k.positive"]


def test_lowering_a_node_whose_k_is_unknown_names_lower_k_constant():
    node = {"op_type": "TopK", "opset": 11, "X": {"dtype": "float32", "shape": [4]}, "k": None}
    lowered = spec.lower_onnx_to_dml(node, "5_0")
    assert not lowered.ok and [f.rule for f in lowered.violations] == ["lower.k_constant"], lowered
    assert lowered.violations[0].status == spec.RULES["lower.k_constant"].status
