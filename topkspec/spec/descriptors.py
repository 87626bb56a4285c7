"""The JSON descriptor forms (docs/spec.md, "Descriptor JSON"), in and out.

DirectML mirrors DML_OPERATOR_DESC:
  {"Type": "DML_OPERATOR_TOP_K1", "FeatureLevel": "DML_FEATURE_LEVEL_3_1", "Desc": {"InputTensor":
   {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [1,1,3,4]}, "OutputValueTensor": {...},
   "OutputIndexTensor": {...}, "Axis": 3, "K": 2, "AxisDirection": "DML_AXIS_DIRECTION_DECREASING"}}
ONNX:
  {"op_type": "TopK", "opset": 11, "X": {"dtype": "float32", "shape": [3,4]}, "k": 2,
   "attributes": {"axis": -1, "largest": 1, "sorted": 1}}

`normalise` maps the accepted spellings (forms.INPUT_FORMS, exported as `input_forms`) onto one
form the checks read; it never rejects a field's value: that is the checks' job, so every broken
rule is reported. It raises only where INPUT_FORMS says "error".
"""
from __future__ import annotations


from topkspec.errors import UsageError
from topkspec.spec import dtypes, forms
from topkspec.spec.profiles import Profile, ProfileError, dml_profile, onnx_profile, parse_profile
from topkspec.spec.tables import DML_AXIS_DIRECTIONS


class DescriptorError(UsageError):
    """Input that is not a TopK descriptor at all (so no rule can be checked)."""


_TENSORS = ("InputTensor", "OutputValueTensor", "OutputIndexTensor")


def _json_kind(value) -> str:
    """What a JSON value is, in JSON's words ('an array', 'null'), for a message."""
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
             type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def family_of(desc) -> str:
    if not isinstance(desc, dict):
        raise DescriptorError(f"a descriptor must be a JSON object, got {_json_kind(desc)}")
    if "Type" in desc:
        return "dml"
    if "op_type" in desc:
        return "onnx"
    raise DescriptorError('not a TopK descriptor: expected a "Type" (DirectML) or "op_type" (ONNX) key')


def dml_operator(value) -> str:
    name = forms.dml_operator(value)
    if name is None:
        raise DescriptorError(
            f"unknown DirectML operator Type {value!r}: expected DML_OPERATOR_TOP_K or DML_OPERATOR_TOP_K1")
    return name


dml_data_type = forms.dml_data_type
dml_direction = forms.dml_direction


def own_profile(desc):
    """The profile a descriptor's own FeatureLevel or opset names; None when it names none or
    is malformed (a DirectML descriptor without FeatureLevel: the newest known level)."""
    if family_of(desc) == "dml":
        level = forms.feature_level(desc.get("FeatureLevel", forms.NEWEST_LEVEL))
        return None if level is None else dml_profile(level)
    opset = forms.opset(desc.get("opset"))
    return None if opset is None else onnx_profile(opset)


def normalise(desc, profile=None) -> tuple[dict, Profile | None]:
    """(normalised copy, profile it is judged by). A given profile overrides the descriptor's own
    FeatureLevel/opset; without either, DirectML defaults to the newest known level. The profile
    is None when the descriptor's own FeatureLevel or opset is malformed (or an ONNX opset is
    missing) and none is given: the view keeps the value as written, which breaks the family's
    desc.fields rule."""
    family = "dml" if type(desc) is dict and "Type" in desc else family_of(desc)
    given = parse_profile(profile) if profile is not None else None
    if given is not None and given.family != family:
        raise ProfileError(f"profile {given.name} is for {given.family}, but the descriptor is {family}")
    # A copy of the containers normalising rewrites, the rest shared: checks only read.
    out = dict(desc)
    if family == "dml":
        out["Type"] = dml_operator(desc["Type"])
        level = forms.feature_level(desc.get("FeatureLevel", forms.NEWEST_LEVEL))
        if given is None and level is not None:
            given = dml_profile(level)
        if given is not None and level is not None:
            out["FeatureLevel"] = given.level_name  # a malformed FeatureLevel stays as written, for the check
        body = out.get("Desc")
        if isinstance(body, dict):
            body = out["Desc"] = dict(body)
            for name in _TENSORS:
                tensor = body.get(name)
                if isinstance(tensor, dict) and "DataType" in tensor:
                    tensor = body[name] = dict(tensor)
                    tensor["DataType"] = forms.dml_data_type(tensor["DataType"])
            if "AxisDirection" in body:
                body["AxisDirection"] = forms.dml_direction(body["AxisDirection"])
        return out, given
    own = forms.opset(desc.get("opset"))
    if given is None and own is not None:
        given = onnx_profile(own)
    if given is not None and ("opset" not in desc or own is not None):
        out["opset"] = given.requested_opset  # a malformed opset stays as written, for the check
    for key in ("X", "K"):
        tensor = out.get(key)
        if isinstance(tensor, dict) and isinstance(tensor.get("dtype"), str):
            tensor = out[key] = dict(tensor)
            tensor["dtype"] = forms.onnx_dtype(tensor["dtype"])
    return out, given


# -- The plain form: quick tests the checks ask before building their messages ---------------
# A yes means the structural rule holds; a no only means: work it out in full (the checks do).

PLAIN_TENSOR_FIELDS = frozenset({"DataType", "Sizes"})  # a tensor desc with the required fields only
_UINT_MAX = 2**32 - 1
_ONNX_KEYS = frozenset({"op_type", "opset", "X", "k", "K", "attributes"})
_X_KEYS = frozenset({"dtype", "shape"})


def plain_dml_members(body: dict) -> bool:
    """Tensor members are dicts, Axis and K plain ints in [0, 2**32-1], AxisDirection an int or a
    string (which members there are, the caller compares)."""
    for name in _TENSORS:
        if name in body and type(body[name]) is not dict:
            return False
    for name in ("Axis", "K"):
        if name in body and (type(body[name]) is not int or not 0 <= body[name] <= _UINT_MAX):
            return False
    return "AxisDirection" not in body or type(body["AxisDirection"]) in (int, str)


def plain_dml_tensors(body: dict, names, data_types) -> bool:
    """Each named tensor has exactly DataType (a string in `data_types`) and Sizes (a list of plain
    ints in [0, 2**32-1])."""
    for name in names:
        tensor = body[name]
        if type(tensor) is not dict or len(tensor) != len(PLAIN_TENSOR_FIELDS):
            return False
        data_type, sizes = tensor.get("DataType"), tensor.get("Sizes")  # both there, so nothing else
        if type(data_type) is not str or data_type not in data_types or type(sizes) is not list:
            return False
        for s in sizes:
            if type(s) is not int or not 0 <= s <= _UINT_MAX:
                return False
    return True


def plain_onnx_node(view: dict) -> bool:
    """op_type TopK, an integer opset of at least 1, only known keys and no K tensor; X of exactly a string dtype and a shape of
    non-negative plain ints; k a plain int or a list of them; attributes a dict of plain ints."""
    x, k, attributes = view.get("X"), view.get("k"), view.get("attributes", {})
    opset = view.get("opset")
    return (view.get("op_type") == "TopK" and "K" not in view and view.keys() <= _ONNX_KEYS
            and type(opset) is int and opset >= 1
            and type(x) is dict and x.keys() == _X_KEYS and type(x["dtype"]) is str and type(x["shape"]) is list
            and all(type(s) is int and s >= 0 for s in x["shape"])
            and (type(k) is int or type(k) is list and all(type(v) is int for v in k))
            and type(attributes) is dict and all(type(v) is int for v in attributes.values()))


def descriptor(case: Case) -> dict:
    """The JSON form of a case (docs/spec.md, "Descriptor JSON")."""
    profile = parse_profile(case.profile)
    if profile.family == "dml":
        out_sizes = list(case.out_shape) if 0 <= case.norm_axis < case.rank else list(case.shape)

        def tensor(dtype_name, sizes):
            return {"DataType": "DML_TENSOR_DATA_TYPE_" + dtype_name.upper(), "Sizes": list(sizes)}

        body = {
            "InputTensor": tensor(case.dtype, case.shape),
            "OutputValueTensor": tensor(case.dtype, out_sizes),
            "OutputIndexTensor": tensor(case.index_dtype, out_sizes),
            "Axis": case.axis,
            "K": case.k,
        }
        if case.op == "TOP_K1":
            body["AxisDirection"] = "DML_AXIS_DIRECTION_" + ("DECREASING" if case.largest else "INCREASING")
        if not case.layout.is_plain:  # strided tensors carry their Strides and the size they imply
            from topkspec.spec.layouts import buffer_plan

            for name, entry in zip(("InputTensor", "OutputValueTensor", "OutputIndexTensor"), buffer_plan(case)):
                if entry["strides"] is not None:
                    body[name].update(Strides=list(entry["strides"]), TotalTensorSizeInBytes=entry["total"])
        return {"Type": "DML_OPERATOR_" + case.op,
                "FeatureLevel": "DML_FEATURE_LEVEL_" + profile.level_name, "Desc": body}
    attributes = {"axis": case.axis}
    if profile.opset not in ("1", "10") or not case.largest:
        attributes["largest"] = int(case.largest)
    if profile.opset not in ("1", "10") or not case.sorted:
        attributes["sorted"] = int(case.sorted)
    return {"op_type": "TopK", "opset": profile.requested_opset,
            "X": {"dtype": case.dtype, "shape": list(case.shape)}, "k": case.k, "attributes": attributes}


def case_from_descriptor(desc, profile=None) -> Case:
    """The Case a descriptor describes. Raises DescriptorError when a field it needs is missing
    or of the wrong kind (the validator reports those as rules; a Case cannot be built)."""
    from topkspec.spec.case import Case

    norm, prof = normalise(desc, profile)
    if prof is None:
        key = "FeatureLevel" if "Type" in norm else "opset"
        raise DescriptorError(f"descriptor cannot be read as a TopK case: {key} {norm.get(key)!r} names no version")
    try:
        if prof.family == "dml":
            body = norm["Desc"]
            tensor = body["InputTensor"]
            direction = body.get("AxisDirection", DML_AXIS_DIRECTIONS["DECREASING"])
            return Case(
                profile=prof.name, op=norm["Type"],
                dtype=dtypes.canonical(tensor["DataType"]),
                shape=tuple(int(s) for s in tensor["Sizes"]),
                axis=int(body["Axis"]), k=int(body["K"]),
                largest=direction == DML_AXIS_DIRECTIONS["DECREASING"], sorted=True,
                index_dtype=dtypes.canonical(body["OutputIndexTensor"]["DataType"]),
            )
        attributes = norm.get("attributes") or {}
        k = norm["k"]
        if isinstance(k, list):
            if len(k) != 1:
                raise DescriptorError(f"k must hold a single value, got {k!r}")
            k = k[0]
        return Case(
            profile=prof.name, op="TopK", dtype=dtypes.canonical(norm["X"]["dtype"]),
            shape=tuple(int(s) for s in norm["X"]["shape"]),
            axis=int(attributes.get("axis", -1)), k=int(k),
            largest=bool(attributes.get("largest", 1)), sorted=bool(attributes.get("sorted", 1)),
            index_dtype="int64",
        )
    except DescriptorError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise DescriptorError(f"descriptor cannot be read as a TopK case: {exc}") from None
