"""One planted runtime in every form a user writes a target in: a plain function, a
CallableTarget, a Target subclass, each returning (values, indices) or, for a runtime whose
contract returns values only (planted_forms.toml, given with --contract), the values alone; a
validator as a plain function and as a ValidatorTarget; a Target whose bug needs an earlier call
on the same instance; a function that crashes on an axis out of range.

Each has its bug while TOPKSPEC_TEST_FIXED is unset, and is fixed when it is set: a report's
repro.py run with it set is run against the fixed runtime."""
import os

import numpy as np

from topkspec import spec
from topkspec.targets.base import CallableTarget, Rejected, Target, selects_largest
from topkspec.targets.validator import ValidatorTarget, every_breakable_rule


def _fixed() -> bool:
    return bool(os.environ.get("TOPKSPEC_TEST_FIXED"))


def _correct(x, axis, k, largest):
    if not 0 <= axis < x.ndim or not 0 < k <= x.shape[axis]:
        raise ValueError(f"axis {axis} or k={k} out of range for shape {list(x.shape)}")
    key = x.astype(np.float32) if x.dtype.name == "bfloat16" else x  # numpy puts NaN last for its own types only
    n = x.shape[axis]
    if largest:  # ties in index order: sort the reversed axis, read it backwards
        order = n - 1 - np.flip(np.argsort(np.flip(key, axis), axis=axis, kind="stable"), axis)
    else:
        order = np.argsort(key, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices


def topk(x, *, axis, k, largest):
    """The bug: the largest K when the smallest are asked for."""
    return _correct(x, axis, k, largest if _fixed() else True)


def values_topk(x, *, axis, k, largest):
    """Values only, in no order (as planted_forms.toml says); the bug: K above the axis size is
    clamped to it instead of refused."""
    if not _fixed() and 0 <= axis < x.ndim:
        k = min(k, x.shape[axis])
    values, _ = _correct(x, axis, k, largest)
    return np.flip(values, axis)


def values_wrong_end(x, *, axis, k, largest):
    """Values only, in no order; the bug: the smallest K, not the largest."""
    values, _ = _correct(x, axis, k, largest if _fixed() else not largest)
    return values


target = CallableTarget(topk, name="planted-fn", version="2.1-planted")
values_target = CallableTarget(values_topk, name="planted-values", version="2.1-planted")


class PlantedTarget(Target):
    name = "planted-class"
    validates = True
    function = staticmethod(topk)

    def version(self):
        return "1.0-planted"

    def run(self, case, x, flip=False):
        try:
            values, indices = self.function(x, axis=case.lowered_axis, k=case.k, largest=selects_largest(case) != flip)
        except ValueError as exc:
            raise Rejected(str(exc)) from exc
        return values, None if indices is None else indices.astype(case.index_dtype)


class ValuesTarget(PlantedTarget):
    name = "planted-class-values"
    function = staticmethod(lambda x, **how: (values_topk(x, **how), None))


class PoisonedTarget(PlantedTarget):
    """Right on every call by itself; but after a float16 call this instance (not the process:
    a fresh instance is right again) returns the wrong end."""

    name = "planted-stateful"
    function = staticmethod(_correct)

    def __init__(self):
        self.poisoned = False

    def run(self, case, x):
        flipped = self.poisoned and not _fixed()
        self.poisoned = self.poisoned or x.dtype == np.float16
        return super().run(case, x, flip=flipped)


def aborts_on_bad_axis(x, *, axis, k, largest):
    """The bug: an axis out of range kills the process instead of raising."""
    if not 0 <= axis < x.ndim and not _fixed():
        os.abort()
    return _correct(x, axis, k, largest)


def validate(descriptor):
    """A validator; the bug: it checks neither K, the axis nor the output shapes."""
    found = {f.rule for f in spec.validate(descriptor)}
    if not _fixed():
        found = {rule for rule in found if not any(part in rule for part in (".k.", ".axis.", ".shape."))}
    if found:
        raise ValueError("; ".join(sorted(found)))


validator = ValidatorTarget(validate, name="planted-validator")


class CheckingTarget(Target):
    """A validator as a Target subclass: it judges descriptors as written, with `validate`'s bug."""

    name = "planted-checking"
    computes = False
    validates = True
    validates_tables = ("dml", "onnx")

    @property
    def descriptor_rules(self):
        return every_breakable_rule()

    def version(self):
        return "1.0-planted"

    def check_descriptor(self, descriptor):
        try:
            validate(descriptor)
        except ValueError as exc:
            return {"accepted": False, "detail": str(exc)}
        return {"accepted": True, "detail": "accepted"}
