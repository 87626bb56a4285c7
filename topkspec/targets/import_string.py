"""What an import string names: `package.module:attr`, or `path/to/file.py:attr` (the file's
directory goes on sys.path first, so it can import the modules beside it). The registry makes
targets of it; a validator's repro reads it back. Nothing here knows what a target is."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from topkspec.errors import UsageError


class TargetError(UsageError):
    """A target name or import string that resolves to no target."""


def _attribute(module, attr: str, spec: str, where: str):
    """module.attr (a dotted attr too); `where` names the module as the user wrote it (a file
    path, not the name it was loaded under)."""
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(f"{spec!r}: {where} has no attribute {attr!r}") from None
    return obj


def _load_file(path: str, attr: str, spec: str):
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise TargetError(f"{spec!r}: no file {path}")
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)  # so the plug-in can import the modules beside it
    module_name = f"topkspec_plugin_{os.path.splitext(os.path.basename(path))[0]}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise TargetError(f"{spec!r}: importing {path} failed: {type(exc).__name__}: {exc}") from exc
    return _attribute(module, attr, spec, path)


def _load_module(module_name: str, attr: str, spec: str):
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetError(f"{spec!r}: cannot import {module_name}: {exc}{_import_hint(module_name, attr, exc)}") from exc
    return _attribute(module, attr, spec, module_name)


def _import_hint(module_name: str, attr: str, exc: ImportError) -> str:
    """What to do when the module itself is not found: the folder here that holds it goes on
    PYTHONPATH (a module beside the command is not importable by default)."""
    top = module_name.split(".")[0]
    if not isinstance(exc, ModuleNotFoundError) or exc.name != top:
        return ""
    if os.path.isfile(f"{top}.py") or os.path.isfile(os.path.join(top, "__init__.py")):
        path = f"./{module_name.replace('.', '/')}.py" if os.path.isfile(f"{top}.py") else None
        return (f" (it is in this folder, which is not on the import path: run with PYTHONPATH=."
                + (f", or give the file: {path}:{attr}" if path else "") + ")")
    return " (install it, or put the folder that holds it on PYTHONPATH)"


def import_parts(spec: str) -> tuple | None:
    """(where, attr, is a file path) of an import string, or None when `spec` is not one."""
    where, sep, attr = spec.rpartition(":")
    if sep and where and attr and not os.path.isabs(attr):
        return where, attr, where.endswith(".py") or os.sep in where or "/" in where
    return None


def named_object(spec: str):
    """The object an import string `package.module:attr` or `path/file.py:attr` names, as it
    is (not made a Target); raises TargetError when it names none."""
    parts = import_parts(spec.strip()) if isinstance(spec, str) else None
    if parts is None:
        raise TargetError(f"{spec!r} is not an import string: give package.module:attr or path/to/file.py:attr")
    where, attr, is_file = parts
    return (_load_file if is_file else _load_module)(where, attr, spec)
