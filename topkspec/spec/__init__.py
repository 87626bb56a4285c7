"""The machine-readable TopK spec: rules, tables, profiles, the validator, the JSON forms,
and the ONNX-to-DirectML lowering. Standard library only at import time.

    from topkspec import spec
    spec.validate({"op_type": "TopK", "opset": 11, ...})   # -> [Finding(rule, message, source), ...]
    spec.export()                                          # the whole spec as JSON-ready data
"""
from topkspec.spec import tables
from topkspec.spec.case import Case
from topkspec.spec.descriptors import DescriptorError, case_from_descriptor, descriptor, normalise
from topkspec.spec.export import SCHEMA_VERSION, export
from topkspec.spec.lowering import Lowering, lower_onnx_to_dml
from topkspec.spec.profiles import STANDARD_PROFILES, Profile, ProfileError, parse_profile
from topkspec.spec.queries import index_types, ops, ranks, value_types
from topkspec.spec.rules import (
    DOCUMENTED, INTERPRETATION, RULE_LIST, RULES, UNSPECIFIED, Rule, rule,
)
from topkspec.spec.validate import Finding, Validator, is_valid, validate

__all__ = [
    "Case", "DescriptorError", "DOCUMENTED", "Finding", "INTERPRETATION", "Lowering", "Profile",
    "ProfileError", "RULES", "RULE_LIST", "Rule", "SCHEMA_VERSION", "STANDARD_PROFILES", "UNSPECIFIED",
    "Validator", "case_from_descriptor", "descriptor", "export", "index_types", "is_valid",
    "lower_onnx_to_dml", "normalise", "ops", "parse_profile", "ranks", "rule", "tables", "validate",
    "value_types",
]
