"""The TopK properties: plain functions that return None or raise topkspec.properties.failures.Violation
naming the spec rules they enforce, each held in one Property object (property.py).

- result checks, check_<name>(case, x, values, indices): check_result runs every one that
  applies (NaN-aware, sorted-aware) and raises the most specific violation;
- metamorphic checks, check_<name>(case, x, run) with run(case, x) -> (values, indices);
- self-consistency checks (self_consistency.py), check_self_<name>(case, x, run): relations
  between calls held where the contract leaves the answer open;
- acceptance checks: check_accepts_valid(case, run), check_rejects_invalid(draw, run).

CATALOGUE lists every Property: its rules, kind, whether it holds with NaN, its words and relation.

Imports the spec alone; nothing above it. Properties only check: how
a report lines up a relation is here, how repro.py replays it is in topkspec.repro.
"""
from topkspec.properties.acceptance import check_accepts_valid, check_rejects_invalid, may_refuse, plain_input
from topkspec.properties.catalogue import BY_NAME, CATALOGUE
from topkspec.properties.combined import check_result, matches_reference, result_checks, result_violations
from topkspec.properties.metamorphic import (
    check_axis_moves, check_deterministic, check_prefix, check_topk_equals_topk1,
)
from topkspec.properties.property import ACCEPTANCE, METAMORPHIC, RESULT, Property, Relation
from topkspec.properties.result import (
    check_dtypes, check_exact, check_gather, check_indices, check_nan_policy_free, check_order,
    check_select, check_shape, check_ties, check_unsorted_set, has_nan, reference_result,
)

__all__ = [
    "ACCEPTANCE", "BY_NAME", "CATALOGUE", "METAMORPHIC", "RESULT", "Property", "Relation",
    "check_accepts_valid", "check_axis_moves", "check_deterministic", "check_dtypes", "check_exact",
    "check_gather", "check_indices", "check_nan_policy_free", "check_order", "check_prefix",
    "check_rejects_invalid", "check_result", "check_select", "check_shape", "check_ties",
    "check_topk_equals_topk1", "check_unsorted_set", "has_nan", "matches_reference", "may_refuse",
    "plain_input", "reference_result", "result_checks", "result_violations",
]
