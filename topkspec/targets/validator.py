"""A user's own descriptor validator as a target: it judges descriptors, it computes nothing.

    def validate(descriptor: dict) -> None:   # raises to refuse the descriptor
        ...

    topkspec fuzz --target ./my_checks.py:validate

A run hands it valid descriptors, which it must accept, and descriptors that break each rule
the spec can break, which it must refuse (see topkspec.fuzz.validator_groups).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

from topkspec.targets.base import AdapterError, Target, function_origin, user_error
from topkspec.targets.import_string import named_object
from topkspec.repro.plugin import function_loader, unloadable
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer


@lru_cache(maxsize=None)
def every_breakable_rule() -> frozenset:
    """The ids of every descriptor rule some standard profile's invalid descriptors break."""
    from topkspec.spec.profiles import STANDARD_PROFILES
    from topkspec.strategies import breakable_rules

    return frozenset(rule for profile in STANDARD_PROFILES for rule in breakable_rules(profile))


class ValidatorTarget(Target):
    """Wraps a plain `validate(descriptor: dict) -> None` function that raises to refuse.

    `descriptor` is the JSON form `spec.validate` and `topkspec validate` read, as a dict: a
    DirectML one mirrors DML_OPERATOR_DESC,
    `{"Type": "DML_OPERATOR_TOP_K1", "FeatureLevel": "DML_FEATURE_LEVEL_3_1", "Desc":
    {"InputTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [1, 1, 3, 4]},
    "OutputValueTensor": {...}, "OutputIndexTensor": {...}, "Axis": 3, "K": 2,
    "AxisDirection": "DML_AXIS_DIRECTION_DECREASING"}}` (tensors may also carry `Strides`,
    `TotalTensorSizeInBytes`, `GuaranteedBaseOffsetAlignment`; TOP_K has no AxisDirection);
    an ONNX one is a node, `{"op_type": "TopK", "opset": 11, "X": {"dtype": "float32",
    "shape": [3, 4]}, "k": 2, "attributes": {"axis": -1, "largest": 1, "sorted": 1}}`. Broken
    descriptors may lack a field, hold a value of the wrong kind or name an unknown type.

    The function accepts a descriptor by returning (whatever it returns) and refuses it by
    raising: `Rejected`, ValueError, anything. Except that NameError, AttributeError and
    TypeError raised by its own code or by the call are bugs in it (see base.user_error):
    they are adapter errors, never a refusal. It runs in this process.
    """

    computes = False
    validates = True
    validates_tables = ("dml", "onnx")  # a validator is held to every table it is shown
    native = False

    def __init__(self, fn: Callable, name: str | None = None, default_profile: str = "dml:5.0",
                 origin: str | None = None):
        if not callable(fn):
            raise TypeError(f"ValidatorTarget needs a callable, got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or repr(fn)
        self.default_profile = default_profile
        self.origin = origin  # the import string that named it (see base.function_origin)

    @property
    def descriptor_rules(self) -> frozenset:
        """Every breakable rule: a validator is handed each broken descriptor as written."""
        return every_breakable_rule()

    def version(self) -> str:
        return f"validator {function_origin(self.fn, self.origin)}"

    def check_descriptor(self, descriptor: dict) -> dict:
        """{"accepted": True, "detail": "returned None"} when the function returns; {"accepted":
        False, "detail": "<ExcType>: <message>"} when it raises for the descriptor. Raises
        AdapterError when what it raised is a bug of its own."""
        try:
            returned = self.fn(descriptor)
        except Exception as exc:
            judged = user_error(self.fn, self.name, exc, caller=__file__)
            if isinstance(judged, AdapterError):
                raise judged from exc
            return {"accepted": False, "detail": f"{type(exc).__name__}: {exc}"}
        shown = repr(returned)
        return {"accepted": True, "detail": f"returned {shown if len(shown) <= 60 else shown[:57] + '...'}"}

    def run(self, case, x):
        raise AdapterError("a validator computes no results")


# -- bug reports: a validator makes no calls, so its every failure replays as a descriptor -----

def _repro_load(target, spec_text) -> tuple[str, str]:
    """(load lines, label) for a validator's function: by the import string the run was given,
    else by the file and name that define the function (a target passed as an object)."""
    import inspect
    import os

    if spec_text and ":" in spec_text:
        load, label = function_loader(spec_text)
        try:
            wraps = isinstance(named_object(spec_text), Target)
        except Exception:
            wraps = False
        if wraps:  # the name is a ValidatorTarget made in the user's code: call what it wraps, named as it is
            load += "\nfunction = function.fn  # the function the ValidatorTarget wraps"
            label = getattr(target, "name", None) or label
        return load, label
    fn = getattr(target, "fn", None)
    qualname = getattr(fn, "__qualname__", "")
    try:
        path = inspect.getfile(fn)
    except TypeError:
        path = None
    if path and qualname and "<" not in qualname:
        return function_loader(f"{os.path.abspath(path)}:{qualname}")
    name = spec_text or getattr(target, "name", "validator")
    return unloadable(f"{name} cannot be imported by name (a local function or a lambda): name it by import "
                      "string to get a runnable program"), name


def _repro_fill(target, case, spec_text) -> dict:
    return {"load": _repro_load(target, spec_text)[0]}


def _repro_stack(target, case, spec_text=None) -> RuntimeStack:
    _, label = _repro_load(target, spec_text)
    return RuntimeStack(label, "", "", {}, (f"{label} called as function(descriptor) with the descriptor's JSON "
                                            "form as a dict: it returns to accept it and raises to refuse it",))


register_repro_writer("validator", ReproWriter("validator.tmpl", "the function's own module", _repro_fill,
                                               _repro_stack, checks_index_type=False,
                                               descriptor_template="validator.tmpl", descriptor_fill=_repro_fill,
                                               descriptor_needs="the function's own module"),
                      target_class=ValidatorTarget)
