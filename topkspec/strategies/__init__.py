"""Hypothesis strategies for TopK: valid cases, invalid descriptors, adversarial tensors.

    from topkspec.strategies import valid_cases, arrays_for, case_and_input, invalid_descriptors

`st.from_type(Case)` draws a valid case at any standard profile.

Imports the spec (and Hypothesis, numpy); nothing above it.
"""
from hypothesis import strategies as st

from topkspec.spec import Case
from topkspec.strategies.arguments import InvalidStrategyArgument
from topkspec.strategies.cases import (
    any_valid_case, axis_sizes, k_position, ks_for, plans_for, valid_cases,
)
from topkspec.strategies.inputs import case_and_input
from topkspec.strategies.invalid import BREAKERS, InvalidDraw, breakable_rules, invalid_descriptors
from topkspec.strategies.tensors import arrays_for, elements, special_values, tie_density

st.register_type_strategy(Case, st.deferred(any_valid_case))

__all__ = [
    "BREAKERS", "InvalidDraw", "InvalidStrategyArgument", "any_valid_case", "arrays_for", "axis_sizes",
    "breakable_rules", "case_and_input", "elements", "invalid_descriptors", "k_position", "ks_for", "plans_for",
    "special_values", "tie_density", "valid_cases",
]
