"""The `onnx-backend:MODULE` targets: any runtime that implements ONNX's Backend API, with no
adapter code.

ONNX's Backend API (`onnx.backend.base.Backend`) is how ONNX's own backend tests drive a
runtime: `prepare(model, device)` returns a BackendRep whose `run(inputs)` returns the outputs.
`onnxruntime.backend` is one; a runtime team's own is often a module or a Backend subclass.
`--target onnx-backend:MODULE` names it:

- `onnx-backend:package.module`: a module that is a backend itself (it has `prepare`, as
  `onnxruntime.backend` has), else the one Backend subclass or instance defined in it;
- `onnx-backend:path/to/file.py`: the same, in a file (loaded as import strings load one);
- either followed by `:ATTR` names the Backend class or instance in it.

It is driven as ONNX Runtime's adapter drives its sessions (a BackendRep stands where a session
does): one model per signature, prepared once on device "CPU" and run with K as a graph input
(an attribute at opset 1); each (opset, value type) probed once with a tiny call. A `prepare`
or `run` that raises is the runtime refusing the model or the call. It runs ONNX models, so it
is held to ONNX TopK's text (the importer contract): it refuses K and the axis out of range and
the value types the opset's T leaves out. Its default profile is the newest TopK opset whose
float32 model it prepares and runs.
"""
from __future__ import annotations

import importlib
import inspect
import os
import sys

import numpy as np

from topkspec.targets.import_string import TargetError, named_object
from topkspec.targets.onnx_builder import graph_detail, onnx_form, onnx_repro_fill
from topkspec.targets.runtimes import contracts as runtime_contracts
from topkspec.targets.runtimes.onnxruntime import OnnxRuntimeTarget
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions

from topkspec.repro.plugin import function_loader  # the lines that load a user's module in a repro

PREFIX = "onnx-backend:"
DEVICE = "CPU"  # the device ONNX's backend tests ask for first, and the one every backend has
FORM = "onnx-backend:MODULE, onnx-backend:path/to/file.py or either with :ATTR (a Backend class or instance)"


def split_spec(spec: str) -> tuple[str, str | None]:
    """(where, attr or None) of `onnx-backend:WHERE[:ATTR]`: WHERE a module or a .py file."""
    rest = spec[len(PREFIX):].strip()
    where, sep, attr = rest.rpartition(":")
    if sep and where and attr.isidentifier():
        return where, attr
    if not rest:
        raise TargetError(f"{spec!r} names no backend: give {FORM}")
    return rest, None


def _is_file(where: str) -> bool:
    return where.endswith(".py") or "/" in where or os.sep in where


def _named(where: str, attr: str, spec: str):
    """`where`'s attribute `attr` as import strings find it (targets.import_string), its errors
    worded for `spec`."""
    try:
        return named_object(f"{where}:{attr}")
    except TargetError as exc:
        raise TargetError(str(exc).replace(repr(f"{where}:{attr}"), repr(spec), 1).replace(":__name__", "")) \
            from exc.__cause__


def _module(where: str, spec: str):
    """The module `where` names: imported, or loaded from its file as import strings load one."""
    return sys.modules[_named(where, "__name__", spec)]


def _defined_backends(module) -> list[str]:
    """The names of the Backend subclasses and instances defined in `module` (not imported into it)."""
    from onnx.backend.base import Backend

    found = []
    for name, obj in vars(module).items():
        cls = obj if inspect.isclass(obj) else type(obj)
        if issubclass(cls, Backend) and cls is not Backend and cls.__module__ == module.__name__:
            found.append(name)
    return found


def find_backend(spec: str) -> tuple[object, str | None]:
    """(the backend `spec` names, the attribute of its module that holds it, or None when the
    module is the backend); TargetError when it names none."""
    where, attr = split_spec(spec)
    if attr is not None:
        backend = _named(where, attr, spec)
        if not callable(getattr(backend, "prepare", None)):
            raise TargetError(f"{spec!r}: {where}:{attr} has no prepare(model, device): not an ONNX backend")
        return backend, attr
    module = _module(where, spec)
    if callable(getattr(module, "prepare", None)):
        return module, None
    try:
        names = _defined_backends(module)
    except ImportError as exc:
        raise TargetError(f"{spec!r}: finding a Backend in {where} needs the onnx package: {exc}") from exc
    if len(names) == 1:
        return getattr(module, names[0]), names[0]
    what = f"defines {len(names)} Backend classes ({', '.join(names)})" if names else \
        "has no prepare(model, device) and defines no onnx.backend.base.Backend subclass"
    raise TargetError(f"{spec!r}: {where} {what}: give {PREFIX}{where}:ATTR")


def distributions(module_name: str) -> list[str]:
    """The installed distributions that provide `module_name`'s top package."""
    from importlib import metadata

    return metadata.packages_distributions().get(module_name.split(".")[0], [])


def module_version(module_name: str) -> str | None:
    """'onnxruntime 1.32.0': the distribution that provides `module_name`, else the version its
    module or top package states (`__version__`); None when none is found."""
    found = versions(*distributions(module_name))
    if found:
        return " ".join(next(iter(found.items())))
    for name in (module_name, module_name.split(".")[0]):
        version = getattr(sys.modules.get(name), "__version__", None)
        if version:
            return f"{name} {version}"
    return None


class _Prepared:
    """A BackendRep as the ONNX Runtime adapter uses a session: `run(None, feeds)`, inputs in the
    graph's order."""

    def __init__(self, rep):
        self.rep = rep

    def run(self, _names, feeds: dict):
        outputs = self.rep.run(list(feeds.values()))
        values, indices = outputs[:2]  # a graph's further outputs follow
        return np.asarray(values), np.asarray(indices)


class OnnxBackendTarget(OnnxRuntimeTarget):
    """A runtime behind ONNX's Backend API (see the module text)."""

    validates = True  # ONNX's text: K is "a single positive value", the axis in [-r, r-1]
    validates_tables = ("onnx",)  # a model whose X the opset's T leaves out is no valid model
    native = True
    index_dtype = "int64"

    def __init__(self, spec: str):
        backend, attr = find_backend(spec)
        where, _ = split_spec(spec)
        self.spec, self.where, self.attr, self.backend = spec, where, attr, backend
        label = os.path.basename(where) if _is_file(where) else where
        self.label = f"{label}:{attr}" if attr else label
        super().__init__(f"{PREFIX}{self.label}", DEVICE, f"{self.label}'s backend on device {DEVICE}")
        self._contract = runtime_contracts.onnx_importer(f"{self.label} (ONNX backend, ONNX TopK)")

    @property
    def contract(self):
        return self._contract

    def _module_name(self) -> str:
        backend = self.backend
        return backend.__name__ if inspect.ismodule(backend) else getattr(backend, "__module__", "") or ""

    def version(self) -> str:
        """'onnxruntime 1.32.0 (ONNX backend onnxruntime.backend on CPU)': the version of the
        distribution that provides the backend's module, else the one its module states."""
        found = None if _is_file(self.where) else module_version(self.where)
        if found is None:
            stated = getattr(sys.modules.get(self._module_name()), "__version__", None)
            found = f"{self.label} {stated}" if stated else f"{self.label}, no version found"
        return f"{found} (ONNX backend {self.label} on {DEVICE})"

    def available(self):
        try:
            supported = self.backend.supports_device(DEVICE) if hasattr(self.backend, "supports_device") else True
        except Exception as exc:  # the backend cannot answer: it cannot run here
            return False, f"{self.label}.supports_device({DEVICE!r}) raised {type(exc).__name__}: {exc}"
        if not supported:
            return False, f"{self.label}.supports_device({DEVICE!r}) is False"
        return True, ""

    def _new_session(self, model):
        """The backend's own call: prepare the model on the device (raising is refusing it)."""
        return _Prepared(self.backend.prepare(model, DEVICE))


def backend_target(spec: str) -> OnnxBackendTarget:
    return OnnxBackendTarget(spec)


# -- bug reports: repro.py in the Backend API -------------------------------------------------

def _prepare_spec(target) -> str:
    """The import string of the backend's `prepare`: MODULE:prepare or MODULE:ATTR.prepare."""
    return f"{target.where}:{target.attr + '.' if target.attr else ''}prepare"


def _repro_fill(target, case, _spec) -> dict:
    load, _ = function_loader(_prepare_spec(target))
    return {**onnx_repro_fill(target, case), "load": load, "device": DEVICE, "label": target.label,
            "prepare": f"{target.label}.prepare"}


def _repro_stack(target, case, _spec=None) -> RuntimeStack:
    form = onnx_form(case)
    k_how = "K as the node's attribute" if form.opset < 10 else "K as a graph input"
    found = {} if _is_file(target.where) else versions(*distributions(target.where))
    return RuntimeStack(f"{target.label} (ONNX backend)", f"TopK-{form.opset}", DEVICE, {**found, **versions("onnx")},
                        (f"{target.label}.prepare(model, {DEVICE!r}) once per model, then BackendRep.run(inputs)",
                         f"one TopK-{form.opset} node, symbolic input dimensions, {k_how}", *graph_detail(case)))


register_repro_writer("onnx-backend", ReproWriter("onnx_backend.tmpl", "numpy, onnx and the backend's module",
                                                  _repro_fill, _repro_stack), target_class=OnnxBackendTarget)
