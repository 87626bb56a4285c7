"""The `onnx-checker` target: ONNX's own checker (check_model, full_check=True) judging each
ONNX descriptor as the one-node model it describes; its shipped known list; a campaign that
finds both of its known deviations."""
import pytest

pytest.importorskip("onnx")
from topkspec.fuzz.config import RunConfig  # noqa: E402
from topkspec.fuzz.run import run_fuzz  # noqa: E402
from topkspec.known import load_known  # noqa: E402
from topkspec.properties import failures  # noqa: E402
from topkspec.targets import get_target  # noqa: E402
from topkspec.targets.runtimes.onnx_checker import OnnxCheckerTarget, descriptor_model  # noqa: E402


def node(opset=11, shape=(3, 4), k=2, dtype="float32", **attributes):
    attributes = {"axis": -1, **({"largest": 1, "sorted": 1} if opset >= 11 else {}), **attributes}
    return {"op_type": "TopK", "opset": opset, "X": {"dtype": dtype, "shape": list(shape)}, "k": k,
            "attributes": attributes}


@pytest.fixture(scope="module")
def checker():
    return get_target("onnx-checker")


@pytest.mark.parametrize("descriptor", [node(1), node(10), node(11), node(24), node(24, dtype="bfloat16"),
                                        node(11, shape=(2, 5), k=5, axis=1)])
def test_valid_descriptors_are_accepted(checker, descriptor):
    verdict = checker.check_descriptor(descriptor)
    assert verdict == {"accepted": True, "detail": "check_model(full_check=True) passed"}, verdict


@pytest.mark.parametrize("descriptor, says", [
    (node(11, k=5), "Axis has less than the requested k elements"),
    (node(11, axis=2), "axis"),
    (node(1, k=0), "Invalid value for attribute k"),
    (node(11, dtype="string"), "string"),
    (node(10, dtype="int32"), "int32"),  # T is float-only before TopK-11
    ({**node(11), "op_type": "Topk"}, "Topk"),
    (node(11, stable=1), "stable"),
])
def test_broken_descriptors_are_refused_in_the_checkers_words(checker, descriptor, says):
    verdict = checker.check_descriptor(descriptor)
    assert verdict["accepted"] is False and says.lower() in verdict["detail"].lower(), verdict


@pytest.mark.parametrize("descriptor", [
    {"Type": "DML_OPERATOR_TOP_K1"},  # a DirectML descriptor
    {**node(11), "Y": ""},  # a key no node has a place for
    {**node(1, k=1), "attributes": {"axis": -1, "k": 2}},  # two different K at opset 1
    node(11, dtype="float128"),  # no ONNX type
    node(11, shape=(3, "n")),
])
def test_what_no_model_holds_is_no_verdict(checker, descriptor):
    assert descriptor_model(descriptor) is None and checker.check_descriptor(descriptor) is None


def test_its_known_deviations_are_real(checker):
    known = load_known(None, "onnx-checker")
    for descriptor, rule, profile in ((node(11, k=0), "onnx.k.positive", "onnx:11"),
                                      (node(24, k=-2), "onnx.k.positive", "onnx:24"),
                                      (node(1, shape=(3,), k=5, axis=0), "onnx.k.max", "onnx:1")):
        assert checker.check_descriptor(descriptor)["accepted"], descriptor
        assert known.match(rule, failures.ACCEPTS_INVALID, "float32", profile, checker.version()), rule
    assert not known.match("onnx.k.max", failures.ACCEPTS_INVALID, "float32", "onnx:11", checker.version())


@pytest.mark.parametrize("profile, rule", [("onnx:1", "onnx.k.max"), ("onnx:11", "onnx.k.positive")])
def test_a_campaign_finds_each_known_deviation(tmp_path, profile, rule):
    result = run_fuzz(RunConfig(target=OnnxCheckerTarget(), profile=profile, max_examples=300, seed=1, settings="ci",
                                report_dir=str(tmp_path)))
    found = {(f.key[1], f.key[2]) for f in result.failures}
    assert (rule, failures.ACCEPTS_INVALID) in found, found
    assert result.held["out.valid_accepted"] > 0 and not result.errors
