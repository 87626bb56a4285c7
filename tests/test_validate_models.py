"""`topkspec validate` on what it may be pointed at: models with TopK in subgraphs, unknown
dimensions and K, models it cannot read (one line, exit 2, and no file outside the model's folder
opened), lists with malformed items (each its own error; exit 1 broke a rule, 2 malformed, 3
both), descriptors whose version disagrees with --spec, and other files that are not UTF-8."""
import json
import os
import subprocess
import sys

import pytest

from topkspec import spec
from spec_breakers import breaker, dml_base, onnx_base

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from topkspec.spec.onnx_reader import read_model  # noqa: E402


def run(*args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "topkspec", *args], input=stdin, capture_output=True, text=True,
                          timeout=60, cwd=cwd)


def one_line_error(out, needle):
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and out.stdout == "" and len(lines) == 1 and needle in lines[0] \
        and "Traceback" not in out.stderr, f"expected exit 2 and one line with {needle!r}, got {out.returncode}: " \
                                           f"{out.stdout}{out.stderr}"


def _save(path, graph, opset=13):
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


def _out(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def _branch(nodes, name, out):
    return helper.make_graph(nodes, name, [], [_out(out)])


def if_model(path, k=None, axis=1):
    """X of shape [N, 4]; the only TopK sits in an If's then-branch; K is the graph input
    `kk` (run time) or an initializer holding `k`."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    inputs, inits = [x, cond], []
    if k is None:
        inputs.append(helper.make_tensor_value_info("kk", TensorProto.INT64, [1]))
    else:
        inits.append(helper.make_tensor("kk", TensorProto.INT64, [1], [k]))
    then = _branch([helper.make_node("TopK", ["x", "kk"], ["v", "i"], name="top", axis=axis)], "then", "v")
    other = _branch([helper.make_node("Identity", ["x"], ["w"])], "else", "w")
    node = helper.make_node("If", ["c"], ["y"], name="choose", then_branch=then, else_branch=other)
    return _save(path, helper.make_graph([node], "g", inputs, [_out("y")], initializer=inits))


def test_a_topk_only_in_an_if_branch_is_judged_with_its_location(tmp_path):
    out = run("validate", str(if_model(tmp_path / "m.onnx", k=9)))
    assert out.returncode == 1, out.stdout + out.stderr
    [node] = json.loads(out.stdout)["nodes"]
    assert node["node"] == "choose/then_branch/top", node
    assert [v["rule"] for v in node["violations"]] == ["onnx.k.max"], node


def test_loop_and_scan_bodies_are_searched(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    k = helper.make_tensor("k", TensorProto.INT64, [1], [2])
    body_in = [helper.make_tensor_value_info("it", TensorProto.INT64, []),
               helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])]
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("TopK", ["x", "k"], ["lv", "li"], axis=-1)],
        "loop_body", body_in, [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), _out("lv")])
    scan_body = helper.make_graph(
        [helper.make_node("TopK", ["row", "k"], ["sv", "si"], name="in_scan", axis=0)], "scan_body",
        [helper.make_tensor_value_info("row", TensorProto.FLOAT, [4])], [_out("sv")])
    nodes = [helper.make_node("Loop", ["", ""], ["lout"], name="loop", body=loop_body),
             helper.make_node("Scan", ["x"], ["sout"], name="scan", body=scan_body, num_scan_inputs=1)]
    path = _save(tmp_path / "m.onnx", helper.make_graph(nodes, "g", [x], [_out("lout"), _out("sout")],
                                                          initializer=[k]))
    found = read_model(str(path))
    assert [n.location for n in found] == ["loop/body/TopK#1", "scan/body/in_scan"], found
    assert all(n.descriptor["k"] == 2 and spec.is_valid(n.descriptor) for n in found), found


@pytest.mark.parametrize("k", [None, 2])
def test_what_the_model_leaves_open_is_null_and_judging_the_printed_descriptor_again_agrees(tmp_path, k):
    out = run("validate", str(if_model(tmp_path / "m.onnx", k=k, axis=0)))  # along the unknown N
    [node] = json.loads(out.stdout)["nodes"]
    desc = node["descriptor"]
    assert desc["X"]["shape"] == [None, 4], desc
    assert desc["k"] == k, desc
    again = spec.judge(desc)
    assert [f.to_dict() for f in again.findings] == node["violations"], node
    assert again.not_checked == node["not_checked"], node
    assert {n["rule"] for n in node["not_checked"]} == ({"onnx.k.positive", "onnx.k.max"} if k is None
                                                        else {"onnx.k.max"}), node
    path = tmp_path / "printed.json"
    path.write_text(json.dumps(desc))
    printed = run("validate", str(path))
    assert (printed.returncode, json.loads(printed.stdout)["not_checked"]) == (0, node["not_checked"]), printed


def _k_model(path, k_tensor):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top", axis=-1)
    graph = helper.make_graph([node], "g", [x], [_out("v"), _out("i")], initializer=[k_tensor])
    return _save(path, graph)


def _external_k(location, offset=0):
    tensor = helper.make_tensor("k", TensorProto.INT64, [1], [0])
    tensor.ClearField("int64_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", "8")):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def test_external_data_inside_the_model_folder_is_read(tmp_path):
    (tmp_path / "k.bin").write_bytes((0).to_bytes(8, "little") + (2).to_bytes(8, "little"))
    path = _k_model(tmp_path / "m.onnx", _external_k("k.bin", offset=8))
    out = run("validate", str(path))
    assert out.returncode == 0 and json.loads(out.stdout)["nodes"][0]["descriptor"]["k"] == 2, out


def test_external_data_outside_the_model_folder_is_never_opened(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    fifo = tmp_path / "outside.bin"
    os.mkfifo(fifo)  # opening it for reading would block: the command would never end
    for location in ("../outside.bin", str(fifo)):
        out = run("validate", str(_k_model(folder / "m.onnx", _external_k(location))))
        one_line_error(out, "outside the model's folder: not opened")
    os.symlink(fifo, folder / "link.bin")
    one_line_error(run("validate", str(_k_model(folder / "m.onnx", _external_k("link.bin")))), "not opened")


def test_unreadable_initializers_are_one_line_errors(tmp_path):
    one_line_error(run("validate", str(_k_model(tmp_path / "m.onnx", _external_k("gone.bin")))), "missing")
    short = helper.make_tensor("k", TensorProto.INT64, [1], [0])
    short.ClearField("int64_data")
    short.raw_data = b"\x02\x00\x00"  # 3 bytes for one int64
    one_line_error(run("validate", str(_k_model(tmp_path / "m.onnx", short))), "do not fit")
    raw = _k_model(tmp_path / "m.onnx", _external_k("k.bin")).read_bytes()
    [node] = spec.topk_nodes(raw)  # bytes with no folder: no external data is read
    assert node.descriptor is None and "none to read it from: not opened" in node.error, node


def test_a_list_judges_every_item_and_its_exit_code_says_what_it_found(tmp_path):
    broken, _ = breaker("onnx.k.positive")
    path = tmp_path / "list.json"
    for items, code in (([dml_base(), onnx_base()], 0), ([dml_base(), broken], 1),
                        ([dml_base(), "no descriptor"], 2), ([broken, 7, dml_base(), {"Type": "TOP_K9"}], 3)):
        path.write_text(json.dumps(items))
        out = run("validate", str(path))
        assert out.returncode == code, f"{items}: expected exit {code}, got {out.returncode}\n{out.stderr}"
        result = json.loads(out.stdout)
        assert len(result["items"]) == len(items)
        bad = [i for i, item in enumerate(items) if not isinstance(item, dict) or item.get("Type") == "TOP_K9"]
        assert [e["item"] for e in result.get("errors", [])] == bad, result
        assert [line.split(":")[2].strip() for line in out.stderr.splitlines()] == [f"item {i}" for i in bad], out.stderr
        for i, item in enumerate(items):
            if i not in bad:
                assert result["items"][i]["valid"] == spec.is_valid(item), (i, result["items"][i])


def test_spec_and_a_descriptor_naming_another_version_is_an_error(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(onnx_base(11)))
    one_line_error(run("validate", "--spec", "onnx:10", str(path)), "opset names onnx:11, --spec names onnx:10")
    assert run("validate", "--spec", "onnx:11", str(path)).returncode == 0
    path.write_text(json.dumps(dml_base(level="3_1")))
    one_line_error(run("validate", "--spec", "dml:2.1", str(path)), "FeatureLevel names dml:3.1")


def test_files_that_are_not_utf8_are_bad_usage(tmp_path):
    bad = tmp_path / "known.toml"
    bad.write_bytes(b'[[known]]\nrule = "\xff"\n')
    one_line_error(run("fuzz", "--target", "reference", "--known", str(bad)), "not UTF-8")
    descriptor = tmp_path / "d.json"
    descriptor.write_bytes(b'{"op_type": "\xff"}')
    one_line_error(run("validate", str(descriptor)), "not UTF-8")


def test_a_node_that_cannot_be_read_gets_its_error_and_the_others_are_judged(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    nodes = [helper.make_node("TopK", ["x", "far"], ["v1", "i1"], name="far_k", axis=-1),
             helper.make_node("TopK", ["x", "k9"], ["v2", "i2"], name="big_k", axis=-1)]
    far = _external_k("../far.bin")
    far.name = "far"
    graph = helper.make_graph(nodes, "g", [x], [_out("v1"), _out("v2")],
                              initializer=[far, helper.make_tensor("k9", TensorProto.INT64, [1], [9])])
    out = run("validate", str(_save(tmp_path / "m.onnx", graph)))
    assert out.returncode == 3, out.stdout + out.stderr  # one broke a rule, one could not be read
    result = json.loads(out.stdout)
    assert [e["node"] for e in result["errors"]] == ["far_k"] and "not opened" in result["errors"][0]["error"]
    assert [v["rule"] for v in result["violations"]] == ["onnx.k.max"] and result["violations"][0]["node"] == "big_k"
    assert out.stderr.startswith("topkspec: error: node far_k:") and len(out.stderr.splitlines()) == 1, out.stderr
