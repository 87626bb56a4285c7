"""The hook through which a target says how its bug reports replay a failure: repro.py in the
runtime's own API, and the stack (runtime, operator, device, versions) the report names.

A writer pairs a template (the runtime part of repro.py: its imports and a
`topk(x, k, axis)` that calls the runtime as the adapter does) with the values that fill it
and a description of the stack. A target module registers its writer once, at import:

    register_repro_writer("mykind", ReproWriter(template="mykind.tmpl", needs="numpy and mylib",
                          fill=fill, stack=stack), target_class=MyTarget)

A template named without a folder is read from `templates/` beside this module; a path or a
`importlib.resources` Traversable names one of the target's own. A target's kind is its
`repro_kind` attribute, else the first registered class in its MRO. A target with no writer
gets the `adapter` one: a repro that runs it through topkspec.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Callable

from topkspec.spec.profiles import parse_profile

TEMPLATES = Path(__file__).resolve().parent / "templates" / "runtime"


@dataclass(frozen=True)
class RuntimeStack:
    """What ran: '<runtime> <operator> (<device>)' in a report's title, versions and details below."""

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
    """How one kind of target replays a failure.

    - template: a file name under topkspec/repro/templates/runtime/, a path or Traversable of the
      target's own, or a function of the case returning one;
    - fill(target, case, target_spec): the template's values;
    - stack(target, case, target_spec): the RuntimeStack a report names;
    - needs: what the program imports, for its docstring.

    The template defines `topk(x, k, axis)` returning numpy (values, indices), or, with
    `takes_op`, `topk(x, k, axis, op="TOP_K1")` so a repro can compare DML_TOP_K with DML_TOP_K1.
    `checks_index_type`: the program holds the indices to the target's index type (or the
    case's); off for plain functions, whose indices the suite converts.

    A failure judged on a descriptor as written (`Target.check_descriptor`: a validator, or a
    broken descriptor no Case carries) replays through `descriptor_template`, a template that
    defines `validate(descriptor)`, which returns when the target accepts the descriptor and
    raises when it refuses it; `descriptor_fill` fills it and `descriptor_needs` says what it
    imports. A writer without one leaves such failures to the adapter writer's."""

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
_KIND_BY_CLASS: dict[str, str] = {}


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
    """The kind of a target: its `repro_kind`, else the first registered class in its MRO."""
    kind = target.repro_kind
    if kind:
        return kind
    for cls in type(target).__mro__:
        if _class_key(cls) in _KIND_BY_CLASS:
            return _KIND_BY_CLASS[_class_key(cls)]
    return None


def writer_for(target) -> ReproWriter:
    """The writer for a target (the adapter writer when its kind has none)."""
    return _WRITERS.get(kind_of(target) if target is not None else None) or _WRITERS["adapter"]


def adapter_writer() -> ReproWriter:
    """The writer whose program runs a target through topkspec's adapter: the one that replays
    an adapter error, whatever the target's kind (the runtime's own API cannot show it)."""
    return _WRITERS["adapter"]


def descriptor_writer_for(target) -> ReproWriter:
    """The writer that replays a descriptor judged as written: the target kind's own when it
    has a descriptor template, else the adapter writer."""
    writer = writer_for(target)
    return writer if writer.descriptor_template is not None else _WRITERS["adapter"]


def read_template(template) -> str:
    """A template's text: a name under templates/ beside this module, or a path or Traversable."""
    if isinstance(template, str) and "/" not in template and "\\" not in template:
        return (TEMPLATES / template).read_text(encoding="utf-8")
    if hasattr(template, "read_text"):
        return template.read_text()
    with open(template, encoding="utf-8") as handle:
        return handle.read()


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


# -- the writers of targets named by an import string: a plain function, or any Target ------

# A program finds its target's file by a path relative to its own folder: no absolute path of
# the machine that wrote it, and one line with exit code 2 when the file is not there.
_FIND = """import os


def _cannot_run(why):  # exit 2: the program cannot run here, which says nothing of the bug
    print(f"cannot run: {why}", file=sys.stderr)
    sys.exit(2)


_HERE = os.path.dirname(os.path.abspath(__file__))
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
    return (f"_FILE = os.path.join(_HERE, {_from_program(where)!r})\n"
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
            f"    _WHERE = os.path.join(_HERE, {relative!r})\n"
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
        return f"{_FIND}\n\n{_file_lines(where)}\n", f"_FILE + {':' + attr!r}"
    return f"import importlib.util\n{_FIND}\n\n{_module_lines(where)}\n", repr(spec_text)


def function_loader(spec_text: str) -> tuple[str, str]:
    """(load lines, label) for the function an import string or file path names: lines that set
    `function`, or exit 2 with one line saying what must be importable."""
    where, _, attr = spec_text.rpartition(":")
    if _is_file_path(where):
        name = os.path.splitext(os.path.basename(where))[0]
        load = ("import importlib.util\n" + _FIND + "\n\n" + _file_lines(where) + "\n"
                "sys.path.insert(0, os.path.dirname(_FILE))  # it may import the modules beside it\n"
                "try:\n"
                f"    if {name!r} not in sys.modules:  # loaded once: every call shares its state\n"
                f"        _spec = importlib.util.spec_from_file_location({name!r}, _FILE)\n"
                f"        sys.modules[{name!r}] = importlib.util.module_from_spec(_spec)\n"
                f"        _spec.loader.exec_module(sys.modules[{name!r}])\n"
                f"    module = sys.modules[{name!r}]\n"
                f"    function = module.{attr}\n"
                "except Exception as exc:  # the program cannot run without it: not the bug\n"
                f"    _cannot_run(f\"importing {os.path.basename(where)} failed: {{type(exc).__name__}}: {{exc}}\")")
        return load, f"{attr} ({os.path.basename(where)})"
    load = ("import importlib\nimport importlib.util\n" + _FIND + "\n\n" + _module_lines(where) + "\n"
            "try:\n"
            f"    function = importlib.import_module({where!r}).{attr}\n"
            "except Exception as exc:  # the program cannot run without it: not the bug\n"
            f"    _cannot_run(f\"importing {where}:{attr} failed: {{type(exc).__name__}}: {{exc}}\")")
    return load, f"{where}:{attr}"


def _callable_fill(target, case, spec_text) -> dict:
    from topkspec.spec.case import selects_largest

    load, _ = function_loader(spec_text or target.name)
    return {"load": load, "largest": selects_largest(case),
            "axis_expr": "axis + x.ndim if -x.ndim <= axis < 0 else axis"}  # as the adapter (Case.lowered_axis)


def _callable_stack(target, case, spec_text=None) -> RuntimeStack:
    _, label = function_loader(spec_text or target.name)
    return RuntimeStack(label, "", "", {}, (f"{spec_text or target.name} called as function(x, axis=..., k=..., "
                                            "largest=...), sorted output expected",))


def _adapter_descriptor_fill(target, case, spec_text) -> dict:
    name = getattr(target, "name", spec_text)
    find, spec = located_spec(spec_text or name)
    return {"name": name, "find": find, "spec": spec}


def _adapter_fill(target, case, spec_text) -> dict:
    return {**_adapter_descriptor_fill(target, case, spec_text), "case": repr(case.to_dict())}


def _adapter_stack(target, case, _spec=None) -> RuntimeStack:
    from topkspec import __version__

    return RuntimeStack(getattr(target, "name", "target"), operator_label(case), "", {"topkspec": __version__},
                        ("run through topkspec's adapter for it",))


register_repro_writer("callable", ReproWriter("callable.tmpl", "numpy and the function's own module",
                                              _callable_fill, _callable_stack, checks_index_type=False),
                      target_class="topkspec.targets.base.CallableTarget")
register_repro_writer("adapter", ReproWriter("adapter.tmpl", "numpy and topkspec (its adapter runs the target)",
                                             _adapter_fill, _adapter_stack,
                                             descriptor_template="adapter_descriptor.tmpl",
                                             descriptor_fill=_adapter_descriptor_fill,
                                             descriptor_needs="topkspec (its adapter asks the target)"))
