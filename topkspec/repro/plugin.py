"""The repro writers of the targets a user names by import string: a plain function (or the
function a CallableTarget wraps), called as the run called it, and any other Target, run through
topkspec's adapter (`adapter`: also the writer of every target whose kind has none).

A program finds its target by a path relative to its own folder (no absolute path of the
machine that wrote it) and exits 2 with one line, `cannot run: ...`, when it cannot run: the
target is not where the run found it, it fails to import, or the program's own call of it
breaks (a signature that does not fit, an adapter's own error). Exit 2 says nothing of the bug.
All of a program's calls go through one loaded module and one target, as the run's did: a
failure that needs earlier calls in the same process replays them on the same state.
"""
from __future__ import annotations

import contextlib
import contextvars
import os

from topkspec.repro.writers import ReproWriter, RuntimeStack, operator_label, register_repro_writer

# A program finds its target's file by a path relative to its own folder: no absolute path of
# the machine that wrote it, and one line with exit code 2 when the file is not there.
_FIND = """import os


def _cannot_run(why):  # exit 2: the program cannot run here, which says nothing of the bug
    print(f"cannot run: {why}", file=sys.stderr)
    sys.exit(2)


"""
_PROGRAM_FOLDER: contextvars.ContextVar = contextvars.ContextVar("program_folder", default=None)


@contextlib.contextmanager
def program_folder(folder: str):
    """Programs written inside this block live in `folder`: paths in them are relative to it."""
    token = _PROGRAM_FOLDER.set(os.path.abspath(folder))
    try:
        yield
    finally:
        _PROGRAM_FOLDER.reset(token)


def _from_program(path: str) -> str:
    """`path` relative to the folder the program is written to (the working folder when unknown)."""
    return os.path.relpath(os.path.abspath(path), _PROGRAM_FOLDER.get() or os.getcwd())


def _is_file_path(where: str) -> bool:
    return where.endswith(".py") or "/" in where or os.sep in where


def _module_marker(module: str) -> tuple[str, int] | None:
    """(the file of `module`'s top package, relative to the program's folder, and how many
    levels above it lies the folder to import it from), or None when it is not found as a file."""
    import importlib.util

    top = module.split(".")[0]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None)
    if not origin or not os.path.isfile(origin):
        return None
    return _from_program(origin), 2 if os.path.basename(origin) == "__init__.py" else 1


def _file_lines(where: str) -> str:
    """Lines that set _FILE to the target's file, by its path relative to the program, or exit 2."""
    why = f"{os.path.basename(where)}, the file the run named, is not at {_from_program(where)} from this folder"
    return (f"_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), {_from_program(where)!r})\n"
            f"if not os.path.isfile(_FILE):\n"
            f"    _cannot_run({why!r})")


def _module_lines(module: str) -> str:
    """Lines that make `module` importable (from where the run found it) or exit 2 saying so."""
    marker = _module_marker(module)
    top = module.split(".")[0]
    need = f"{top} must be importable: install it, or put the folder that holds it on PYTHONPATH"
    if marker is None:
        return (f"if importlib.util.find_spec({top!r}) is None:\n"
                f"    _cannot_run({need!r})")
    relative, levels = marker
    return (f"if importlib.util.find_spec({top!r}) is None:  # then from where the run found it\n"
            f"    _WHERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), {relative!r})\n"
            f"    if not os.path.isfile(_WHERE):\n"
            f"        _cannot_run({need!r})\n"
            f"    sys.path.insert(0, {'os.path.dirname(' * levels}_WHERE{')' * levels})")


def located_spec(spec_text: str) -> tuple[str, str]:
    """(lines a program runs first, the expression of the target spec it then gives get_target):
    a file by its path relative to the program's folder, a module made importable from where the
    run found it; either exits 2 when that is not there."""
    where, sep, attr = (spec_text or "").rpartition(":")
    if not (sep and where and attr):
        return "", repr(spec_text)
    if _is_file_path(where):
        return f"{_FIND}{_file_lines(where)}\n", f"_FILE + {':' + attr!r}"
    return f"import importlib.util\n{_FIND}{_module_lines(where)}\n", repr(spec_text)


def function_loader(spec_text: str, note: str = "") -> tuple[str, str]:
    """(load lines, label) for the function an import string or file path names: lines that set
    `function`, or exit 2 with one line saying what must be importable."""
    where, _, attr = spec_text.rpartition(":")
    if _is_file_path(where):
        name = os.path.splitext(os.path.basename(where))[0]
        load = ("import importlib.util\nimport traceback\n" + _FIND + _file_lines(where) + "\n"
                "sys.path.insert(0, os.path.dirname(_FILE))  # it may import the modules beside it\n"
                "try:\n"
                f"    _spec = importlib.util.spec_from_file_location({name!r}, _FILE)\n"
                f"    module = sys.modules[{name!r}] = importlib.util.module_from_spec(_spec)\n"
                "    _spec.loader.exec_module(module)\n"
                f"    function = module.{attr}{note}\n"
                "except Exception as exc:  # the program cannot run without it: not the bug\n"
                f"    _cannot_run(f\"importing {os.path.basename(where)} failed: {{type(exc).__name__}}: {{exc}}\")")
        return load, f"{attr} ({os.path.basename(where)})"
    load = ("import importlib\nimport importlib.util\nimport traceback\n" + _FIND + _module_lines(where) + "\n"
            "try:\n"
            f"    function = importlib.import_module({where!r}).{attr}{note}\n"
            "except Exception as exc:  # the program cannot run without it: not the bug\n"
            f"    _cannot_run(f\"importing {where}:{attr} failed: {{type(exc).__name__}}: {{exc}}\")")
    return load, f"{where}:{attr}"


def _import_parts(spec_text) -> tuple[str, str] | None:
    where, sep, attr = (spec_text or "").rpartition(":") if isinstance(spec_text, str) else ("", "", "")
    return (where, attr) if sep and where and attr else None


def _top_level(fn) -> str | None:
    """The name `fn` has at the top of its module, when it has one (not a lambda, a method, a local)."""
    qualname = getattr(fn, "__qualname__", "")
    return qualname if qualname and "." not in qualname and "<" not in qualname else None


def _loaded_as(where: str) -> str:
    """The name a module is loaded under in a run: its path, or for a file topkspec's plug-in name."""
    return f"topkspec_plugin_{os.path.splitext(os.path.basename(where))[0]}" if _is_file_path(where) else where


def callable_load(target, spec_text) -> tuple[str, str]:
    """(load lines, label) for a plain function's target: lines that set `function` to the
    function the run called (a CallableTarget's wrapped function, not the target), or exit 2.
    The label is the name= a CallableTarget was given, else 'topk (file.py)' for the function
    the import string names."""
    fn, parts = getattr(target, "fn", None), _import_parts(spec_text)
    if parts and getattr(target, "origin", None) == spec_text:  # the import string names the function
        return function_loader(spec_text)
    name = getattr(target, "name", None) or str(spec_text)
    top = _top_level(fn)
    if parts:  # it names a CallableTarget (or a factory of one) made in the user's code
        where, attr = parts
        module = getattr(fn, "__module__", None) or ""
        if top and module == _loaded_as(where):
            return function_loader(f"{where}:{top}", f"  # the function {attr} wraps")[0], name
        if top and module and module != "__main__" and not module.startswith("topkspec_plugin_"):
            return function_loader(f"{module}:{top}", f"  # the function {attr} wraps")[0], name
        load = function_loader(spec_text)[0]
        return load + f"\nfunction = (function if hasattr(function, 'fn') else function()).fn  # what {attr} wraps", name
    import inspect

    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        path = None
    if path and top:  # a target passed as an object: its function by file and name
        return function_loader(f"{os.path.abspath(path)}:{top}")[0], name
    return unloadable(f"{name} cannot be imported by name (a local function or a lambda): name it by "
                      "import string to get a runnable program"), name


def unloadable(why: str) -> str:
    """Load lines for a function the program cannot import: it exits 2 saying why."""
    return f"{_FIND}_cannot_run({why!r})\nfunction = None"


def _runtime_version(target) -> dict:
    """{target name: its version()} when it says one (not a placeholder), for a report's stack."""
    try:
        version = str(target.version())
    except Exception:
        return {}
    if not version or version == "unknown" or version.startswith(("callable ", "validator ")):
        return {}
    return {getattr(target, "name", "target"): version}


def _callable_fill(target, case, spec_text) -> dict:
    from topkspec.spec.case import selects_largest

    load, _ = callable_load(target, spec_text or getattr(target, "name", None))
    return {"load": load, "largest": selects_largest(case),
            "axis_expr": "axis + x.ndim if -x.ndim <= axis < 0 else axis"}  # as the adapter (Case.lowered_axis)


def _callable_options(target, case, spec_text) -> dict:
    from topkspec.spec.case import selects_largest

    return {"largest": repr(selects_largest(case))}


def _callable_stack(target, case, spec_text=None) -> RuntimeStack:
    spec_text = spec_text or getattr(target, "name", None)
    _, label = callable_load(target, spec_text)
    return RuntimeStack(label, "", "", _runtime_version(target),
                        (f"{spec_text} called as function(x, axis=..., k=..., largest=...), sorted output expected",))


def _adapter_descriptor_fill(target, case, spec_text) -> dict:
    name = getattr(target, "name", spec_text)
    find, spec = located_spec(spec_text or name)
    return {"name": name, "find": find, "spec": spec}


def _adapter_fill(target, case, spec_text) -> dict:
    return {**_adapter_descriptor_fill(target, case, spec_text), "case": repr(case.to_dict())}


def _adapter_options(target, case, spec_text) -> dict:
    """A call of another case through the one target: the fields of its case (shape, K and the
    axis come with the call)."""
    return {key: repr(value) for key, value in case.to_dict().items() if key not in ("shape", "k", "axis")}


def _adapter_stack(target, case, _spec=None) -> RuntimeStack:
    from topkspec import __version__

    return RuntimeStack(getattr(target, "name", "target"), operator_label(case), "",
                        {**_runtime_version(target), "topkspec": __version__},
                        ("run through topkspec's adapter for it",))


register_repro_writer("callable", ReproWriter("callable.tmpl", "numpy and the function's own module",
                                              _callable_fill, _callable_stack, checks_index_type=False,
                                              call_options=_callable_options),
                      target_class="topkspec.targets.base.CallableTarget")
register_repro_writer("adapter", ReproWriter("adapter.tmpl", "numpy and topkspec (its adapter runs the target)",
                                             _adapter_fill, _adapter_stack,
                                             descriptor_template="adapter_descriptor.tmpl",
                                             descriptor_fill=_adapter_descriptor_fill,
                                             descriptor_needs="topkspec (its adapter asks the target)",
                                             call_options=_adapter_options))
