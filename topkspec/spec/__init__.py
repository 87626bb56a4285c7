"""The machine-readable TopK spec: rules, tables, profiles, the validator, the JSON forms,
and the ONNX-to-DirectML lowering. Standard library only at import time.

    from topkspec import spec
    spec.validate({"op_type": "TopK", "opset": 11, ...})   # -> [Finding(rule, message, source, status, citations), ...]
    spec.export()                                          # the whole spec as JSON-ready data

Importing the package loads only the validator and the export (whose names are also their
modules' names); every other name, and each submodule, loads on first use, so a tool that
imports the spec pays for what it uses (`topkspec.spec.speed` measures both).

The bottom room but for errors: it imports errors and the standard library, nothing else of topkspec.
"""
import importlib

from topkspec.spec.export import SCHEMA_VERSION, export
from topkspec.errors import UsageError
from topkspec.spec.validate import Finding, Validator, Verdict, is_valid, judge, validate

# name -> the submodule that defines it, loaded on first use
_LAZY = {
    "Case": "case",
    "Contract": "contracts", "Promise": "contracts", "POINTS": "contracts", "load_contract": "contracts",
    "onnx_contract": "contracts", "dml_contract": "contracts", "own_contract": "contracts",
    "DescriptorError": "descriptors", "case_from_descriptor": "descriptors", "descriptor": "descriptors",
    "INPUT_FORMS": "forms",
    "TopKNode": "onnx_reader", "read_model": "onnx_reader", "topk_nodes": "onnx_reader",
    "normalise": "descriptors",
    "Lowering": "lowering", "lower_onnx_to_dml": "lowering",
    "STANDARD_PROFILES": "profiles", "Profile": "profiles", "ProfileError": "profiles", "parse_profile": "profiles",
    "index_types": "queries", "ops": "queries", "ranks": "queries", "value_types": "queries",
    "DOCUMENTED": "rules", "INTERPRETATION": "rules", "RULE_LIST": "rules", "RULES": "rules",
    "UNSPECIFIED": "rules", "Rule": "rules", "rule": "rules",
}
_SUBMODULES = frozenset({
    "case", "checks", "citations", "contracts", "descriptors", "dtypes", "export", "forms", "lowering", "observations",
    "onnx_reader", "profiles", "queries", "reference", "rules", "speed", "tables", "validate",
})

__all__ = [
    "Case", "DescriptorError", "DOCUMENTED", "Finding", "INTERPRETATION", "Lowering", "Profile",
    "ProfileError", "RULES", "RULE_LIST", "Rule", "SCHEMA_VERSION", "STANDARD_PROFILES", "UNSPECIFIED",
    "INPUT_FORMS", "TopKNode", "UsageError", "Validator", "Verdict", "case_from_descriptor", "descriptor",
    "export", "index_types", "is_valid", "judge", "lower_onnx_to_dml", "normalise", "ops", "parse_profile",
    "ranks", "read_model", "rule", "tables", "topk_nodes", "validate", "value_types",
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
