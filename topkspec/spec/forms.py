"""How each descriptor field may be written, as data (the export's `input_forms`) and as the
reading functions the normaliser uses, so that the two cannot drift apart.

The words that matter, defined once in INPUT_FORMS["terms"]: an *integer* is a JSON number
written without a fraction or an exponent (Python's json reads those as int, everything else
as float: 2.0 is no integer, and neither is true); *trimmed* drops JSON whitespace (space,
tab, line feed, carriage return) at both ends and nothing else; *case-insensitive* compares
ASCII letters only (a name with any other character matches nothing); *digits* are 0-9.
"""
from __future__ import annotations

from topkspec.spec.dtypes import ALIASES as DTYPE_ALIASES, ALL_VALUE_TYPES
from topkspec.spec.tables import DML_AXIS_DIRECTIONS, DML_DATA_TYPES, DML_FEATURE_LEVELS, DML_OPERATOR_TYPES

TRIM = " \t\n\r"
NEWEST_LEVEL = max(DML_FEATURE_LEVELS, key=DML_FEATURE_LEVELS.get)
_HEX = frozenset("0123456789abcdef")


def is_integer(value) -> bool:
    """An integer as INPUT_FORMS means it: a JSON number without fraction or exponent."""
    return type(value) is int


def ascii_digits(text: str) -> bool:
    """True for a non-empty string of the ASCII digits 0-9 only (no sign, no other script)."""
    return text.isascii() and text.isdigit()


def _ascii_name(value, prefix: str):
    """The upper-case name a string spells: trimmed, ASCII only, `prefix` dropped (any case)."""
    if type(value) is not str:
        return None
    text = value.strip(TRIM)
    if not text.isascii():
        return None
    text = text.upper()
    return text[len(prefix):] if text.startswith(prefix) else text


# The usual spellings, looked up before the general rules (same answers, without string work).
_OP_SPELLINGS = {s: name for name in DML_OPERATOR_TYPES for s in (name, "DML_OPERATOR_" + name)}
_DATA_TYPE_SPELLINGS = {s: name for name in DML_DATA_TYPES for s in (name, "DML_TENSOR_DATA_TYPE_" + name)}
_DIRECTION_SPELLINGS = {s: value for name, value in DML_AXIS_DIRECTIONS.items()
                        for s in (name, "DML_AXIS_DIRECTION_" + name)}
_LEVELS_READ: dict = {}  # FeatureLevel strings already read (a bounded number)


def _named(value, spellings: dict, table: dict, prefix: str, otherwise):
    """The name in `table` that `value` spells (a usual spelling, the number, or the name in any
    case with `prefix` optional), else `otherwise`."""
    if type(value) is str and value in spellings:
        return spellings[value]
    if type(value) is int:
        return next((name for name, v in table.items() if v == value), otherwise)
    name = _ascii_name(value, prefix)
    return name if name in table else otherwise


def dml_operator(value):
    """"TOP_K1" for DML_OPERATOR_TOP_K1, top_k1 or 112; None for anything else."""
    return _named(value, _OP_SPELLINGS, DML_OPERATOR_TYPES, "DML_OPERATOR_", None)


def dml_data_type(value):
    """"FLOAT32" for DML_TENSOR_DATA_TYPE_FLOAT32, float32 or 1; other values unchanged."""
    return _named(value, _DATA_TYPE_SPELLINGS, DML_DATA_TYPES, "DML_TENSOR_DATA_TYPE_", value)


def dml_direction(value):
    """0 or 1 for the names of DML_AXIS_DIRECTION (any case, prefix optional); other values unchanged."""
    if type(value) is str and value in _DIRECTION_SPELLINGS:
        return _DIRECTION_SPELLINGS[value]
    name = _ascii_name(value, "DML_AXIS_DIRECTION_")
    return DML_AXIS_DIRECTIONS[name] if name in DML_AXIS_DIRECTIONS else value


def feature_level(value):
    """The feature level value (0x3100) a FeatureLevel names, or None when it names none: a
    string "3_1", "3.1", "0x3100" (prefix DML_FEATURE_LEVEL_ optional), or an integer value."""
    if type(value) is str:
        if value not in _LEVELS_READ:
            if len(_LEVELS_READ) >= 1024:
                _LEVELS_READ.clear()
            _LEVELS_READ[value] = _feature_level(value)
        return _LEVELS_READ[value]
    return _feature_level(value)


def _feature_level(value):
    if type(value) is int:
        level = value
    else:
        if type(value) is not str or not value.isascii():
            return None
        text = value.strip(TRIM)
        if text[:len("DML_FEATURE_LEVEL_")].upper() == "DML_FEATURE_LEVEL_":
            text = text[len("DML_FEATURE_LEVEL_"):]
        if len(text) >= 3 and text[-2] in "._" and ascii_digits(text[-1]) and ascii_digits(text[:-2]):
            level = (int(text[:-2]) << 12) | (int(text[-1]) << 8)
        elif len(text) > 2 and text[:2] == "0x" and _HEX.issuperset(text[2:].lower()):
            level = int(text[2:], 16)
        else:
            return None
    if level < DML_FEATURE_LEVELS["1_0"] or level & 0xFF or level >> 12 > 15:
        return None
    return level


def level_name(level: int) -> str:
    return f"{level >> 12}_{(level >> 8) & 0xF}"


def opset(value):
    """The opset a descriptor's "opset" gives, or None: only an integer of at least 1."""
    return value if type(value) is int and value >= 1 else None


def onnx_dtype(value):
    """The canonical name (float32) an ONNX dtype spells; other values unchanged."""
    if type(value) is not str:
        return value
    text = value.strip(TRIM)
    if not text.isascii():
        return value
    text = text.lower()
    if text.startswith("tensor(") and text.endswith(")"):
        text = text[len("tensor("):-1]
    if text.startswith("dml_tensor_data_type_"):
        text = text[len("dml_tensor_data_type_"):]
    text = DTYPE_ALIASES.get(text, text)
    return text if text in ALL_VALUE_TYPES else value


_TERMS = {
    "integer": "A JSON number written without a fraction or an exponent: 2 and -1 are integers; 2.0, 2e0, "
               "true and \"2\" are not (a reader must keep that difference: a parser that reads 2.0 as 2 "
               "loses it). Wherever a field below says integer, this is what it means.",
    "trimmed": "Leading and trailing JSON whitespace (space, tab, line feed, carriage return) is dropped; "
               "no other character is.",
    "case-insensitive": "ASCII letters match without regard to case; a string holding any non-ASCII "
                        "character matches no name.",
    "digits": "The ASCII digits 0-9 only: a digit of another script (Arabic-Indic, full-width, "
              "superscript) is never part of a number, and a sign is never accepted.",
    "null": "Where a field below allows null, null means unknown (a model can leave a dimension or K "
            "open). A rule whose check needs an unknown value is not checked: it is listed with its reason "
            "in the verdict's not_checked, never reported broken; the rules that require it are not checked "
            "either.",
    "malformed": "A value of a field that is not one of its forms is a finding under the rule named in "
                 "`malformed` (every other rule of the family requires that rule, so nothing else is judged), "
                 "except where `malformed` is \"error\": then the input is no descriptor of TopK at all and the "
                 "validator raises (DescriptorError, ProfileError; the command line: one line, exit 2).",
}

_NAME = {"trimmed": True, "case-insensitive": True}

# Each field: path, family, required, forms (what it accepts), becomes (what the checks read),
# malformed (the rule a value of no form breaks, or "error"), unrecognised (the rule a string or
# integer of the right type that names nothing breaks), and default where it has one.
_FIELDS = [
    {"field": "(the descriptor)", "family": "both", "required": True,
     "forms": [{"type": "object", "note": "with a \"Type\" key it is DirectML; else with an \"op_type\" key it is "
                                          "ONNX"}],
     "malformed": "error"},
    {"field": "Type", "family": "dml", "required": True,
     "forms": [{"type": "string", **_NAME, "optional_prefix": "DML_OPERATOR_", "names": "dml_operator_types"},
               {"type": "integer", "values": "dml_operator_types"}],
     "becomes": "the short name (TOP_K1)", "malformed": "error", "unrecognised": "error"},
    {"field": "FeatureLevel", "family": "dml", "required": False, "default": NEWEST_LEVEL,
     "forms": [{"type": "string", **_NAME, "optional_prefix": "DML_FEATURE_LEVEL_",
                "patterns": ["<digits>_<digit>", "<digits>.<digit>", "0x<hex digits>"],
                "note": "the prefix in any case; the rest as the patterns show (a lower-case x, hex digits in either case)"},
               {"type": "integer", "note": "the level's value: 12544 (0x3100) for 3_1"}],
     "values": "a level is its major number times 4096 plus its minor times 256: at least 1_0 (4096), major "
               "at most 15; a level after the newest known one is judged by the newest table row at or below it",
     "becomes": "<major>_<minor> (3_1)", "malformed": "dml.desc.fields", "unrecognised": "dml.desc.fields",
     "note": "A JSON number such as 3.1 is not a form (3.1 and 3.10 would be one number). A profile given by the "
             "caller replaces it (the command line's --spec refuses a descriptor whose own FeatureLevel names "
             "another level, with exit 2)."},
    {"field": "Desc", "family": "dml", "required": True, "forms": [{"type": "object"}],
     "note": "its members are dml_desc_fields[Type], no more and no fewer", "malformed": "dml.desc.fields"},
    {"field": "Desc.InputTensor, Desc.OutputValueTensor, Desc.OutputIndexTensor", "family": "dml",
     "required": True, "forms": [{"type": "object"}],
     "note": "fields dml_tensor_fields.required, and any of dml_tensor_fields.optional", "malformed": "dml.desc.fields"},
    {"field": "Desc.<tensor>.DataType", "family": "dml", "required": True,
     "forms": [{"type": "string", **_NAME, "optional_prefix": "DML_TENSOR_DATA_TYPE_", "names": "dml_data_types"},
               {"type": "integer", "values": "dml_data_types"}],
     "becomes": "the short name (FLOAT32); any other value is kept as written", "malformed": "dml.tensor.fields",
     "unrecognised": "dml.tensor.fields"},
    {"field": "Desc.<tensor>.Sizes, Desc.<tensor>.Strides", "family": "dml", "required": "Sizes only",
     "forms": [{"type": "array", "items": "integers in [0, 2**32-1]"}], "malformed": "dml.tensor.fields",
     "note": "no null: a DirectML operator is created with every size known"},
    {"field": "Desc.<tensor>.TotalTensorSizeInBytes, GuaranteedBaseOffsetAlignment, Flags", "family": "dml",
     "required": False, "forms": [{"type": "integer", "min": 0}], "malformed": "dml.tensor.fields"},
    {"field": "Desc.Axis, Desc.K", "family": "dml", "required": True,
     "forms": [{"type": "integer", "min": 0, "max": 2**32 - 1}], "malformed": "dml.desc.fields",
     "note": "no null: DirectML takes K when the operator is created"},
    {"field": "Desc.AxisDirection", "family": "dml", "required": "TOP_K1 only (TOP_K has no such member)",
     "forms": [{"type": "string", **_NAME, "optional_prefix": "DML_AXIS_DIRECTION_", "names": "dml_axis_directions"},
               {"type": "integer"}],
     "becomes": "the enum value (0 or 1); any other string or integer is kept as written and breaks "
                "dml.direction.enum", "malformed": "dml.desc.fields", "unrecognised": "dml.direction.enum"},
    {"field": "op_type", "family": "onnx", "required": True,
     "forms": [{"type": "string", "values": ["TopK"], "note": "exactly, as ONNX names operators: not trimmed, "
                                                              "case-sensitive"}],
     "malformed": "onnx.desc.fields"},
    {"field": "opset", "family": "onnx", "required": "unless the caller gives a profile",
     "forms": [{"type": "integer", "min": 1}],
     "becomes": "the TopK version: the newest onnx_versions key at or below it", "malformed": "onnx.desc.fields",
     "note": "a string (\"11\"), 11.0, true, null or a value below 1 breaks onnx.desc.fields. A profile given by the "
             "caller replaces it (the command line's --spec refuses a descriptor whose own opset is another, with "
             "exit 2)."},
    {"field": "X", "family": "onnx", "required": True, "forms": [{"type": "object", "keys": ["dtype", "shape"]}],
     "malformed": "onnx.desc.fields"},
    {"field": "X.dtype, K.dtype", "family": "onnx", "required": True,
     "forms": [{"type": "string", **_NAME, "optional_wrapper": "tensor(...)",
                "optional_prefix": "DML_TENSOR_DATA_TYPE_", "names": "keys and values of onnx_type_strings",
                "aliases": dict(DTYPE_ALIASES)}],
     "becomes": "the canonical name (a key of onnx_type_strings: float32); any other string is kept as written "
                "and breaks onnx.dtype.T (X) or onnx.k.single (K)",
     "note": "trimmed once, before the wrapper and the prefix are taken off", "malformed": "onnx.desc.fields",
     "unrecognised": "onnx.dtype.T (X), onnx.k.single (K)"},
    {"field": "X.shape", "family": "onnx", "required": True,
     "forms": [{"type": "array", "items": "integers of at least 0, or null (that size unknown)"},
               {"type": "null", "note": "the rank is unknown"}],
     "malformed": "onnx.desc.fields"},
    {"field": "k", "family": "onnx", "required": True,
     "forms": [{"type": "integer"}, {"type": "array", "items": "integers (one, for onnx.k.single)"},
               {"type": "null", "note": "K is unknown (given at run time)"}],
     "malformed": "onnx.desc.fields",
     "note": "the attribute k at opset 1, the value of input K from opset 10; a missing k breaks onnx.desc.fields"},
    {"field": "K", "family": "onnx", "required": False,
     "forms": [{"type": "object", "keys": ["dtype", "shape"],
                "note": "input K as a model declares it; shape: integers of at least 0, or null where unknown"}],
     "malformed": "onnx.desc.fields"},
    {"field": "attributes", "family": "onnx", "required": False, "default": {},
     "forms": [{"type": "object", "items": "integers"}],
     "note": "axis defaults to -1, largest and sorted to 1; names a version lacks break onnx.attr.allowed",
     "malformed": "onnx.desc.fields"},
]

# Which check kinds stop at an unknown (null) value, and what they need.
_UNKNOWN_STOPS = {
    "signed_axis_in_range": "X.shape (the rank)",
    "k_min": "k",
    "k_max_axis_size": "k, X.shape, or the size of X along the axis",
    "onnx_k_attribute_matches": "k",
}

INPUT_FORMS = {
    "terms": _TERMS,
    "json_whitespace": TRIM,
    "fields": _FIELDS,
    "unknown_stops": _UNKNOWN_STOPS,
}
