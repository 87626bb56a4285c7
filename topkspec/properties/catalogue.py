"""Every property: its function, the rules it enforces, its kind, and whether it holds with NaN."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from topkspec.properties import acceptance, metamorphic, result

RESULT = "result"  # check(case, x, values, indices)
METAMORPHIC = "metamorphic"  # check(case, x, run)
ACCEPTANCE = "acceptance"  # check_accepts_valid(case, run, x=None), check_rejects_invalid(draw, run, x=None)


@dataclass(frozen=True)
class Property:
    name: str
    check: Callable
    rules: tuple
    kind: str
    with_nan: bool  # True: it holds (and is checked) when the input has NaN

    def to_dict(self) -> dict:
        return {"name": self.name, "rules": list(self.rules), "kind": self.kind, "with_nan": self.with_nan}


CATALOGUE = (
    Property("shape", result.check_shape, ("out.shape",), RESULT, True),
    Property("dtypes", result.check_dtypes, ("out.dtype.values", "out.dtype.indices"), RESULT, True),
    Property("indices", result.check_indices, ("out.indices.range_distinct", "out.indices.base"), RESULT, True),
    Property("gather", result.check_gather, ("out.values.gather", "out.indices.base"), RESULT, True),
    Property("select", result.check_select, ("out.values.select",), RESULT, False),
    Property("order", result.check_order, ("out.order",), RESULT, False),
    Property("ties", result.check_ties, ("out.ties.index_order", "out.ties.kth_place", "out.ties.signed_zero"), RESULT, False),
    Property("exact", result.check_exact, ("out.exact",), RESULT, False),
    Property("unsorted_set", result.check_unsorted_set, ("out.unsorted.set",), RESULT, False),
    Property("nan_policy_free", result.check_nan_policy_free,
             ("out.nan.unspecified", "out.indices.range_distinct", "out.values.gather"), RESULT, True),
    Property("prefix", metamorphic.check_prefix, ("out.prefix",), METAMORPHIC, True),
    Property("axis_moves", metamorphic.check_axis_moves, ("out.axis_moves",), METAMORPHIC, True),
    Property("topk_equals_topk1", metamorphic.check_topk_equals_topk1, ("out.topk_equals_topk1",),
             METAMORPHIC, True),
    Property("deterministic", metamorphic.check_deterministic, ("out.deterministic",), METAMORPHIC, True),
    Property("accepts_valid", acceptance.check_accepts_valid, ("out.valid_accepted",), ACCEPTANCE, True),
    Property("rejects_invalid", acceptance.check_rejects_invalid, ("out.invalid_rejected",), ACCEPTANCE, True),
)

BY_NAME = {prop.name: prop for prop in CATALOGUE}
