"""The `onnx-checker` target: ONNX's own model checker as a validator.

Every ONNX tool leans on `onnx.checker.check_model`; with `full_check=True` it also runs
strict shape and type inference, which is where the TopK schema's K and axis checks live.
Each ONNX descriptor, valid or broken, becomes the one-node model it describes, exactly as
written: X with its concrete shape (so inference knows the axis size), K as a constant
initializer from opset 10 on (its value visible to inference, as in a model exported with a
fixed K) or the attribute `k` at opset 1, every attribute as given, outputs typed (Values
as X, Indices int64) with symbolic sizes, for inference to find. The checker accepts the model by returning and refuses it by raising
(onnx.checker.ValidationError, onnx.shape_inference.InferenceError).

A descriptor no ModelProto can hold is not a verdict (check_descriptor gives None): a DirectML
one, a field of the wrong kind (a fractional opset, a shape that is no list of integers), an
unknown value type name, a key the node has no place for, or, at opset 1, two different K
(the descriptor's `k` and an attribute `k`): a node has one attribute `k`.

Its contract is ONNX's TopK (https://onnx.ai/onnx/operators/onnx__TopK.html): K is "a single
positive value", the outputs have k along the axis and hold "the top k elements", the axis's
"Accepted range is [-r, r-1]", T lists the value types. So it validates, by every ONNX table.
"""
from __future__ import annotations

from topkspec.targets.base import Target
from topkspec.targets.runtimes import contracts as runtime_contracts

NEEDS = "the onnx package (pip install onnx)"
# Descriptor keys a one-node model has a place for.
_NODE_KEYS = {"op_type", "opset", "X", "k", "attributes"}
# topkspec's value type names whose TensorProto name is not simply the upper-cased name.
_TENSOR_NAMES = {"float32": "FLOAT", "float64": "DOUBLE"}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def elem_type(dtype) -> int | None:
    """The TensorProto element type a value type name stands for, None when ONNX has none."""
    from onnx import TensorProto

    if not isinstance(dtype, str):
        return None
    try:
        return TensorProto.DataType.Value(_TENSOR_NAMES.get(dtype, dtype.upper()))
    except ValueError:
        return None


def descriptor_model(descriptor: dict):
    """The ModelProto an ONNX descriptor describes, as written, or None when no model can
    hold it (see the module text)."""
    from onnx import TensorProto, helper

    from topkspec.targets.onnx_builder import ir_version_for

    if not isinstance(descriptor, dict) or "op_type" not in descriptor or set(descriptor) - _NODE_KEYS:
        return None
    op_type, opset, x = descriptor.get("op_type"), descriptor.get("opset"), descriptor.get("X")
    attributes = dict(descriptor.get("attributes") or {}) if isinstance(descriptor.get("attributes", {}), dict) else None
    if not isinstance(op_type, str) or not _is_int(opset) or opset < 1 or not isinstance(x, dict) or attributes is None:
        return None
    shape, elem = x.get("shape"), elem_type(x.get("dtype"))
    if elem is None or not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
        return None
    k = descriptor.get("k")
    values = k if isinstance(k, list) else [k]
    if not all(_is_int(v) for v in values):
        return None
    initializers, inputs = [], ["X"]
    if opset < 10:
        if isinstance(k, list) or ("k" in attributes and attributes["k"] != k):
            return None  # one attribute k holds one K
        attributes["k"] = k
    else:
        inputs.append("K")
        initializers.append(helper.make_tensor("K", TensorProto.INT64, [len(values)], values))
    try:
        node = helper.make_node(op_type, inputs, ["Values", "Indices"], **attributes)
    except (TypeError, ValueError):  # an attribute value no AttributeProto holds (None, a dict)
        return None
    out_dims = [f"o{i}" for i in range(len(shape))]  # symbolic sizes: inference finds them
    graph = helper.make_graph([node], "topk", [helper.make_tensor_value_info("X", elem, shape)],
                              [helper.make_tensor_value_info("Values", elem, out_dims),
                               helper.make_tensor_value_info("Indices", TensorProto.INT64, out_dims)],
                              initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=max(ir_version_for(opset), 4), producer_name="topkspec")


class OnnxCheckerTarget(Target):
    contract = runtime_contracts.onnx_importer("ONNX checker (ONNX TopK)")
    name = "onnx-checker"
    default_profile = "onnx:24"
    computes = False  # it judges models, it runs none
    validates = True  # ONNX's contract (see the module text)
    validates_tables = ("onnx",)
    native = False

    @property
    def descriptor_rules(self) -> frozenset:
        """Every rule an ONNX descriptor can break: each broken one is handed over as written."""
        from topkspec.targets.validator import every_breakable_rule

        return frozenset(rule for rule in every_breakable_rule() if rule.startswith("onnx."))

    def version(self) -> str:
        try:
            import onnx
        except ImportError:
            return "not installed"
        return f"onnx {onnx.__version__} checker (check_model, full_check=True)"

    def available(self):
        try:
            import onnx.checker  # noqa: F401
        except ImportError as exc:
            return False, f"{NEEDS}: {exc}"
        return True, ""

    def check_descriptor(self, descriptor: dict) -> dict | None:
        """{"accepted": True, "detail": "check_model passed"} when the checker takes the model,
        {"accepted": False, "detail": "<error>: <first line>"} when it refuses it, None when
        no model can hold the descriptor."""
        import onnx

        from topkspec.targets.base import first_line

        model = descriptor_model(descriptor)
        if model is None:
            return None
        try:
            onnx.checker.check_model(model, full_check=True)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
            return {"accepted": False, "detail": f"{type(exc).__name__}: {first_line(exc)}"}
        return {"accepted": True, "detail": "check_model(full_check=True) passed"}

    def run(self, case, x):
        from topkspec.targets.base import AdapterError

        raise AdapterError("onnx-checker judges models, it computes no results")
