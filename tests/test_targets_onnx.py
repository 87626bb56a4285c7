"""The shared ONNX model builder and the ONNX Runtime adapter: models check for every
opset, sessions are cached per signature (per K for a constant K, the DirectML path, run
here on the CPU provider), and the DirectML session options are what the provider needs."""
import numpy as np
import onnx
import pytest

from topkspec.spec import Case
from topkspec.targets import Rejected
from topkspec.targets.onnx_builder import OnnxTopK, build_topk_model, ir_version_for, onnx_form
from topkspec.targets.runtimes.onnxruntime import OnnxRuntimeTarget, session_options

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("opset", [1, 10, 11, 24])
@pytest.mark.parametrize("k_as_input", [True, False])
def test_model_checks_and_runs_in_onnxruntime_and_onnx_reference(opset, k_as_input):
    from onnx.reference import ReferenceEvaluator

    model = build_topk_model(OnnxTopK(opset, "float32", 2, -1, True, True), k=2, k_as_input=k_as_input)
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == ir_version_for(opset) <= onnx.IR_VERSION
    x = np.array([[1, 3, 2], [0, -1, 5]], dtype=np.float32)
    feeds = {"X": x}
    if opset >= 10 and k_as_input:
        feeds["K"] = np.array([2], dtype=np.int64)
    session = ort.InferenceSession(model.SerializeToString(), session_options("CPUExecutionProvider"),
                                   providers=["CPUExecutionProvider"])
    for name, (values, indices) in [("onnxruntime", session.run(None, feeds)),
                                    ("onnx-reference", ReferenceEvaluator(model).run(None, feeds))]:
        assert values.tolist() == [[3, 2], [5, 0]], f"{name} opset {opset}: values {values.tolist()}"
        assert indices.tolist() == [[1, 2], [2, 0]], f"{name} opset {opset}: indices {indices.tolist()}"


def test_model_attributes_follow_the_opset():
    def attributes(opset):
        node = build_topk_model(OnnxTopK(opset, "int32", 3, 1, False, False), k=2).graph.node[0]
        return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}, list(node.input)

    assert attributes(1) == ({"axis": 1, "k": 2}, ["X"])
    assert attributes(10) == ({"axis": 1}, ["X", "K"])
    assert attributes(24) == ({"axis": 1, "largest": 0, "sorted": 0}, ["X", "K"])


def test_constant_k_is_an_initializer():
    model = build_topk_model(OnnxTopK(11, "float32", 2, -1, True, True), k=3, k_as_input=False)
    assert [i.name for i in model.graph.input] == ["X"]
    assert [(i.name, onnx.numpy_helper.to_array(i).tolist()) for i in model.graph.initializer] == [("K", [3])]


def test_dml_cases_lower_to_opset_11_with_direction_and_sorted_output():
    form = onnx_form(Case("dml:3.1", "TOP_K1", "float16", (1, 2, 3, 4), 2, 2, largest=False,
                          sorted=True, index_dtype="uint32"))
    assert form == OnnxTopK(11, "float16", 4, 2, False, True)
    assert onnx_form(Case("onnx:13", "TopK", "int8", (5,), -1, 1, sorted=False, index_dtype="int64")) \
        == OnnxTopK(11, "int8", 1, -1, True, False)


def test_directml_session_options():
    options = session_options("DmlExecutionProvider")
    assert options.enable_mem_pattern is False
    assert options.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert options.get_session_config_entry("session.disable_cpu_ep_fallback") == "1"


def test_cpu_session_options_keep_defaults():
    options = session_options("CPUExecutionProvider")
    assert options.enable_mem_pattern is True
    with pytest.raises(Exception):
        options.get_session_config_entry("session.disable_cpu_ep_fallback")


def random_case(rng, k, size):
    shape = (int(rng.integers(1, 4)), size)
    return Case("onnx:11", "TopK", "float32", shape, -1, k, index_dtype="int64"), \
        rng.standard_normal(shape).astype(np.float32)


def test_one_session_per_signature_with_k_as_input():
    target = OnnxRuntimeTarget("cpu", "CPUExecutionProvider", "onnxruntime")
    rng = np.random.default_rng(0)
    for k, size in [(1, 4), (3, 4), (2, 9), (9, 9), (5, 17)]:
        case, x = random_case(rng, k, size)
        values, _ = target.run(case, x)
        assert values.shape == case.out_shape
    assert target.sessions_built == 1
    target.run(case.with_(largest=False), x)
    assert target.sessions_built == 2


def test_constant_k_sessions_are_cached_per_k():
    # The DirectML configuration (K compiled into the model) on the CPU provider.
    target = OnnxRuntimeTarget("cpu-constant-k", "CPUExecutionProvider", "onnxruntime", k_constant=True)
    rng = np.random.default_rng(1)
    for k, size in [(2, 4), (2, 8), (2, 30), (3, 8), (3, 5)]:
        case, x = random_case(rng, k, size)
        values, indices = target.run(case, x)
        want = np.sort(x, axis=-1)[:, ::-1][:, :k]
        assert np.array_equal(values, want), f"k={k} size={size}: expected {want}, got {values}"
    assert target.sessions_built == 2


def _refusal(target, case):
    """The runtime's refusal of every case like `case` (supports raises Rejected), or None."""
    try:
        assert target.supports(case) is None
    except Rejected as exc:
        return str(exc)
    return None


def test_a_missing_kernel_is_the_runtimes_refusal_and_cached():
    target = OnnxRuntimeTarget("cpu", "CPUExecutionProvider", "onnxruntime")
    types = ("uint16", "uint32", "uint64", "int32", "float32")
    reasons = {t: _refusal(target, Case("onnx:11", "TopK", t, (4,), 0, 1, index_dtype="int64")) for t in types}
    for dtype, reason in reasons.items():
        # A refusal must come from ONNX Runtime's own NOT_IMPLEMENTED error, nothing else.
        assert reason is None or "NOT_IMPLEMENTED" in reason, f"{dtype}: {reason}"
    assert reasons["float32"] is None
    built = target.sessions_built
    _refusal(target, Case("onnx:11", "TopK", "uint32", (7, 2), 0, 1, index_dtype="int64"))
    assert target.sessions_built == built, "the support answer must be cached per signature"


def test_invalid_node_is_a_rejection_not_unsupported():
    target = OnnxRuntimeTarget("cpu", "CPUExecutionProvider", "onnxruntime")
    case = Case("onnx:10", "TopK", "int32", (4,), 0, 1, index_dtype="int64")  # int32 needs opset 11
    assert target.supports(case) is None
    with pytest.raises(Rejected, match="tensor\\(int32\\)"):
        target.run(case, np.arange(4, dtype=np.int32))


class OlderRuntime(OnnxRuntimeTarget):
    """ONNX Runtime as older versions behave, with their own error texts (no NOT_IMPLEMENTED):
    1.20.1 cannot load opset 24 ("Unsupported model IR version"), 1.16.3 wraps float16 at opset 1
    in a Cast node it names InsertedCast_X, which is invalid there."""

    def __init__(self):
        super().__init__("older-onnxruntime", "CPUExecutionProvider", "onnxruntime")

    def _new_session(self, model):
        opset = model.opset_import[0].version
        elem = model.graph.input[0].type.tensor_type.elem_type
        if opset >= 24:
            raise RuntimeError("[ONNXRuntimeError] : 1 : FAIL : Load model from memory failed:"
                               "Unsupported model IR version: 11, max supported IR version: 10")
        if opset == 1 and elem == onnx.TensorProto.FLOAT16:
            raise RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model. In Node, "
                               "(\"InsertedCast_X\", Cast, \"\", -1) : (\"X\": tensor(float16),) -> ... "
                               "Error Mismatched attribute type in 'InsertedCast_X : to'")
        return super()._new_session(model)


def test_support_is_probed_not_read_from_error_texts():
    target = OlderRuntime()
    reason = target.supports(Case("onnx:24", "TopK", "float32", (5, 2), 0, 1, index_dtype="int64"))
    assert reason and "Unsupported model IR version" in reason, f"opset 24: {reason}"
    reason = _refusal(target, Case("onnx:1", "TopK", "float16", (4,), 0, 1, index_dtype="int64"))
    assert reason and "InsertedCast_X" in reason, f"float16 at opset 1: {reason}"
    assert target.supports(Case("onnx:1", "TopK", "float32", (4,), 0, 1, index_dtype="int64")) is None
    assert target.default_profile == "onnx:11", f"default profile: {target.default_profile}"


def test_the_listing_shows_what_the_runtime_really_loads():
    from topkspec.targets.listing import support_matrix

    matrix = support_matrix(OlderRuntime(), profiles=["onnx:1", "onnx:11", "onnx:24"])
    assert matrix["onnx:24"]["supported"] == [], f"onnx:24: {matrix['onnx:24']}"
    assert "float16" not in matrix["onnx:1"]["supported"], f"onnx:1: {matrix['onnx:1']}"
    assert "float32" in matrix["onnx:11"]["supported"], f"onnx:11: {matrix['onnx:11']}"


def test_a_valid_type_the_runtime_cannot_run_is_a_refused_valid_descriptor():
    from topkspec.fuzz import RunConfig, run_fuzz

    result = run_fuzz(RunConfig(target=OlderRuntime(), profile="onnx:1", max_examples=60, seed=0,
                                settings="ci", isolate=False, groups=("valid", "nan")))
    refused = [f for f in result.failures if f.failure_class == "rejects a valid descriptor"]
    assert [f.case.dtype for f in refused] == ["float16"], [f.case.describe() for f in result.failures]
    assert "InsertedCast_X" in refused[0].violation.actual, refused[0].violation.actual


def test_an_opset_the_runtime_cannot_load_is_unsupported_not_a_refusal_per_type():
    from topkspec.fuzz import RunConfig, run_fuzz

    result = run_fuzz(RunConfig(target=OlderRuntime(), profile="onnx:24", max_examples=60, seed=0,
                                settings="ci", isolate=False, groups=("valid",)))
    assert not result.failures, [f.case.describe() for f in result.failures]
    assert any("Unsupported model IR version" in reason for reason in result.unsupported), dict(result.unsupported)
    assert result.exit_code == 3


def test_a_type_outside_the_opset_is_not_probed_so_its_refusal_is_judged():
    target = OlderRuntime()
    case = Case("onnx:10", "TopK", "int8", (4,), 0, 1, index_dtype="int64")  # int8 is not in T at 10
    assert target.supports(case) is None
    with pytest.raises(Rejected):
        target.run(case, np.arange(4, dtype=np.int8))


def test_unavailable_provider_reason_names_what_it_needs():
    target = OnnxRuntimeTarget("no-such", "NoSuchExecutionProvider", "a provider that does not exist")
    ok, reason = target.available()
    assert not ok
    assert reason.startswith("a provider that does not exist: NoSuchExecutionProvider not in "
                             "onnxruntime.get_available_providers()")


def test_listed_provider_that_cannot_run_topk_is_unavailable_not_cpu_fallback():
    # AzureExecutionProvider ships with the CPU package and has no TopK kernel: with CPU
    # fallback refused (as for DirectML and CUDA) the session fails, so the target says why.
    if "AzureExecutionProvider" not in ort.get_available_providers():
        pytest.skip("needs onnxruntime's AzureExecutionProvider listed (the standard CPU package lists it)")
    target = OnnxRuntimeTarget("azure", "AzureExecutionProvider", "an Azure endpoint")
    ok, reason = target.available()
    assert not ok
    assert reason.startswith("an Azure endpoint: AzureExecutionProvider is listed but a session on it fails:")
    assert "fallback to CPU EP has been explicitly disabled" in reason
