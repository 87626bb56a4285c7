"""`topkspec spec` and `topkspec validate`: output, exit codes and messages on good and bad input."""
import json
import subprocess
import sys

import pytest

from topkspec import spec
from spec_breakers import breaker, dml_base, onnx_base


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "topkspec", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_spec_prints_the_export():
    out = run("spec")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == json.loads(json.dumps(spec.export()))


def test_validate_valid_file(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(dml_base()))
    out = run("validate", str(path))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"valid": True, "violations": []}


def test_validate_invalid_from_stdin_lists_every_rule():
    desc, _ = breaker("dml.k.max")
    desc["Desc"]["AxisDirection"] = 9
    out = run("validate", "-", stdin=json.dumps(desc))
    assert out.returncode == 1
    result = json.loads(out.stdout)
    assert result["valid"] is False
    assert {v["rule"] for v in result["violations"]} == {"dml.k.max", "dml.direction.enum"}
    for violation in result["violations"]:
        assert set(violation) == {"rule", "message", "source", "status", "citations"}, violation
        assert violation["source"] == spec.RULES[violation["rule"]].source
        assert violation["status"] == spec.RULES[violation["rule"]].status, violation
        assert violation["citations"] and all(c in spec.RULES[violation["rule"]].sources
                                              for c in violation["citations"]), violation


def test_validate_strict_doc_and_profile_options(tmp_path):
    desc = onnx_base(11)
    desc["k"] = 4
    path = tmp_path / "onnx.json"
    path.write_text(json.dumps(desc))
    assert run("validate", str(path)).returncode == 0
    del desc["opset"]  # --spec gives the version of a descriptor that names none
    path.write_text(json.dumps(desc))
    out = run("validate", "--spec", "onnx:10", str(path))
    assert out.returncode == 1
    assert {v["rule"] for v in json.loads(out.stdout)["violations"]} == {"onnx.attr.allowed"}
    dml = dml_base()
    for name in ("OutputValueTensor", "OutputIndexTensor"):
        dml["Desc"][name]["Sizes"] = [2, 3, 5]
    dml["Desc"]["K"] = 5
    path.write_text(json.dumps(dml))
    assert run("validate", str(path)).returncode == 0
    assert run("validate", "--strict-doc", str(path)).returncode == 1


@pytest.mark.parametrize("content,needle", [
    ("{not json", "not valid JSON"),
    ("[1, 2", "not valid JSON"),
    ('{"foo": 1}', "not a TopK descriptor"),
    ('"TopK"', "must be a JSON object, got a string"),
    ("[]", "an empty array holds no descriptor"),
    ("null", "must be a JSON object, got null"),
    ('{"Type": "DML_OPERATOR_TOP_K9", "Desc": {}}', "unknown DirectML operator Type"),
])
def test_validate_malformed_input_exits_2_with_one_line(tmp_path, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content)
    out = run("validate", str(path))
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_validate_missing_file_and_bad_profile_exit_2(tmp_path):
    out = run("validate", str(tmp_path / "nope.json"))
    assert out.returncode == 2 and "cannot read" in out.stderr and "Traceback" not in out.stderr
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(dml_base()))
    out = run("validate", "--spec", "dml:banana", str(path))
    assert out.returncode == 2 and "feature level" in out.stderr and "Traceback" not in out.stderr


def _model_with_two_topk_nodes(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    outs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in ("v1", "i1", "v2", "i2")]
    k_ok = helper.make_tensor("k_ok", TensorProto.INT64, [1], [2])
    k_big = helper.make_tensor("k_big", TensorProto.INT64, [1], [5])
    nodes = [helper.make_node("TopK", ["x", "k_ok"], ["v1", "i1"], name="good", axis=1),
             helper.make_node("TopK", ["x", "k_big"], ["v2", "i2"], name="too_many", axis=-1, largest=0)]
    graph = helper.make_graph(nodes, "g", [x], outs, initializer=[k_ok, k_big])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_validate_onnx_model_checks_each_topk_node(tmp_path):
    path = _model_with_two_topk_nodes(tmp_path)
    out = run("validate", str(path))
    assert out.returncode == 1, out.stderr
    result = json.loads(out.stdout)
    assert [n["node"] for n in result["nodes"]] == ["good", "too_many"]
    assert result["nodes"][0]["valid"] is True
    assert [v["rule"] for v in result["nodes"][1]["violations"]] == ["onnx.k.max"]
    assert result["violations"][0]["node"] == "too_many"


def test_validate_unreadable_onnx_model_exits_2(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x00\x01not a model")
    out = run("validate", str(path))
    assert out.returncode == 2 and "ONNX model" in out.stderr and "Traceback" not in out.stderr


def test_validate_a_list_of_descriptors(tmp_path):
    bad, _ = breaker("onnx.k.positive")
    path = tmp_path / "many.json"
    path.write_text(json.dumps([dml_base(), bad]))
    out = run("validate", str(path))
    assert out.returncode == 1
    result = json.loads(out.stdout)
    assert [i["valid"] for i in result["items"]] == [True, False]
    assert result["violations"][0]["item"] == 1


def _topk_model(tmp_path, k_tensor=None, *, opset=11, k_input=None, nodes=None):
    """A model with one TopK whose input K is the initializer `k_tensor` (or the graph input
    `k_input`, a ValueInfo), or no input K at all."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    outs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in ("v", "i")]
    inputs, initializers = ["x"], []
    attributes = {"axis": -1} if opset >= 10 else {"axis": -1, "k": 2}
    if k_tensor is not None:
        inputs.append(k_tensor.name)
        initializers.append(k_tensor)
    graph_inputs = [x]
    if k_input is not None:
        inputs.append(k_input.name)
        graph_inputs.append(k_input)
    node = helper.make_node("TopK", inputs, ["v", "i"], name="topk", **attributes)
    graph = helper.make_graph(nodes if nodes is not None else [node], "g", graph_inputs, outs,
                              initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _k_cases():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    return {
        "scalar K": (dict(k_tensor=helper.make_tensor("k", TensorProto.INT64, [], [2])), "onnx.k.single", "1-D"),
        "2-D K": (dict(k_tensor=helper.make_tensor("k", TensorProto.INT64, [1, 1], [2])), "onnx.k.single", "1-D"),
        "int32 K": (dict(k_tensor=helper.make_tensor("k", TensorProto.INT32, [1], [2])), "onnx.k.single",
                    "tensor(int64)"),
        "int32 K input": (dict(k_input=helper.make_tensor_value_info("k", TensorProto.INT32, [1])),
                          "onnx.k.single", "tensor(int64)"),
        "two values": (dict(k_tensor=helper.make_tensor("k", TensorProto.INT64, [2], [2, 1])), "onnx.k.single",
                       "single value"),
        "no K input": (dict(), "onnx.desc.fields", 'missing "k"'),
        "K at opset 1": (dict(opset=1, k_tensor=helper.make_tensor("k", TensorProto.INT64, [1], [2])),
                         "onnx.k.single", "no input K"),
        "zero": (dict(k_tensor=helper.make_tensor("k", TensorProto.INT64, [1], [0])), "onnx.k.positive", "K is 0"),
    }


@pytest.mark.parametrize("what", ["scalar K", "2-D K", "int32 K", "int32 K input", "two values", "no K input",
                                  "K at opset 1", "zero"])
def test_validate_onnx_model_holds_k_to_a_1d_int64_tensor_with_one_positive_value(tmp_path, what):
    changes, rule, words = _k_cases()[what]
    out = run("validate", str(_topk_model(tmp_path, **changes)))
    assert out.returncode == 1, f"{what}: expected exit 1, got {out.returncode}\n{out.stdout}{out.stderr}"
    violations = json.loads(out.stdout)["violations"]
    assert any(v["rule"] == rule and words in v["message"] for v in violations), \
        f"{what}: expected {rule} saying {words!r}, got {violations}"


def test_validate_onnx_model_with_a_good_k_is_valid(tmp_path):
    from onnx import TensorProto, helper

    out = run("validate", str(_topk_model(tmp_path, helper.make_tensor("k", TensorProto.INT64, [1], [2]))))
    assert out.returncode == 0, f"{out.stdout}{out.stderr}"
    out = run("validate", str(_topk_model(tmp_path, k_input=helper.make_tensor_value_info("k", TensorProto.INT64, [1]))))
    assert out.returncode == 0, f"K as a graph input of int64[1]: {out.stdout}{out.stderr}"
    [node] = json.loads(out.stdout)["nodes"]
    assert node["descriptor"]["k"] is None and node["notes"] == [
        "k is not a constant (given at run time): rules that need it are not checked"], \
        f"a K the model leaves open is null: {node}"
    assert [n["rule"] for n in node["not_checked"]] == ["onnx.k.positive", "onnx.k.max"], node


def test_validate_onnx_model_without_topk_says_so(tmp_path):
    from onnx import helper

    path = _topk_model(tmp_path, nodes=[helper.make_node("Identity", ["x"], ["v"]),
                                        helper.make_node("Identity", ["x"], ["i"])])
    out = run("validate", str(path))
    assert out.returncode == 2 and "no TopK node" in out.stderr and out.stdout == "", \
        f"expected exit 2 and one line, got {out.returncode}: {out.stdout}{out.stderr}"
