"""The validator: every rule is reported when broken, with its id and source, and only then."""
import json
import subprocess
import sys

import pytest

from topkspec import spec
from spec_breakers import BREAKERS, breaker, dml_base, onnx_base

DESCRIPTOR_RULES = [r.id for r in spec.RULE_LIST if r.check is not None]


def test_every_descriptor_rule_has_a_breaker():
    assert sorted(BREAKERS) == sorted(DESCRIPTOR_RULES)


@pytest.mark.parametrize("rule_id", DESCRIPTOR_RULES)
def test_breaking_one_rule_reports_that_rule(rule_id):
    desc, strict = breaker(rule_id)
    findings = spec.validate(desc, strict_doc=strict)
    reported = {f.rule for f in findings}
    rule = spec.RULES[rule_id]
    assert reported == {rule_id, *rule.co_broken}, [f.to_dict() for f in findings]
    assert rule.breakable_alone == (not rule.co_broken)
    for finding in findings:
        assert finding.source == spec.RULES[finding.rule].source
        assert finding.message


@pytest.mark.parametrize("desc", [dml_base(), dml_base("TOP_K"), onnx_base(11), onnx_base(10), onnx_base(1),
                                  onnx_base(24)], ids=["top_k1", "top_k", "onnx11", "onnx10", "onnx1", "onnx24"])
def test_base_descriptors_are_valid(desc):
    if desc.get("opset") == 1:
        desc["attributes"]["k"] = desc["k"]
    assert spec.validate(desc) == []


def test_every_violation_is_reported_not_only_the_first():
    desc = dml_base()
    desc["Desc"]["K"] = 0
    desc["Desc"]["AxisDirection"] = 7
    desc["Desc"]["OutputIndexTensor"]["DataType"] = "INT8"
    reported = {f.rule for f in spec.validate(desc)}
    assert {"dml.k.positive", "dml.direction.enum", "dml.dtype.index_supported"} <= reported


def test_rules_have_status_source_and_reason():
    for rule in spec.RULE_LIST:
        assert rule.status in (spec.DOCUMENTED, spec.INTERPRETATION, spec.UNSPECIFIED), rule.id
        assert rule.sources, rule.id
        if rule.status != spec.DOCUMENTED:
            assert rule.reason, f"{rule.id} is an {rule.status} and must say why"
        for required in rule.requires:
            assert required in spec.RULES, f"{rule.id} requires unknown rule {required}"


def test_requires_only_earlier_rules():
    seen = set()
    for rule in spec.RULE_LIST:
        assert set(rule.requires) <= seen, rule.id
        seen.add(rule.id)


def test_k_equal_to_axis_size_is_valid_unless_strict():
    desc = dml_base()
    desc["Desc"]["K"] = 5
    desc["Desc"]["OutputValueTensor"]["Sizes"] = [2, 3, 5]
    desc["Desc"]["OutputIndexTensor"]["Sizes"] = [2, 3, 5]
    assert spec.validate(desc) == []
    assert [f.rule for f in spec.validate(desc, strict_doc=True)] == ["dml.k.max_strict"]


@pytest.mark.parametrize("level,dtype,ok", [
    ("3_1", "INT64", False), ("5_0", "INT64", True), ("6_4", "UINT64", True),
    ("5_0", "FLOAT64", False), ("2_1", "INT8", True),
])
def test_value_types_by_feature_level(level, dtype, ok):
    desc = dml_base(level="DML_FEATURE_LEVEL_" + level)
    if level == "2_1":
        desc = _four_d(desc)
    for name in ("InputTensor", "OutputValueTensor"):
        desc["Desc"][name]["DataType"] = dtype
    assert spec.is_valid(desc) is ok


def _four_d(desc):
    body = desc["Desc"]
    body["InputTensor"]["Sizes"] = [1, 2, 3, 5]
    body["OutputValueTensor"]["Sizes"] = [1, 2, 3, 2]
    body["OutputIndexTensor"]["Sizes"] = [1, 2, 3, 2]
    body["Axis"] = 3
    return desc


def test_uint64_indices_from_5_0_only():
    desc = dml_base(level="3_1")
    desc["Desc"]["OutputIndexTensor"]["DataType"] = "UINT64"
    assert [f.rule for f in spec.validate(desc)] == ["dml.dtype.index_supported"]
    assert spec.validate(desc, "dml:5.0") == []


def test_top_k_has_an_older_float_only_row():
    desc = _four_d(dml_base("TOP_K", level="2_0"))
    assert spec.validate(desc) == []
    desc["Desc"]["InputTensor"]["DataType"] = desc["Desc"]["OutputValueTensor"]["DataType"] = "INT32"
    assert [f.rule for f in spec.validate(desc)] == ["dml.dtype.value_supported"]
    assert spec.validate(desc, "dml:2.1") == []


def test_top_k_rejects_axis_direction_member():
    desc = dml_base("TOP_K")
    desc["Desc"]["AxisDirection"] = "DECREASING"
    assert [f.rule for f in spec.validate(desc)] == ["dml.desc.fields"]


def test_short_names_and_enum_values_are_accepted():
    desc = {"Type": "TOP_K1", "FeatureLevel": "3_1", "Desc": {
        "InputTensor": {"DataType": "FLOAT16", "Sizes": [4]},
        "OutputValueTensor": {"DataType": 2, "Sizes": [4]},
        "OutputIndexTensor": {"DataType": "UINT32", "Sizes": [4]},
        "Axis": 0, "K": 4, "AxisDirection": "INCREASING"}}
    assert spec.validate(desc) == []
    assert spec.case_from_descriptor(desc) == spec.Case("dml:3.1", "TOP_K1", "float16", (4,), 0, 4,
                                                         largest=False, index_dtype="uint32")


@pytest.mark.parametrize("opset,dtype,ok", [
    (1, "float16", True), (10, "int64", False), (11, "int64", True), (11, "bfloat16", False),
    (24, "bfloat16", True), (13, "uint8", True), (9, "double", True),
])
def test_onnx_type_constraints_by_opset(opset, dtype, ok):
    desc = onnx_base(min(opset, 11))
    desc["opset"] = opset
    if opset < 10:
        desc["attributes"] = {"axis": -1, "k": 2}
    desc["X"]["dtype"] = dtype
    assert spec.is_valid(desc) is ok, spec.validate(desc)


def test_onnx_opset_24_matches_installed_schema():
    onnx = pytest.importorskip("onnx")
    from topkspec.spec import dtypes

    for version in ("1", "10", "11", "24"):
        schema = onnx.defs.get_schema("TopK", int(version))
        constraint = {c.type_param_str: sorted(c.allowed_type_strs) for c in schema.type_constraints}
        ours = spec.tables.ONNX_VERSIONS[version]
        assert sorted(f"tensor({dtypes.ONNX_TYPE_STRINGS[t]})" for t in ours["T"]) == constraint["T"]
        assert sorted(ours["attributes"]) == sorted(schema.attributes)


def test_profiles():
    assert spec.parse_profile("dml:3_1").name == "dml:3.1"
    assert spec.parse_profile("dml:0x5000").name == "dml:5.0"
    assert spec.parse_profile("dml:DML_FEATURE_LEVEL_6_4").level == 0x6400
    assert spec.parse_profile("dml:7.2").level == 0x7200  # a later level uses the newest rows
    assert spec.parse_profile("onnx:13").opset == "11"
    assert spec.parse_profile("onnx:30").opset == "24"
    for bad in ("dml:0.9", "onnx:0", "cuda:1", "dml", "onnx:x", "dml:3.1.2"):
        with pytest.raises(spec.ProfileError):
            spec.parse_profile(bad)
    assert spec.value_types("dml:7.0", "TOP_K1") == spec.value_types("dml:5.0", "TOP_K1")


def test_profile_overrides_descriptor_level():
    desc = dml_base(level="5_0")
    desc["Desc"]["InputTensor"]["DataType"] = desc["Desc"]["OutputValueTensor"]["DataType"] = "UINT64"
    assert spec.validate(desc) == []
    assert [f.rule for f in spec.validate(desc, "dml:3.1")] == ["dml.dtype.value_supported"]
    with pytest.raises(spec.ProfileError):
        spec.validate(desc, "onnx:11")


def test_not_a_descriptor_is_a_descriptor_error():
    for bad in ([], "x", {"foo": 1}, {"Type": "DML_OPERATOR_GEMM", "Desc": {}}):
        with pytest.raises(spec.DescriptorError):
            spec.validate(bad)


def test_case_round_trip_through_descriptor():
    cases = [
        spec.Case("dml:3.1", "TOP_K1", "int8", (7,), 0, 3, largest=False),
        spec.Case("dml:5.0", "TOP_K", "uint64", (2, 9), 1, 9, index_dtype="uint64"),
        spec.Case("onnx:11", "TopK", "float64", (3, 4, 5), -2, 1, largest=False, sorted=False,
                  index_dtype="int64"),
        spec.Case("onnx:1", "TopK", "float16", (6,), -1, 2, index_dtype="int64"),
    ]
    for case in cases:
        desc = spec.descriptor(case)
        assert spec.validate(desc) == [], desc
        assert spec.case_from_descriptor(json.loads(json.dumps(desc))) == case


def test_import_is_standard_library_only():
    code = "import sys; from topkspec import spec; spec.validate(spec.tables.DML_WORKED_EXAMPLES and " \
           "{'op_type': 'TopK', 'opset': 11, 'X': {'dtype': 'float32', 'shape': [3]}, 'k': 1}); " \
           "print(sorted(m for m in ('numpy', 'onnx', 'hypothesis') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_or_malformed_tensor_member_reports_desc_fields_only():
    desc = dml_base()
    del desc["Desc"]["OutputIndexTensor"]
    assert [f.rule for f in spec.validate(desc)] == ["dml.desc.fields"]
    desc = dml_base()
    desc["Desc"]["InputTensor"] = [2, 3, 5]
    assert [f.rule for f in spec.validate(desc)] == ["dml.desc.fields"]


@pytest.mark.parametrize("level, ok", [("DML_FEATURE_LEVEL_1_0", False), ("DML_FEATURE_LEVEL_2_0", True)])
def test_top_k_arrives_at_feature_level_2_0_as_its_page_says(level, ok):
    desc = _four_d(dml_base("TOP_K", level=level))  # 4-D, as the 2_0 table has it
    rules = {f.rule for f in spec.validate(desc)}
    assert rules == (set() if ok else {"dml.operator.available"}), f"TOP_K at {level}: {rules}"


@pytest.mark.parametrize("data_type, value, ok", [
    ("FLOAT32", 4, True), ("FLOAT32", 8, True), ("FLOAT32", 2, False), ("FLOAT32", 12, False),
    ("UINT8", 1, True), ("FLOAT16", 2, True), ("INT64", 4, False), ("INT64", 8, True), ("UINT32", 16, True),
])
def test_alignment_is_a_power_of_two_at_least_the_element_size(data_type, value, ok):
    desc = dml_base()
    for name in ("InputTensor", "OutputValueTensor"):
        desc["Desc"][name]["DataType"] = data_type
    desc["Desc"]["InputTensor"]["GuaranteedBaseOffsetAlignment"] = value
    rules = {f.rule for f in spec.validate(desc)}
    assert rules == (set() if ok else {"dml.tensor.alignment"}), f"{data_type} aligned to {value}: {rules}"


@pytest.mark.parametrize("rule_id, says", [
    ("onnx.k.positive", "TopK-1"), ("onnx.axis.range", "TopK-10"), ("out.order", "TopK-10"),
    ("out.nan.unspecified", "stated by neither text"),
])
def test_rules_a_text_does_not_state_everywhere_are_interpretations(rule_id, says):
    rule = spec.RULES[rule_id]
    assert rule.status == spec.INTERPRETATION, f"{rule_id}: expected interpretation, got {rule.status}"
    assert says in rule.reason, f"{rule_id}: the reason must say where the text is silent ({says!r}): {rule.reason}"


def test_zero_sizes_are_documented():
    rule = spec.RULES["dml.tensor.sizes_positive"]
    assert rule.status == spec.DOCUMENTED and "size of zero in any dimension is invalid" in rule.reason, rule
