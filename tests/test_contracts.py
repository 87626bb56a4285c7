"""The contract data model: ONNX's and DirectML's text as contracts, a framework's own, TOML files."""
import pytest

from topkspec.spec.contracts import (
    POINTS, Contract, ContractError, Promise, dml_contract, load_contract, onnx_contract, own_contract,
)
from topkspec.targets.base import CallableTarget, Target


def test_onnx_contract_follows_the_opset():
    new, old = onnx_contract("x", (24,)), onnx_contract("x", (10,))
    assert new.value("sorted") == "optional" and old.value("sorted") == "always"
    assert new.value("smallest") == "offered" and old.value("smallest") == "not_offered"
    assert new.promise("axis_out_of_range").status == "documented"
    assert old.promise("axis_out_of_range").status == "interpretation"
    assert new.value("nan") == "unspecified"
    assert "single positive value" in new.promise("k_zero").quote
    assert new.promise("k_zero").url == "https://onnx.ai/onnx/operators/onnx__TopK.html"


def test_dml_contract_quotes_directml():
    contract = dml_contract("dml")
    assert contract.implements == "dml" and contract.profiles == ("dml:5.0",)
    assert contract.value("sorted") == "always"
    assert "greater than 0" in contract.promise("k_zero").quote
    assert "learn.microsoft.com" in contract.promise("ties").url


def test_own_contract_in_a_few_lines():
    contract = own_contract("myfw", url="https://myfw.dev/topk", title="myfw.topk",
                            sorted=("never", "Output order is arbitrary."), smallest="not_offered",
                            indices="not_returned")
    assert [p.point for p in contract.promises] == list(POINTS)
    assert contract.promise("sorted").label == "documents"
    assert contract.promise("smallest").label == "our reading"  # declared with no sentence
    assert not contract.promise("nan").specified and not contract.promise("k_zero").specified
    assert Contract.from_dict(contract.to_dict()) == contract


@pytest.mark.parametrize("points, message", [
    ({"sorted": "never", "smallest": "offered"}, "must say indices"),
    ({"sorted": "sometimes", "smallest": "offered", "indices": "returned"}, "no value of that point"),
    ({"sorted": "never", "smallest": "offered", "indices": "returned", "colour": "red"}, "unknown contract points"),
])
def test_own_contract_refuses_what_it_cannot_mean(points, message):
    with pytest.raises(ContractError, match=message):
        own_contract("x", url="u", title="t", **points)


def test_a_contract_needs_every_point_once():
    with pytest.raises(ContractError, match="missing"):
        Contract("x", "own", (Promise("nan", "unspecified", "", "u", "t"),))


def test_load_contract_from_toml(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('name = "myfw.topk"\nurl = "https://myfw.dev"\ntitle = "myfw"\n[promises]\n'
                    'sorted = { value = "never", quote = "No order." }\nsmallest = "not_offered"\n'
                    'indices = "not_returned"\nk_zero = "empty"\n')
    contract = load_contract(str(path))
    assert contract.value("sorted") == "never" and contract.promise("sorted").quote == "No order."
    assert contract.value("k_zero") == "empty" and contract.implements == "own"
    onnx = tmp_path / "o.toml"
    onnx.write_text('implements = "onnx"\nprofiles = ["onnx:11"]\n[promises]\nnan = "largest"\n')
    assert load_contract(str(onnx)).value("nan") == "largest"
    assert load_contract(str(onnx)).value("sorted") == "optional"


@pytest.mark.parametrize("text, message", [("name = [", "not TOML"), ('implements = "tflite"', "implements"),
                                           ('[promises]\nsorted = "never"', "needs `url`")])
def test_load_contract_errors_are_one_line(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ContractError, match=message):
        load_contract(str(path))
    with pytest.raises(ContractError, match="--contract"):
        load_contract(str(tmp_path / "missing.toml"))


def test_a_target_without_a_contract_is_held_to_its_profile_text():
    class OnnxThing(Target):
        default_profile = "onnx:11"
    assert OnnxThing().contract.implements == "onnx" and OnnxThing().contract.profiles == ("onnx:11",)
    assert Target().contract.implements == "dml"
    mine = own_contract("f", url="u", title="t", sorted="never", smallest="not_offered", indices="not_returned")
    assert CallableTarget(lambda x, **kw: None, contract=mine).contract is mine
    assert CallableTarget(lambda x, **kw: None).contract.implements == "dml"
