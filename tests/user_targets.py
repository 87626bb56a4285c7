"""Targets as a user writes them, in every form `--target` takes besides a plain function: a
Target subclass and a validator function, each correct or with one planted bug. Named by file
path (`tests/user_targets.py:StrictTarget`), like tests/planted_bugs.py."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import planted_bugs  # noqa: E402

from topkspec import spec  # noqa: E402
from topkspec.targets.base import Rejected, Target, selects_largest  # noqa: E402


class StrictTarget(Target):
    """Correct, and refuses exactly what the case's profile forbids (every table of it): a
    runtime that validates as the spec does. It gets the axis as drawn, as every adapter must."""

    name = "strict"
    validates = True
    validates_tables = ("dml", "onnx")
    fn = staticmethod(planted_bugs.CORRECT)

    def run(self, case, x):
        found = spec.validate(spec.descriptor(case), case.profile)
        if found:
            raise Rejected("; ".join(sorted({f.rule for f in found})))
        values, indices = self.fn(x, axis=case.axis, k=case.k, largest=selects_largest(case))
        return values, indices.astype(case.index_dtype)


class WidensValues(StrictTarget):
    """StrictTarget with one bug: values widened to 64 bits."""

    name = "widens-values"
    fn = staticmethod(planted_bugs.widened_values)


class AcceptsKAboveN(StrictTarget):
    """StrictTarget with one bug: it never checks K against the axis size."""

    name = "accepts-k-above-n"

    def run(self, case, x):
        found = {f.rule for f in spec.validate(spec.descriptor(case), case.profile)} - {"dml.k.max", "onnx.k.max"}
        if found:
            raise Rejected("; ".join(sorted(found)))
        values, indices = planted_bugs.accepts_k_above_n(x, axis=case.axis, k=case.k, largest=selects_largest(case))
        return values, indices.astype(case.index_dtype)


def validates_like_the_spec(descriptor):
    """A correct validator: refuses what spec.validate finds broken."""
    found = spec.validate(descriptor)
    if found:
        raise ValueError("; ".join(sorted({f.rule for f in found})))


def accepts_k_zero(descriptor):
    """A validator with one bug: it forgets that K must be positive."""
    found = {f.rule for f in spec.validate(descriptor)} - {"dml.k.positive", "onnx.k.positive"}
    if found:
        raise ValueError("; ".join(sorted(found)))
