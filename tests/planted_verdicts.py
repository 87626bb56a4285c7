"""Targets with planted bugs for the verdicts: two independent bugs in one implementation, a
runtime that refuses a value type, adapters that break, a target that cannot express anything.
Named as targets by file path, like tests/planted_bugs.py (whose helpers they use)."""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from planted_bugs import _per_row, _ties_reversed  # noqa: E402

from topkspec.spec.reference import reference_topk  # noqa: E402
from topkspec.targets.base import Rejected  # noqa: E402
from topkspec.targets.runtimes.reference import ReferenceTarget  # noqa: E402

LONG_AXIS = 200


def ties_reversed_and_long_axis_kth(x, *, axis, k, largest=True):
    """Two independent bugs: tied values come out in descending index order; and on axes
    longer than LONG_AXIS the K-th value returned is the next one down (its index with it)."""
    def row_fn(rows, kk):
        values, indices = _ties_reversed(rows, kk, largest)
        if rows.shape[1] > LONG_AXIS and kk < rows.shape[1]:
            more_values, more_indices = _ties_reversed(rows, kk + 1, largest)
            values, indices = values.copy(), indices.copy()
            values[:, -1], indices[:, -1] = more_values[:, -1], more_indices[:, -1]
        return values, indices
    return _per_row(x, axis, k, row_fn)


def ties_reversed(x, *, axis, k, largest=True):
    """Tied values in descending index order, nothing else wrong."""
    return _per_row(x, axis, k, lambda rows, kk: _ties_reversed(rows, kk, largest))


def negates_integers(x, *, axis, k, largest=True):
    """Integer values come back negated (the indices are right)."""
    values, indices = reference_topk(x, axis=axis, k=k, largest=largest)
    if values.dtype.kind == "i":
        values = -values
    return values, indices


class _Probing(ReferenceTarget):
    """The reference, behind a supports() that probes as a runtime adapter does."""

    def __init__(self):
        self.name = type(self).__name__


class RefusesFloat16(_Probing):
    """A runtime without float16: its probe of a known-good float16 case is refused."""

    def supports(self, case):
        if case.dtype == "float16":
            raise Rejected("no kernel for float16 (planted)")
        return None


class ProbeBreaks(_Probing):
    """An adapter whose own probe code is broken for int8: an adapter error, not a refusal."""

    def supports(self, case):
        if case.dtype == "int8":
            return {}["no such key"]  # KeyError from the adapter's own code
        return None


class ExpressesNothing(_Probing):
    """An adapter that can express no case at all."""

    def supports(self, case):
        return "this adapter expresses no case (planted)"
