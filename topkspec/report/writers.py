"""Repro writers: how each kind of target writes its repro program and names its stack.

A writer pairs a template file (the runtime part of repro.py: its imports and a
`topk(x, k, axis)` that calls the runtime as the adapter does) with the values that fill
it and a description of the stack (runtime, operator, device, versions). Writers are
registered by adapter kind; a target's kind is its `repro_kind` attribute, else its class:

    register_repro_writer("directml", ReproWriter(template=files("mypkg") / "repro.tmpl",
                          needs="numpy and the DirectML worker", fill=fill, stack=stack),
                          target_class=DirectMLTarget)

A target with no writer gets the `adapter` one: a repro that runs it through topkspec.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import metadata
from typing import Callable

from topkspec.spec.profiles import parse_profile


@dataclass(frozen=True)
class Stack:
    """What ran: '<runtime> <operator> (<device>)' in the title, versions and details below."""

    runtime: str
    operator: str = ""
    device: str = ""
    versions: dict = field(default_factory=dict)  # distribution -> version
    details: tuple = ()  # lines a maintainer needs: provider, options, how K was passed

    @property
    def label(self) -> str:
        text = " ".join(part for part in (self.runtime, self.operator) if part)
        return f"{text} ({self.device})" if self.device else text


@dataclass(frozen=True)
class ReproWriter:
    """template: a file name under topkspec/report/templates/, a path or Traversable of a
    target's own, or a function of the case returning one; fill(target, case, target_spec) ->
    the template's values; stack(target, case, target_spec) -> Stack; needs: what the program
    imports, for its docstring.

    The template defines `topk(x, k, axis)` returning numpy (values, indices), or, with
    `takes_op`, `topk(x, k, axis, op="TOP_K1")` so a repro can compare DML_TOP_K with DML_TOP_K1.
    `checks_index_type`: the program holds the indices to the target's index type (or the
    case's); off for plain functions, whose indices the suite converts.

    A failure judged on a descriptor as written (`Target.check_descriptor`: a validator, or a
    broken descriptor no Case carries) replays through `descriptor_template`, a template that
    defines `validate(descriptor)`, which returns when the target accepts the descriptor and
    raises when it refuses it; `descriptor_fill(target, case, target_spec)` fills it and
    `descriptor_needs` says what it imports. A writer without one leaves such failures to the
    adapter writer's (through topkspec)."""

    template: object
    needs: str
    fill: Callable
    stack: Callable
    takes_op: bool = False
    checks_index_type: bool = True
    descriptor_template: object = None
    descriptor_fill: Callable | None = None
    descriptor_needs: str = ""


_WRITERS: dict[str, ReproWriter] = {}
_KIND_BY_CLASS: dict[str, str] = {
    "topkspec.targets.ort.OnnxRuntimeTarget": "onnxruntime",
    "topkspec.targets.torch_target.TorchTarget": "torch",
    "topkspec.targets.jax_target.JaxTarget": "jax",
    "topkspec.targets.openvino_target.OpenVinoTarget": "openvino",
    "topkspec.targets.onnx_reference.OnnxReferenceTarget": "onnx-reference",
    "topkspec.targets.base.CallableTarget": "callable",
    "topkspec.targets.validator.ValidatorTarget": "validator",
}


def _class_key(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_repro_writer(kind: str, writer: ReproWriter, *, target_class=None) -> None:
    """Use `writer` for targets of `kind` (and for instances of `target_class`, a class or its
    'module.QualName')."""
    _WRITERS[kind] = writer
    if target_class is not None:
        key = target_class if isinstance(target_class, str) else _class_key(target_class)
        _KIND_BY_CLASS[key] = kind


def kind_of(target) -> str | None:
    """The adapter kind of a target: its `repro_kind`, else the first registered class in its MRO."""
    kind = getattr(target, "repro_kind", None)
    if kind:
        return kind
    for cls in type(target).__mro__:
        if _class_key(cls) in _KIND_BY_CLASS:
            return _KIND_BY_CLASS[_class_key(cls)]
    return None


def writer_for(target) -> ReproWriter:
    """The writer for a target (the adapter writer when its kind has none)."""
    _register_builtins()
    return _WRITERS.get(kind_of(target) if target is not None else None) or _WRITERS["adapter"]


def descriptor_writer_for(target) -> ReproWriter:
    """The writer that replays a descriptor judged as written: the target kind's own when it
    has a descriptor template, else the adapter writer."""
    writer = writer_for(target)
    return writer if writer.descriptor_template is not None else _WRITERS["adapter"]


def versions(*distributions) -> dict:
    """{distribution: version} for those installed."""
    found = {}
    for name in distributions:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def operator_label(case) -> str:
    """'TopK-24' for ONNX, 'DML_TOP_K1 (DML_FEATURE_LEVEL_5_0)' for DirectML ('DML TopK' when
    the case stands for a descriptor whose operator cannot be read)."""
    profile = parse_profile(case.profile)
    if profile.family == "onnx":
        return f"TopK-{profile.opset}"
    op = getattr(case, "op", None)
    return f"{f'DML_{op}' if op else 'DML TopK'} (DML_FEATURE_LEVEL_{profile.level_name})"


# -- the built-in writers ---------------------------------------------------------------------

def _onnx_fill(target, case, _spec) -> dict:
    from onnx import TensorProto

    from topkspec.spec import dtypes
    from topkspec.targets.onnx_builder import ir_version_for, onnx_form

    form = onnx_form(case)
    attributes = ["axis=axis"]
    if form.opset >= 11:
        attributes += [f"largest={int(form.largest)}", f"sorted={int(form.sorted)}"]
    if form.opset < 10:
        attributes.append("k=k")
        k_lines, node_inputs = "    # k is the node's attribute at opset 1", '["X"]'
    elif getattr(target, "k_constant", False):
        k_lines = '    initializers.append(helper.make_tensor("K", TensorProto.INT64, [1], [k]))  # K compiled in'
        node_inputs = '["X", "K"]'
    else:
        k_lines = ('    inputs.append(helper.make_tensor_value_info("K", TensorProto.INT64, [1]))\n'
                   '    feeds["K"] = np.array([k], dtype=np.int64)')
        node_inputs = '["X", "K"]'
    provider = getattr(target, "provider", "CPUExecutionProvider")
    return {"opset": form.opset, "elem": TensorProto.DataType.Name(dtypes.ONNX_ELEM_TYPES[form.dtype]),
            "k_lines": k_lines, "node_inputs": node_inputs, "attributes": ", ".join(attributes),
            "ir_version": ir_version_for(form.opset), "provider": provider,
            "session_options": "\n".join("    " + line for line in ort_session_lines(provider))}


def ort_session_lines(provider: str) -> list[str]:
    """The SessionOptions settings of topkspec.targets.ort.session_options, as code."""
    lines = ["options.log_severity_level = 4", "options.enable_cpu_mem_arena = False"]
    if provider == "DmlExecutionProvider":
        lines += ["options.enable_mem_pattern = False",
                  "options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL"]
    if provider != "CPUExecutionProvider":
        lines.append('options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")')
    return lines


_DEVICES = {"CPUExecutionProvider": "CPU", "CUDAExecutionProvider": "CUDA", "DmlExecutionProvider": "DirectML"}


def _ort_stack(target, case, _spec=None) -> Stack:
    from topkspec.targets.onnx_builder import onnx_form

    provider = getattr(target, "provider", "CPUExecutionProvider")
    form = onnx_form(case)
    k_how = ("K as the node's attribute" if form.opset < 10 else
             "K compiled into the model as an initializer" if getattr(target, "k_constant", False)
             else "K as a graph input")
    details = [f"execution provider {provider}; session options: " + "; ".join(ort_session_lines(provider)),
               f"one TopK-{form.opset} node, symbolic input dimensions, {k_how}"]
    if case.family == "dml":
        details.append(f"the {operator_label(case)} case runs lowered to ONNX TopK-{form.opset}")
    return Stack("ONNX Runtime", f"TopK-{form.opset}", _DEVICES.get(provider, provider),
                 versions("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml", "onnx"), tuple(details))


def _onnx_reference_stack(target, case, _spec=None) -> Stack:
    from topkspec.targets.onnx_builder import onnx_form

    return Stack("ONNX reference evaluator", f"TopK-{onnx_form(case).opset}", "", versions("onnx"),
                 ("onnx.reference.ReferenceEvaluator over a one-node model, K as a graph input",))


def _torch_fill(target, case, _spec) -> dict:
    from topkspec.targets.base import selects_largest

    device = getattr(target, "device", "cpu")
    to = "" if device == "cpu" else f'.to("{device}")'
    if case.dtype == "bfloat16":  # numpy has no bfloat16: its 16 bits travel as int16
        to_torch = f"torch.from_numpy(x.view(np.int16)).view(torch.bfloat16){to}"
        from_torch = "values.cpu().view(torch.int16).numpy().view(x.dtype)"
    else:
        to_torch, from_torch = f"torch.from_numpy(x){to}", "values.cpu().numpy()"
    return {"to_torch": to_torch, "from_torch": from_torch, "largest": selects_largest(case),
            "sorted": case.sorted if case.family == "onnx" else True}


def _torch_stack(target, case, _spec=None) -> Stack:
    device = getattr(target, "device", "cpu")
    return Stack("PyTorch", "torch.topk", device.upper(), versions("torch"))


def _jax_fill(target, case, _spec) -> dict:
    from topkspec.spec import dtypes

    wide = dtypes.itemsize(case.dtype) == 8
    integer = dtypes.numpy_dtype(case.dtype).kind in "iu"
    return {"integer_key": "    return ~x  # integers: bitwise not reverses the order\n" if integer else "",
            "x64": '\njax.config.update("jax_enable_x64", True)  # 64-bit types, as the adapter runs them\n'
                   if wide else ""}


def _jax_template(case) -> str:
    from topkspec.targets.base import selects_largest

    return "jax.tmpl" if selects_largest(case) else "jax_smallest.tmpl"


def _jax_stack(target, case, _spec=None) -> Stack:
    from topkspec.targets.base import selects_largest

    how = ("jax.lax.top_k on the input" if selects_largest(case) else
           "jax.lax.top_k on an order-reversing integer key, values gathered by index")
    return Stack("JAX", "jax.lax.top_k", "CPU", versions("jax", "jaxlib"), (how + ", jitted",))


def _openvino_fill(target, case, _spec) -> dict:
    from topkspec.targets.base import selects_largest
    from topkspec.targets.openvino_target import _OV_TYPES

    bf16 = case.dtype == "bfloat16"
    return {"device": getattr(target, "device", "CPU"), "ov_type": _OV_TYPES[case.dtype],
            "mode": "max" if selects_largest(case) else "min",
            "prepare": ("    x_in = ov.Tensor(ov.Type.bf16, ov.Shape(list(x.shape)))\n"
                        "    x_in.data[...] = x.view(np.float16)  # its bits: an array would convert by value"
                        if bf16 else "    x_in = x"),
            "values_out": "values.view(x.dtype)" if bf16 else "values"}


def _openvino_stack(target, case, _spec=None) -> Stack:
    device = getattr(target, "device", "CPU")
    return Stack("OpenVINO", "TopK-11", device, versions("openvino"),
                 ("opset11.topk with sort=value, stable=True, index_element_type=i64; "
                  "INFERENCE_PRECISION_HINT f32",))


def _callable_parts(spec_text: str):
    """(load lines, label) for the function an import string or file path names."""
    where, _, attr = spec_text.rpartition(":")
    if where.endswith(".py") or "/" in where or os.sep in where:
        path = os.path.abspath(where)
        name = os.path.splitext(os.path.basename(path))[0]
        load = ("import importlib.util\n\n"
                f"sys.path.insert(0, {os.path.dirname(path)!r})  # it may import the modules beside it\n"
                f"spec = importlib.util.spec_from_file_location({name!r}, {path!r})\n"
                "module = importlib.util.module_from_spec(spec)\n"
                "spec.loader.exec_module(module)\n"
                f"function = module.{attr}")
        return load, f"{attr} ({os.path.basename(path)})"
    return f"import importlib\n\nfunction = importlib.import_module({where!r}).{attr}", f"{where}:{attr}"


def _callable_fill(target, case, spec_text) -> dict:
    from topkspec.targets.base import selects_largest

    load, _ = _callable_parts(spec_text or target.name)
    return {"load": load, "largest": selects_largest(case),
            "axis_expr": "axis + x.ndim if axis < 0 else axis"}


def _callable_stack(target, case, spec_text=None) -> Stack:
    _, label = _callable_parts(spec_text or target.name)
    return Stack(label, "", "", {}, (f"{spec_text or target.name} called as function(x, axis=..., k=..., "
                                     "largest=...), sorted output expected",))


def _validator_load(target, spec_text) -> tuple[str, str]:
    """(load lines, label) for a validator's function: by the import string the run was given,
    else by the file and name that define the function (a target passed as an object)."""
    import inspect

    from topkspec.targets.base import Target

    if spec_text and ":" in spec_text:
        load, label = _callable_parts(spec_text)
        try:
            from topkspec.targets.registry import named_object

            wraps = isinstance(named_object(spec_text), Target)
        except Exception:
            wraps = False
        if wraps:  # the name is a ValidatorTarget made in the user's code: call what it wraps
            load += "\nfunction = function.fn  # the function the ValidatorTarget wraps"
        return load, label
    fn = getattr(target, "fn", None)
    qualname = getattr(fn, "__qualname__", "")
    try:
        path = inspect.getfile(fn)
    except TypeError:
        path = None
    if path and qualname and "<" not in qualname:
        return _callable_parts(f"{os.path.abspath(path)}:{qualname}")
    name = spec_text or getattr(target, "name", "validator")
    return (f'sys.exit("{name} cannot be imported by name (a local function or a lambda): '
            f'name it by import string to get a runnable program")\nfunction = None'), name


def _validator_fill(target, case, spec_text) -> dict:
    return {"load": _validator_load(target, spec_text)[0]}


def _validator_stack(target, case, spec_text=None) -> Stack:
    _, label = _validator_load(target, spec_text)
    return Stack(label, "", "", {}, (f"{label} called as function(descriptor) with the descriptor's JSON form "
                                     "as a dict: it returns to accept it and raises to refuse it",))


def _spec_from_anywhere(spec_text):
    """The target spec with a file path made absolute: the program runs from its report folder."""
    where, sep, attr = (spec_text or "").rpartition(":")
    if sep and (where.endswith(".py") or "/" in where or os.sep in where):
        return f"{os.path.abspath(where)}:{attr}"
    return spec_text


def _adapter_descriptor_fill(target, case, spec_text) -> dict:
    name = getattr(target, "name", spec_text)
    return {"name": name, "spec": repr(_spec_from_anywhere(spec_text) or name)}


def _adapter_fill(target, case, spec_text) -> dict:
    name = getattr(target, "name", spec_text)
    return {"name": name, "spec": repr(_spec_from_anywhere(spec_text) or name), "case": repr(case.to_dict())}


def _adapter_stack(target, case, _spec=None) -> Stack:
    import topkspec

    name = getattr(target, "name", "target")
    return Stack(name, operator_label(case), "", {"topkspec": getattr(topkspec, "__version__", "?")},
                 ("run through topkspec's adapter for it",))


_registered = False


def _register_builtins() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    builtins = {
        "onnxruntime": ReproWriter("onnxruntime.tmpl", "numpy, onnx and onnxruntime", _onnx_fill, _ort_stack),
        "onnx-reference": ReproWriter("onnx_reference.tmpl", "numpy and onnx", _onnx_fill, _onnx_reference_stack),
        "torch": ReproWriter("torch.tmpl", "numpy and torch", _torch_fill, _torch_stack),
        "jax": ReproWriter(_jax_template, "numpy and jax", _jax_fill, _jax_stack),
        "openvino": ReproWriter("openvino.tmpl", "numpy and openvino", _openvino_fill, _openvino_stack),
        "callable": ReproWriter("callable.tmpl", "numpy and the function's own module", _callable_fill,
                                _callable_stack, checks_index_type=False),
        # A validator makes no calls: its every failure replays as a descriptor.
        "validator": ReproWriter("validator.tmpl", "the function's own module", _validator_fill, _validator_stack,
                                 checks_index_type=False, descriptor_template="validator.tmpl",
                                 descriptor_fill=_validator_fill, descriptor_needs="the function's own module"),
        "adapter": ReproWriter("adapter.tmpl", "numpy and topkspec (its adapter runs the target)",
                               _adapter_fill, _adapter_stack, descriptor_template="adapter_descriptor.tmpl",
                               descriptor_fill=_adapter_descriptor_fill,
                               descriptor_needs="topkspec (its adapter asks the target)"),
    }
    for kind, writer in builtins.items():
        _WRITERS.setdefault(kind, writer)
