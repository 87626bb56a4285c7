"""Cases derived from the export's `input_forms`: for each field, spellings it says are accepted
and values it says are malformed or name nothing, each put into an otherwise valid descriptor.

`cases(exported)` gives [(label, descriptor, expect)], expect one of ("accepted", rule, value),
("finding", rule) or ("error",): accepted means the rule that judges the field's form reports
nothing (and `value`, when not None, is what the checks read); finding means that rule is among
the findings; error means the validator refuses the input. The names, prefixes, wrappers,
aliases, patterns, bounds and rules all come from the section, not from this file; only where
each field sits in a descriptor is written here.
"""
import copy

from spec_breakers import dml_base, onnx_base

JSON_SPACE = " \t\r\n"
NOT_JSON_SPACE = ["\u00a0", "\u2003", "\x1c"]  # whitespace to Python's str.strip, not to JSON
OTHER_DIGITS = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")


def _field(exported, name):
    return next(f for f in exported["input_forms"]["fields"] if f["field"] == name)


def _names(exported, form):
    tables = exported["tables"]
    if form["names"] == "keys and values of onnx_type_strings":
        return {n: n for n in tables["onnx_type_strings"]} | {v: k for k, v in tables["onnx_type_strings"].items()}
    return {n: n for n in tables[form["names"]]}


def _name_spellings(form, name):
    """Spellings of one name the form accepts: prefix, case, JSON whitespace, wrapper."""
    prefix, spelled = form.get("optional_prefix", ""), [name]
    spelled += [prefix + name, (prefix + name).lower(), name.lower(), name.upper(), name.swapcase()]
    spelled += [JSON_SPACE + name + JSON_SPACE, " " + (prefix + name).lower() + "\t"]
    wrapper = form.get("optional_wrapper")
    if wrapper:
        left, right = wrapper.split("...")
        spelled += [left + name + right, left.upper() + name + right.upper(), " " + left + name.upper() + right]
    return spelled


def _name_refusals(form, name):
    """Strings the form does not accept: other whitespace, another script, a doubled prefix."""
    prefix = form.get("optional_prefix", "")
    refused = [space + name for space in NOT_JSON_SPACE] + [name + "\u200b", name[:-1] + name[-1].translate(
        OTHER_DIGITS) if name[-1].isdigit() else name + "\u0130", prefix + prefix + name, name + "_", ""]
    return refused


def _put(family, path, value, base=None):
    desc = copy.deepcopy(base) if base is not None else (dml_base() if family == "dml" else onnx_base(11))
    if path == ("Desc", "*", "DataType"):  # the two value tensors share a type (dml.dtype.same)
        desc["Desc"]["InputTensor"]["DataType"] = desc["Desc"]["OutputValueTensor"]["DataType"] = value
        return desc
    target = desc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return desc


def _named_field(exported, name, path, family, expected_of=lambda name: name, base=None, label=None, which=0):
    entry, out = _field(exported, name), []
    rule = entry["malformed"]
    unrecognised = entry["unrecognised"].split(", ")[which].split(" ")[0]
    name = label or name
    for form in entry["forms"]:
        if form["type"] == "string":
            for name_, meaning in _names(exported, form).items():
                for text in _name_spellings(form, name_):
                    out.append((f"{name} {text!r}", _put(family, path, text, base), ("accepted", rule, expected_of(meaning))))
                for text in _name_refusals(form, name_):
                    expect = ("error",) if unrecognised == "error" else ("finding", unrecognised)
                    out.append((f"{name} {text!r}", _put(family, path, text, base), expect))
            for alias, meaning in form.get("aliases", {}).items():
                out.append((f"{name} alias {alias!r}", _put(family, path, alias.upper(), base), ("accepted", rule, meaning)))
        elif form["type"] == "integer" and "values" in form:
            for name_, value in exported["tables"][form["values"]].items():
                out.append((f"{name} {value}", _put(family, path, value), ("accepted", rule, expected_of(name_))))
                expect = ("error",) if rule == "error" else ("finding", rule)
                for bad in (float(value), True if value != 1 else False):
                    out.append((f"{name} {bad!r}", _put(family, path, bad), expect))
            unknown = max(exported["tables"][form["values"]].values()) + 1
            out.append((f"{name} {unknown}", _put(family, path, unknown),
                        ("error",) if unrecognised == "error" else ("finding", unrecognised)))
    expect = ("error",) if rule == "error" else ("finding", rule)
    for bad in (None, [], {}):
        out.append((f"{name} {bad!r}", _put(family, path, bad, base), expect))
    return out


def _feature_levels(exported):
    entry = _field(exported, "FeatureLevel")
    string, integer = entry["forms"]
    out, rule = [], entry["malformed"]
    for short, value in exported["tables"]["dml_feature_levels"].items():
        major, minor = short.split("_")
        spelled = [p.replace("<digits>", major).replace("<digit>", minor).replace("<hex digits>", f"{value:x}")
                   for p in string["patterns"]]
        spelled += [string["optional_prefix"] + spelled[0], string["optional_prefix"].lower() + spelled[1],
                    JSON_SPACE + spelled[0] + JSON_SPACE, f"0x{value:X}"]
        out += [(f"FeatureLevel {t!r}", _put("dml", ("FeatureLevel",), t), ("accepted", rule, short)) for t in spelled]
        out.append((f"FeatureLevel {value}", _put("dml", ("FeatureLevel",), value), ("accepted", rule, short)))
        refused = [spelled[0].translate(OTHER_DIGITS), "+" + spelled[0], "\u00a0" + spelled[0],
                   f"0X{value:x}", float(f"{major}.{minor}"), float(value), spelled[0] + "0"]
        out += [(f"FeatureLevel {t!r}", _put("dml", ("FeatureLevel",), t), ("finding", rule)) for t in refused]
    for bad in (0, 1, 0x1000 - 0x100, 0x3180, 16 << 12, True, None, "0_5", "16_0", ""):
        out.append((f"FeatureLevel {bad!r}", _put("dml", ("FeatureLevel",), bad), ("finding", rule)))
    return out


def _integers(exported, name, family, paths):
    entry, out = _field(exported, name), []
    form, rule = entry["forms"][0], entry["malformed"]
    low, high = form.get("min"), form.get("max")
    good = [v for v in (low, high) if v is not None]
    bad = [v for v in ((low - 1) if low is not None else None, (high + 1) if high is not None else None) if v is not None]
    for path in paths:
        for value in good:
            out.append((f"{'.'.join(path)} {value}", _put(family, path, value), ("accepted", rule, None)))
        for value in bad + [float(good[0] + 1), str(good[0] + 1), str(good[0] + 1).translate(OTHER_DIGITS),
                            True, None, [good[0] + 1]]:
            out.append((f"{'.'.join(path)} {value!r}", _put(family, path, value), ("finding", rule)))
    return out


def _onnx_shapes_and_k(exported):
    shape, k = _field(exported, "X.shape"), _field(exported, "k")
    out = []
    accepted_shapes = [[3, 4], [0, 4]]
    if any(f["type"] == "null" for f in shape["forms"]):
        accepted_shapes.append(None)
    if "null" in shape["forms"][0]["items"]:
        accepted_shapes += [[None, 4], [None, None]]
    for value in accepted_shapes:
        out.append((f"X.shape {value!r}", _put("onnx", ("X", "shape"), value), ("accepted", shape["malformed"], None)))
    for value in ([-1, 4], [3.0, 4], ["3", 4], [True, 4], "3,4", {"0": 3}):
        out.append((f"X.shape {value!r}", _put("onnx", ("X", "shape"), value), ("finding", shape["malformed"])))
    accepted_k = [2, [2]] + ([None] if any(f["type"] == "null" for f in k["forms"]) else [])
    for value in accepted_k:
        out.append((f"k {value!r}", _put("onnx", ("k",), value), ("accepted", k["malformed"], None)))
    for value in (2.0, "2", True, [2.0], [None], {"k": 2}):
        out.append((f"k {value!r}", _put("onnx", ("k",), value), ("finding", k["malformed"])))
    missing = onnx_base(11)
    del missing["k"]
    out.append(("k missing", missing, ("finding", k["malformed"])))
    return out


def _opsets(exported):
    entry = _field(exported, "opset")
    low, rule = entry["forms"][0]["min"], entry["malformed"]
    out = []
    for value in (low, 10, 11, 24, 99):
        out.append((f"opset {value}", _put("onnx", ("opset",), value, onnx_base(10)), ("accepted", rule, value)))
    for value in (low - 1, -1, "11", " 11", "+11", "11".translate(OTHER_DIGITS), 11.0, True, None, [11]):
        out.append((f"opset {value!r}", _put("onnx", ("opset",), value), ("finding", rule)))
    missing = onnx_base(11)
    del missing["opset"]
    out.append(("opset missing", missing, ("finding", rule)))
    return out


def cases(exported) -> list:
    out = []
    out += _named_field(exported, "Type", ("Type",), "dml")
    out += _feature_levels(exported)
    out += _named_field(exported, "Desc.<tensor>.DataType", ("Desc", "*", "DataType"), "dml")
    out += _named_field(exported, "Desc.AxisDirection", ("Desc", "AxisDirection"), "dml",
                        expected_of=lambda name: exported["tables"]["dml_axis_directions"][name])
    out += _integers(exported, "Desc.Axis, Desc.K", "dml", [("Desc", "Axis"), ("Desc", "K")])
    out += _opsets(exported)
    out += _named_field(exported, "X.dtype, K.dtype", ("X", "dtype"), "onnx")
    with_k = dict(onnx_base(11), K={"dtype": "int64", "shape": [1]})
    out += _named_field(exported, "X.dtype, K.dtype", ("K", "dtype"), "onnx", base=with_k, label="K.dtype", which=1)
    out += _onnx_shapes_and_k(exported)
    for label, desc, expect in out:
        if label.startswith("Type") and expect[0] == "accepted" and expect[2] == "TOP_K":
            desc["Desc"].pop("AxisDirection", None)  # TOP_K has no such member
    return out
