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

from topkspec.targets.base import AdapterError, Target, user_error


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

    def __init__(self, fn: Callable, name: str | None = None, default_profile: str = "dml:5.0"):
        if not callable(fn):
            raise TypeError(f"ValidatorTarget needs a callable, got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or repr(fn)
        self.default_profile = default_profile

    @property
    def descriptor_rules(self) -> frozenset:
        """Every breakable rule: a validator is handed each broken descriptor as written."""
        return every_breakable_rule()

    def version(self) -> str:
        module = getattr(self.fn, "__module__", None) or "?"
        return f"validator {module}.{getattr(self.fn, '__qualname__', '?')}"

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
