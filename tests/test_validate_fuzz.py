"""`topkspec validate` never ends in a traceback: descriptors with a value of any JSON kind in
any field (or a field removed, or one added) get exit 0 or 1 with the JSON verdict, or exit 2
with one line saying why; in a list, each malformed item gets its line and adds 2 to the exit
code, and the other items are judged."""
import argparse
import copy
import io
import json
import os
import tempfile

from hypothesis import HealthCheck, given, settings, strategies as st

from spec_breakers import dml_base, onnx_base
from topkspec.cli.spec_commands import cmd_validate

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=6)
    | st.sampled_from(["FLOAT32", "DML_TENSOR_DATA_TYPE_UINT32", "TOP_K1", "3_1", "float16", "int64",
                       "DECREASING", "TopK"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)

BASES = [dml_base(), dml_base("TOP_K"), dml_base(level="DML_FEATURE_LEVEL_2_1"), onnx_base(1), onnx_base(10),
         onnx_base(11), onnx_base(24)]
PROFILES = [None, "dml:2.1", "dml:3.1", "dml:5.0", "onnx:1", "onnx:10", "onnx:11", "onnx:24"]


def paths(value, prefix=()):
    """Every place in a JSON value: dictionary keys and list positions, depth first."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, prefix + (index,))
    return found


@st.composite
def malformed(draw):
    desc = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths(desc)))
        how = draw(st.sampled_from(["replace", "remove", "add"]))
        if not path:
            desc = draw(JSON) if how == "replace" else desc
            continue
        parent = desc
        for step in path[:-1]:
            parent = parent[step]
        if how == "replace":
            parent[path[-1]] = draw(JSON)
        elif how == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=5))] = draw(JSON)
        if not isinstance(desc, (dict, list)):
            break
    if draw(st.booleans()):
        desc = [desc, draw(st.sampled_from(BASES))]
    return desc


def validate(document, profile, strict_doc):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        handle.write(document)
    out, err = io.StringIO(), io.StringIO()
    try:
        code = cmd_validate(argparse.Namespace(file=handle.name, profile=profile, strict_doc=strict_doc),
                            out=out, err=err)
    finally:
        os.unlink(handle.name)
    return code, out.getvalue(), err.getvalue()


def assert_answered(document, profile, strict_doc):
    code, out, err = validate(document, profile, strict_doc)
    where = f"descriptor {document[:300]} with --spec {profile}, strict_doc={strict_doc}"
    assert code in (0, 1, 2, 3), f"{where}: exit code {code}"
    lines = err.strip().splitlines()
    if out == "":  # nothing judged: one line
        assert code == 2 and len(lines) == 1 and lines[0].startswith("topkspec: error:"), \
            f"{where}: exit 2 needs one line on stderr, got exit {code}, stderr {err!r}"
        return
    verdict = json.loads(out)
    errors = verdict.get("errors", [])
    assert verdict["valid"] is (code == 0), f"{where}: exit {code} but valid is {verdict['valid']}"
    assert all(v["rule"] and v["message"] for v in verdict["violations"]), f"{where}: {verdict}"
    assert code == bool(verdict["violations"]) + 2 * bool(errors), \
        f"{where}: exit {code} with {verdict['violations']} and errors {errors}"
    assert [line.split(":")[2].strip() for line in lines] == [f"item {e['item']}" for e in errors], \
        f"{where}: one line per malformed item, got {err!r}"


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(malformed(), st.sampled_from(PROFILES), st.booleans())
def test_every_malformed_descriptor_gets_a_verdict_or_one_line(desc, profile, strict_doc):
    assert_answered(json.dumps(desc, allow_nan=True), profile, strict_doc)


def test_the_reported_crashes_get_an_answer():
    for field, value in [("DataType", {}), ("DataType", [1, "a"])]:
        desc = dml_base()
        desc["Desc"]["InputTensor"][field] = value
        assert_answered(json.dumps(desc), None, False)


def test_deeply_nested_json_gets_one_line():
    assert_answered("[" * 100000 + "]" * 100000, None, False)


def test_a_deeply_nested_field_gets_an_answer():
    desc = dml_base()
    desc["Desc"]["K"] = json.loads("[" * 900 + "]" * 900)
    assert_answered(json.dumps(desc), None, False)
