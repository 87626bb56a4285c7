"""Finding a target by name: built-ins, entry points, import strings and file paths.

`get_target(spec)` tries, in order:
1. a built-in name (`reference`, `onnxruntime`, `torch`, ...);
2. an entry point named `spec` in the group `topkspec.targets`;
3. a prefixed form: `onnx-backend:MODULE`, a runtime behind ONNX's Backend API;
4. an import string `package.module:attr`;
5. a file path `path/to/file.py:attr` (the file's directory goes on sys.path first, so it
   can import the modules beside it).
`attr` may be a Target instance, a Target subclass, a zero-argument factory returning a
Target, a plain `topk(x, *, axis, k, largest)` function (wrapped in CallableTarget), or a
plain `validate(descriptor)` function that raises to refuse a descriptor (wrapped in
ValidatorTarget): one that takes exactly one required positional parameter and none named
axis, k or largest.
"""
from __future__ import annotations

import importlib
import inspect
import os
from importlib import metadata
from typing import Callable

from topkspec.targets.base import CallableTarget, Target
from topkspec.targets.import_string import TargetError, import_parts, named_object
from topkspec.targets.validator import ValidatorTarget

ENTRY_POINT_GROUP = "topkspec.targets"


def _module(module: str, factory: str):
    """A factory for a target made by topkspec.targets.runtimes.<module>.<factory> (a class or a
    function), imported when called."""
    def make():
        return getattr(importlib.import_module(f"topkspec.targets.runtimes.{module}"), factory)()
    return make


# Factories import their runtime only when called, so listing names costs nothing.
BUILTIN_TARGETS: dict[str, Callable[[], Target]] = {
    "reference": _module("reference", "ReferenceTarget"),
    "onnx-reference": _module("onnx_reference", "OnnxReferenceTarget"),
    "onnx-checker": _module("onnx_checker", "OnnxCheckerTarget"),
    "onnxruntime": _module("onnxruntime", "cpu"),
    "onnxruntime-directml": _module("directml_ep", "directml"),
    "onnxruntime-cuda": _module("onnxruntime", "cuda"),
    "torch": _module("torch", "cpu"),
    "torch-cuda": _module("torch", "cuda"),
    "jax": _module("jax", "JaxTarget"),
    "jax-gpu": _module("jax", "gpu"),
    "openvino": _module("openvino", "OpenVinoTarget"),
    "directml": _module("directml", "DirectMLTarget"),
    "tensorflow": _module("tensorflow", "TensorFlowTarget"),
    "litert": _module("litert", "LiteRtTarget"),
    "keras-numpy": _module("keras", "KerasNumpyTarget"),
    # mindspore before paddle: paddle's libdnnl, loaded first in one process, keeps MindSpore's from loading
    "mindspore": _module("mindspore", "MindSporeTarget"),
    "paddle": _module("paddle", "PaddleTarget"),
    "tract": _module("tract", "TractTarget"),
    "iree": _module("iree", "IreeTarget"),
    "tinygrad": _module("tinygrad", "TinygradTarget"),
    "tvm": _module("tvm", "TvmTarget"),
    "mlx": _module("mlx", "MlxTarget"),
    # in Python environments of their own (topkspec env setup NAME; topkspec.targets.foreign)
    "jittor": _module("jittor", "JittorTarget"),
    "onnxruntime@1.31": lambda: _versioned("onnxruntime@1.31"),
}


# Families with a target per version, each in its own environment: `onnxruntime@1.31`.
VERSIONED_FAMILIES = {"onnxruntime": ("onnxruntime_foreign", "versioned")}


# Forms `PREFIX:WHAT` made by an adapter module's factory: `onnx-backend:onnxruntime.backend`
# (a runtime that implements ONNX's Backend API; topkspec.targets.runtimes.onnx_backend).
PREFIXED_FORMS = {"onnx-backend:": ("onnx_backend", "backend_target", "onnx-backend:MODULE",
                                   "a runtime that implements ONNX's Backend API (prepare, run)")}


def _prefixed(spec: str) -> Target | None:
    """The target a prefixed form names, or None when `spec` has no known prefix."""
    for prefix, (module, factory, *_) in PREFIXED_FORMS.items():
        if spec.startswith(prefix):
            return getattr(importlib.import_module(f"topkspec.targets.runtimes.{module}"), factory)(spec)
    return None


def _versioned(spec: str) -> Target | None:
    """The target `family@version` names, or None when `spec` is no such name."""
    family, at, version = spec.partition("@")
    if not at or family not in VERSIONED_FAMILIES or not version.replace(".", "").isdigit():
        return None
    module, factory = VERSIONED_FAMILIES[family]
    return getattr(importlib.import_module(f"topkspec.targets.runtimes.{module}"), factory)(version)


def entry_points() -> dict:
    """Entry points of the `topkspec.targets` group by name."""
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def known_names() -> list[str]:
    return list(BUILTIN_TARGETS) + sorted(set(entry_points()) - set(BUILTIN_TARGETS))


def as_target(obj, name: str | None = None, origin: str | None = None) -> Target:
    """A Target from what an import string or entry point names (see the module text); a plain
    function's target names it by `origin`, the import string the user gave."""
    if isinstance(obj, Target):
        return obj
    if inspect.isclass(obj):
        if issubclass(obj, Target):
            return obj()
        raise TargetError(f"{name or obj!r} is a class but not a topkspec Target subclass")
    if not callable(obj):
        raise TargetError(f"{name or obj!r} is neither a Target nor a callable")
    if _takes_no_arguments(obj):
        made = obj()
        if not isinstance(made, Target):
            raise TargetError(f"{name or obj!r} takes no arguments but returned {type(made).__name__}, not a Target")
        return made
    if _takes_a_descriptor(obj):
        return ValidatorTarget(obj, name=name, origin=origin)
    return CallableTarget(obj, name=name, origin=origin)


def _takes_no_arguments(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return not any(p.default is inspect.Parameter.empty
                   and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                   for p in params) and not any(p.kind == p.VAR_POSITIONAL for p in params)


# Parameters only a topk function takes: a function with any of them is never a validator.
_TOPK_PARAMETERS = ("axis", "k", "largest")


def _takes_a_descriptor(fn) -> bool:
    """True for a validator's signature: exactly one required positional parameter (the
    descriptor), no other required one, and none of the topk parameters."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.name in _TOPK_PARAMETERS for p in params):
        return False
    required = [p for p in params if p.default is inspect.Parameter.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return len(required) == 1 and required[0].kind != inspect.Parameter.KEYWORD_ONLY


def get_target(spec: str) -> Target:
    """The target `spec` names; raises TargetError (a ValueError) when it names none."""
    if isinstance(spec, Target):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise TargetError(f"a target name must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    if spec in BUILTIN_TARGETS:
        return BUILTIN_TARGETS[spec]()
    versioned = _versioned(spec) or _prefixed(spec)
    if versioned is not None:
        return versioned
    found = entry_points()
    if spec in found:
        try:
            obj = found[spec].load()
        except Exception as exc:
            raise TargetError(f"entry point {spec!r} ({found[spec].value}) failed to load: "
                              f"{type(exc).__name__}: {exc}") from exc
        return as_target(obj, name=spec)
    parts = import_parts(spec)
    if parts is not None:
        return as_target(named_object(spec), name=parts[1], origin=spec)
    raise TargetError(unknown_target(spec))


def unknown_target(spec: str) -> str:
    """The one line for a target name that names nothing: a file named without its attribute
    says to add it, a misspelled name gets the name it looks like."""
    if spec.endswith(".py") or os.path.isfile(spec):
        return (f"target {spec!r} names a file but not what to fuzz in it: give {spec}:function "
                "(a function, a Target class or a factory defined in that file)")
    import difflib

    close = difflib.get_close_matches(spec, known_names(), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"unknown target {spec!r}{hint}: known targets are {', '.join(known_names())}; "
            "or give package.module:attr or path/to/file.py:attr, or "
            + ", ".join(form for _, _, form, _ in PREFIXED_FORMS.values()))


def list_targets() -> list[Target]:
    """Every built-in target and every target registered under the entry-point group
    (one that fails to load is left out of the list; get_target reports why)."""
    targets = [make() for make in BUILTIN_TARGETS.values()]
    for name in sorted(set(entry_points()) - set(BUILTIN_TARGETS)):
        try:
            targets.append(get_target(name))
        except TargetError:
            continue
    return targets
