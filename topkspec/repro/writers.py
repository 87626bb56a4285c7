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
    imports. A writer without one leaves such failures to the adapter writer's.

    `call_options(target, case, target_spec)`: {keyword: Python expression} that make the
    template's `topk` run a call as a call of `case` runs (its template then takes them as
    keyword arguments, the main call's by default). A failure that needs earlier calls in its
    process then makes them all through the one `topk`, one runtime or target as in the run,
    each with the options where they differ from the main call's. A writer without it sets up
    `topk` anew for an earlier call whose template text differs (its runtime's state is the
    process's: a library loaded once)."""

    template: object
    needs: str
    fill: Callable
    stack: Callable
    takes_op: bool = False
    checks_index_type: bool = True
    descriptor_template: object = None
    descriptor_fill: Callable | None = None
    descriptor_needs: str = ""
    call_options: Callable | None = None


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
