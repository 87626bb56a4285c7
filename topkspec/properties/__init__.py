"""The TopK properties: plain functions that return None or raise topkspec.properties.failures.Violation
naming the spec rules they enforce.

- result checks, check_<name>(case, x, values, indices): check_result runs every one that
  applies (NaN-aware, sorted-aware) and raises the most specific violation;
- metamorphic checks, check_<name>(case, x, run) with run(case, x) -> (values, indices);
- acceptance checks: check_accepts_valid(case, run), check_rejects_invalid(draw, run).

CATALOGUE lists them with their rules, kind and whether they hold with NaN.
"""
from topkspec.properties.acceptance import check_accepts_valid, check_rejects_invalid, may_refuse, plain_input
from topkspec.properties.catalogue import ACCEPTANCE, BY_NAME, CATALOGUE, METAMORPHIC, RESULT, Property
from topkspec.properties.metamorphic import (
    check_axis_moves, check_deterministic, check_prefix, check_topk_equals_topk1,
)
from topkspec.properties.result import (
    check_dtypes, check_exact, check_gather, check_indices, check_nan_policy_free, check_order,
    check_result, check_select, check_shape, check_ties, check_unsorted_set, has_nan, reference_result,
    result_checks, result_violations,
)

__all__ = [
    "ACCEPTANCE", "BY_NAME", "CATALOGUE", "METAMORPHIC", "RESULT", "Property",
    "check_accepts_valid", "check_axis_moves", "check_deterministic", "check_dtypes", "check_exact",
    "check_gather", "check_indices", "check_nan_policy_free", "check_order", "check_prefix",
    "check_rejects_invalid", "check_result", "check_select", "check_shape", "check_ties",
    "check_topk_equals_topk1", "check_unsorted_set", "has_nan", "may_refuse", "plain_input", "reference_result",
    "result_checks", "result_violations",
]
