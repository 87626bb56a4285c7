"""The whole spec as one JSON-ready document (schema_version 2).

Schema 2 (from 1): `input_forms` says how each descriptor field may be written and what
"integer" means (forms.INPUT_FORMS); each finding carries its status at the descriptor's
version, which `documented_from` explains; each rule's `sources` are citations {doc, section, quote, [versions],
[note]} of public documents, and `documents` maps each document id to {title, url, family,
ops}; `dml_revisions` is keyed by revision (the newest table each has) with the document to
read it in. Every other field is as in schema 1.

The validator itself runs from this document (validate.Validator), so what the export holds is
all a validator in another language needs: the tables, the rules with their check kinds and
parameters, and the meaning of each check kind.
"""
from __future__ import annotations

SCHEMA_VERSION = 2

_STATUSES = {
    "documented": "the source text states it",
    "interpretation": "the text is ambiguous or silent and this spec chose; `reason` says why",
    "unspecified": "no guarantee; properties must not assume one",
}

_VALIDATION_PROCEDURE = [
    "Detect the family: an object with 'Type' is DirectML, one with 'op_type' is ONNX; anything else is malformed (an error, not a finding).",
    "Normalise each field as `input_forms` says: the spellings it accepts (trimmed, case-insensitive names, prefixes, aliases, enum values) become the one form the checks read; a value of no form is kept as written, and the rule its entry names reports it. Only an entry whose `malformed` is \"error\" (no object, no family, an unknown DirectML Type, a profile that names no version) stops the validation.",
    "Profile: a profile given by the caller overrides the descriptor's FeatureLevel/opset; DirectML without either uses the newest known level; ONNX needs an opset (without one, or with a malformed one, onnx.desc.fields is broken and, as every other ONNX rule requires it, nothing else is checked; likewise a malformed FeatureLevel and dml.desc.fields). A later DirectML level uses the newest support row at or below it; an ONNX opset resolves to the newest onnx_versions key at or below it.",
    "Go through `rules` in order. A rule applies when its scope is the descriptor's family, its ops include the operator ('TopK' for ONNX), and it is not strict_only (unless strict_doc) nor lenient_only (under strict_doc). An applicable rule is checked only when every rule in its `requires` held or did not apply; when one of them broke it is skipped, and when one was not checked it is not checked either. A checked rule whose check kind reports messages is violated.",
    "Unknown values: where a field is null (input_forms.terms.null), a check kind listed in input_forms.unknown_stops that needs it does not run; the rule goes into not_checked with the reason, and is neither held nor broken.",
    "Report every violated rule: {rule, message (the messages joined by '; '), source (all its sources in one line), status, citations}. status is the rule's status at the descriptor's version: an interpretation is documented at and after a profile in its documented_from of the same family (ONNX: TopK version >= the opset named; DirectML: feature level >= the level named), with no version known it is the rule's own status. citations are the rule's sources whose document (documents[doc]) is of the family, narrowed to those whose document's ops include the operator when any do, and for ONNX to those whose versions include the TopK version when any do.",
]

_DOCUMENTED_FROM = (
    "A rule's documented_from lists, for an interpretation that some spec versions state outright, the first "
    "profile of each family whose documents state it (['dml:1.0', 'onnx:11']): at that version and later ones of "
    "its family the rule's status is documented, and a finding says so in its own status. Empty: the status is "
    "the same at every version.")


def export() -> dict:
    # Loaded here, not with the module: `import topkspec.spec` loads this module for the name.
    from topkspec.spec import dtypes, tables
    import copy

    from topkspec.spec.checks import CHECK_KINDS, DML_DATA_TYPE_SIZES
    from topkspec.spec.forms import INPUT_FORMS
    from topkspec.spec.profiles import STANDARD_PROFILES
    from topkspec.spec.rules import RULE_LIST

    return {
        "schema_version": SCHEMA_VERSION,
        "name": "topkspec",
        "statuses": dict(_STATUSES),
        "documented_from": _DOCUMENTED_FROM,
        "input_forms": copy.deepcopy(INPUT_FORMS),
        "profiles": {
            "forms": ["dml:<feature level>, e.g. dml:3.1, dml:3_1, dml:0x3100",
                      "onnx:<opset>, e.g. onnx:11"],
            "standard": list(STANDARD_PROFILES),
        },
        "validation_procedure": list(_VALIDATION_PROCEDURE),
        "check_kinds": {kind: meaning for kind, (meaning, _fn) in CHECK_KINDS.items()},
        "tables": {
            "dml_operator_types": dict(tables.DML_OPERATOR_TYPES),
            "dml_axis_directions": dict(tables.DML_AXIS_DIRECTIONS),
            "dml_data_types": dict(tables.DML_DATA_TYPES),
            "dml_data_type_sizes": dict(DML_DATA_TYPE_SIZES),
            "dml_feature_levels": dict(tables.DML_FEATURE_LEVELS),
            "dml_support": {op: [dict(row) for row in rows] for op, rows in tables.DML_SUPPORT.items()},
            "dml_desc_fields": {op: list(f) for op, f in tables.DML_DESC_FIELDS.items()},
            "dml_tensor_fields": {k: list(v) for k, v in tables.DML_TENSOR_FIELDS.items()},
            "onnx_versions": {v: dict(entry) for v, entry in tables.ONNX_VERSIONS.items()},
            "onnx_type_strings": dict(dtypes.ONNX_TYPE_STRINGS),
        },
        "rules": [rule.to_dict() for rule in RULE_LIST],
        "documents": {doc: dict(entry) for doc, entry in tables.DOCUMENTS.items()},
        "dml_revisions": tables.DML_REVISIONS,
        "dml_revision_differences": tables.DML_REVISION_DIFFERENCES,
        "dml_worked_examples": tables.DML_WORKED_EXAMPLES,
        "reference": {
            "function": "topkspec.reference_topk(x, *, axis, k, largest) -> (values, int64 indices)",
            "nan_policy": "NaN counts as greater than every number: first when largest, last otherwise; NaNs tie with each other. Not a guarantee of the spec (rule out.nan.unspecified).",
        },
    }
