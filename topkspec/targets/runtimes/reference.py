"""The `reference` target: the numpy oracle behind the Target interface.

It validates like a conforming implementation: a case the spec's validator finds broken
(any rule at the case's profile) is refused with `Rejected` naming the rules. Its native
profile is dml:5.0, the widest DirectML table; it runs ONNX profiles too.
"""
from __future__ import annotations

from topkspec.spec.reference import reference_topk
from topkspec.targets.base import Rejected, Target, as_index_type, selects_largest


class ReferenceTarget(Target):
    name = "reference"
    default_profile = "dml:5.0"
    validates = True
    validates_tables = ("dml", "onnx")

    def version(self) -> str:
        import numpy as np

        from topkspec import __version__

        return f"topkspec {__version__} (numpy {np.__version__})"

    def run(self, case, x):
        from topkspec import spec

        findings = spec.validate(case)
        if findings:
            rules = ", ".join(sorted({f.rule for f in findings}))
            raise Rejected(f"invalid at {case.profile} ({rules}): {findings[0].message}")
        try:
            values, indices = reference_topk(x, axis=case.axis, k=case.k, largest=selects_largest(case))
        except ValueError as exc:  # the oracle's own range checks
            raise Rejected(str(exc)) from exc
        return values, as_index_type(indices, case.index_dtype)
