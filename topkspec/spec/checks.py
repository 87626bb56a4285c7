"""The check kinds descriptor rules use, each defined in words (exported) and in code.

A check reads the normalised descriptor (see descriptors.normalise), its parameters from the
rule, and the exported tables; it returns a list of messages, empty when the rule holds. The
words in CHECK_KINDS are the contract: a validator in another language implements the same
kinds from them and the JSON export.

`ctx` is worked out once per kind of descriptor (validate.plan_context): family, level, opset,
level_name, and for DirectML what a check would otherwise look up per descriptor: "row" (the
operator's support row at the level), "desc_fields", "plain_tensor", "data_types" (for the quick
tests; each missing where the tables do not give it, and the checks then read the tables
themselves). The structural checks first ask whether the descriptor is in the plain form
(descriptors.plain_*) and build their messages only when it is not.
"""
from __future__ import annotations

from topkspec.spec.descriptors import plain_dml_members, plain_dml_tensors, plain_onnx_node
from topkspec.spec.forms import feature_level, opset
from topkspec.spec.tables import CHECK_KIND_MEANINGS, DML_DATA_TYPES

_UINT_MAX = 2**32 - 1
_TENSOR_OPTIONAL_INT_FIELDS = ("TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment", "Flags")


class Unknown(Exception):
    """A check that needs a value the descriptor gives as null (unknown): the rule is not
    checked, for the reason in the message (forms.INPUT_FORMS["unknown_stops"])."""


def _known(value, what: str):
    if value is None:
        raise Unknown(f"{what} is unknown (null)")
    return value


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_uint(v) -> bool:
    return _is_int(v) and 0 <= v <= _UINT_MAX


def _uint_list(v) -> bool:
    return isinstance(v, list) and all(_is_uint(s) for s in v)


def _sizes(view, tensor):
    if tensor == "X":
        return _known(view["X"]["shape"], "the rank of X (X.shape)")
    return view["Desc"][tensor]["Sizes"]


def _axis(view, rank):
    """Normalised axis (DirectML: Axis; ONNX: axis attribute, default -1)."""
    if "Desc" in view:
        return view["Desc"]["Axis"]
    axis = (view.get("attributes") or {}).get("axis", -1)
    return axis + rank if axis < 0 else axis


def _k(view):
    if "Desc" in view:
        return view["Desc"]["K"]
    k = _known(view["k"], "k")
    return k[0] if isinstance(k, list) else k


def support_row(tables, op, level):
    """The newest support-table row for op at or below level, or None."""
    rows = [r for r in tables["dml_support"].get(op, [])
            if tables["dml_feature_levels"][r["since"]] <= level]
    return max(rows, key=lambda r: tables["dml_feature_levels"][r["since"]]) if rows else None


def _row(tables, view, ctx):
    return ctx["row"] if "row" in ctx else support_row(tables, view["Type"], ctx["level"])


# -- DirectML -------------------------------------------------------------------------------

def dml_fields(view, params, tables, ctx):
    body = view.get("Desc")
    level = view.get("FeatureLevel", "")
    level_ok = (level == ctx.get("level_name") is not None or "FeatureLevel" not in view
                or feature_level(level) is not None)
    if level_ok and type(body) is dict and body.keys() == ctx.get("desc_fields") and plain_dml_members(body):
        return []
    msgs = [] if level_ok else [f"FeatureLevel {level!r} names no DirectML feature level (a string such as "
                                f"DML_FEATURE_LEVEL_3_1, 3_1, 3.1 or 0x3100, or the level's integer value)"]
    if not isinstance(body, dict):
        return msgs + ['"Desc" must be an object holding the operator\'s members']
    expected = tables["dml_desc_fields"][view["Type"]]
    msgs += [f'missing member {f}' for f in expected if f not in body]
    msgs += [f'unknown member {f} (DML_{view["Type"]}_OPERATOR_DESC has {", ".join(expected)})'
             for f in body if f not in expected]
    for name in ("InputTensor", "OutputValueTensor", "OutputIndexTensor"):
        if name in body and not isinstance(body[name], dict):
            msgs.append(f"{name} must be a tensor desc object, got {body[name]!r}")
    for name in ("Axis", "K"):
        if name in body and not _is_uint(body[name]):
            msgs.append(f"{name} must be a UINT (0 to 2**32-1), got {body[name]!r}")
    if "AxisDirection" in body and not (_is_int(body["AxisDirection"]) or isinstance(body["AxisDirection"], str)):
        msgs.append(f"AxisDirection must be an enum name or value, got {body['AxisDirection']!r}")
    return msgs


def dml_tensor_fields(view, params, tables, ctx):
    if ctx.get("plain_tensor") and "data_types" in ctx and plain_dml_tensors(view["Desc"], params["tensors"],
                                                                             ctx["data_types"]):
        return []
    allowed = tables["dml_tensor_fields"]["required"] + tables["dml_tensor_fields"]["optional"]
    msgs = []
    for name in params["tensors"]:
        tensor = view["Desc"][name]
        for field in tables["dml_tensor_fields"]["required"]:
            if field not in tensor:
                msgs.append(f"{name} is missing {field}")
        msgs += [f"{name} has unknown field {f}" for f in tensor if f not in allowed]
        data_type = tensor.get("DataType")
        if "DataType" in tensor and not (isinstance(data_type, str) and data_type in tables["dml_data_types"]):
            msgs.append(f"{name}.DataType {tensor['DataType']!r} is not a DML_TENSOR_DATA_TYPE")
        if "Sizes" in tensor and not _uint_list(tensor["Sizes"]):
            msgs.append(f"{name}.Sizes must be a list of UINTs, got {tensor['Sizes']!r}")
        if "Strides" in tensor and not _uint_list(tensor["Strides"]):
            msgs.append(f"{name}.Strides must be a list of UINTs, got {tensor['Strides']!r}")
        for field in _TENSOR_OPTIONAL_INT_FIELDS:
            if field in tensor and not (_is_int(tensor[field]) and tensor[field] >= 0):
                msgs.append(f"{name}.{field} must be a non-negative integer, got {tensor[field]!r}")
    return msgs


def dml_operator_available(view, params, tables, ctx):
    if _row(tables, view, ctx) is None:
        first = min(tables["dml_support"][view["Type"]], key=lambda r: tables["dml_feature_levels"][r["since"]])
        return [f"DML_OPERATOR_{view['Type']} arrives at DML_FEATURE_LEVEL_{first['since']}, "
                f"not available at DML_FEATURE_LEVEL_{ctx['level_name']}"]
    return []


def sizes_min(view, params, tables, ctx):
    for name in params["tensors"]:
        for s in _sizes(view, name):
            if s < params["min"]:
                return [f"{name}.Sizes[{i}] is {s}, must be at least {params['min']}"
                        for name in params["tensors"] for i, s in enumerate(_sizes(view, name)) if s < params["min"]]
    return []


def same_rank(view, params, tables, ctx):
    if len({len(_sizes(view, name)) for name in params["tensors"]}) > 1:
        ranks = {name: len(_sizes(view, name)) for name in params["tensors"]}
        return ["DimensionCounts differ: " + ", ".join(f"{n} has {r}" for n, r in ranks.items())]
    return []


def rank_in_table(view, params, tables, ctx):
    row = _row(tables, view, ctx)
    for name in params["tensors"]:
        if len(_sizes(view, name)) not in row["ranks"]:
            return [f"{name} has DimensionCount {len(_sizes(view, name))}; DML_{view['Type']} at "
                    f"DML_FEATURE_LEVEL_{ctx['level_name']} supports {row['ranks']}"
                    for name in params["tensors"] if len(_sizes(view, name)) not in row["ranks"]]
    return []


def dtype_in_table(view, params, tables, ctx):
    row = _row(tables, view, ctx)
    allowed = row[params["column"]]
    for name in params["tensors"]:
        if view["Desc"][name]["DataType"] not in allowed:
            return [f"{name}.DataType {view['Desc'][name]['DataType']} is not supported by DML_{view['Type']} at "
                    f"DML_FEATURE_LEVEL_{ctx['level_name']} (supported: {', '.join(allowed)})"
                    for name in params["tensors"] if view["Desc"][name]["DataType"] not in allowed]
    return []


def same_dtype(view, params, tables, ctx):
    if len({view["Desc"][name]["DataType"] for name in params["tensors"]}) > 1:
        types = {name: view["Desc"][name]["DataType"] for name in params["tensors"]}
        return ["DataTypes differ: " + ", ".join(f"{n} is {t}" for n, t in types.items())]
    return []


def axis_below_rank(view, params, tables, ctx):
    rank = len(_sizes(view, params["tensor"]))
    axis = view["Desc"]["Axis"]
    return [] if axis < rank else [f"Axis {axis} must be less than the DimensionCount {rank} of {params['tensor']}"]


def k_min(view, params, tables, ctx):
    k = _k(view)
    return [] if k >= params["min"] else [f"K is {k}, must be at least {params['min']}"]


def k_max_axis_size(view, params, tables, ctx):
    sizes = _sizes(view, params["tensor"])
    axis = _axis(view, len(sizes))
    n, k = _known(sizes[axis], f"the size of {params['tensor']} along axis {axis}"), _k(view)
    if params["inclusive"]:
        return [] if k <= n else [f"K is {k}, larger than the size {n} of {params['tensor']} along axis {axis}"]
    return [] if k < n else [f"K is {k}, must be less than the size {n} of {params['tensor']} along axis {axis}"]


def enum(view, params, tables, ctx):
    value = view["Desc"][params["field"]] if params["field"] in view["Desc"] else None
    if value is None or value in params["values"]:
        return []
    return [f"{params['field']} is {value!r}, must be one of {params['values']}"]


def output_sizes(view, params, tables, ctx):
    sizes = list(_sizes(view, params["input"]))
    sizes[view["Desc"]["Axis"]] = view["Desc"]["K"]
    actual = _sizes(view, params["tensor"])
    return [] if list(actual) == sizes else [f"{params['tensor']}.Sizes is {list(actual)}, expected {sizes} "
                                             f"({params['input']} sizes with Axis {view['Desc']['Axis']} set to K)"]


def same_sizes(view, params, tables, ctx):
    if len({tuple(_sizes(view, name)) for name in params["tensors"]}) > 1:
        sizes = {name: list(_sizes(view, name)) for name in params["tensors"]}
        return ["Sizes differ: " + ", ".join(f"{n} is {s}" for n, s in sizes.items())]
    return []


def strides_length(view, params, tables, ctx):
    msgs = []
    for name in params["tensors"]:
        tensor = view["Desc"][name]
        if "Strides" in tensor and len(tensor["Strides"]) != len(tensor["Sizes"]):
            msgs.append(f"{name}.Strides has {len(tensor['Strides'])} entries for {len(tensor['Sizes'])} dimensions")
    return msgs


def implied_size_bytes(sizes, strides, itemsize, round_to):
    if strides is None:
        elements = 1
        for s in sizes:
            elements *= s
    else:
        elements = 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
    size = elements * itemsize
    return (size + round_to - 1) // round_to * round_to


def total_size_min(view, params, tables, ctx):
    msgs = []
    for name in params["tensors"]:
        tensor = view["Desc"][name]
        if "TotalTensorSizeInBytes" not in tensor:
            continue
        itemsize = tables["dml_data_type_sizes"][tensor["DataType"]]
        need = implied_size_bytes(tensor["Sizes"], tensor.get("Strides"), itemsize, params["round_to"])
        if tensor["TotalTensorSizeInBytes"] < need:
            msgs.append(f"{name}.TotalTensorSizeInBytes is {tensor['TotalTensorSizeInBytes']}, "
                        f"less than the minimum implied size {need}")
    return msgs


def alignment(view, params, tables, ctx):
    msgs = []
    for name in params["tensors"]:
        tensor = view["Desc"][name]
        value = tensor.get("GuaranteedBaseOffsetAlignment", 0)
        size = tables["dml_data_type_sizes"][tensor["DataType"]]
        if value and (value < size or value & (value - 1)):
            msgs.append(f"{name}.GuaranteedBaseOffsetAlignment is {value}, must be 0 or a power of two at least "
                        f"as large as the element size ({size} bytes for {tensor['DataType']})")
    return msgs


def outputs_distinct(view, params, tables, ctx):
    from topkspec.spec.strides import overlapping

    return [f"{name}.Strides {view['Desc'][name]['Strides']} give two of its elements one address"
            for name in params["tensors"] if "Strides" in view["Desc"][name]
            and overlapping(view["Desc"][name]["Sizes"], view["Desc"][name]["Strides"])]


# -- ONNX -----------------------------------------------------------------------------------

_ONNX_KEYS = {"op_type", "opset", "X", "k", "K", "attributes"}


def onnx_fields(view, params, tables, ctx):
    if plain_onnx_node(view):
        return []
    msgs = []
    if "opset" not in view:
        msgs.append('missing "opset" (or give a profile such as onnx:11)')
    elif opset(view["opset"]) is None:
        msgs.append(f"opset must be an integer of at least 1, got {view['opset']!r}")
    if view.get("op_type") != "TopK":
        msgs.append(f"op_type is {view.get('op_type')!r}, expected 'TopK'")
    msgs += [f"unknown key {key!r}" for key in view if key not in _ONNX_KEYS]
    x = view.get("X")
    if not isinstance(x, dict):
        msgs.append('"X" must be an object with "dtype" and "shape"')
    else:
        if not isinstance(x.get("dtype"), str):
            msgs.append(f'X.dtype must be a type name, got {x.get("dtype")!r}')
        shape = x.get("shape")
        if not (shape is None and "shape" in x
                or isinstance(shape, list) and all(s is None or _is_int(s) and s >= 0 for s in shape)):
            msgs.append(f"X.shape must be a list of non-negative integers (null where unknown), or null, got {shape!r}")
        msgs += [f"X has unknown key {key!r}" for key in x if key not in ("dtype", "shape")]
    if "k" not in view:
        msgs.append('missing "k"')
    elif not (view["k"] is None or _is_int(view["k"])
              or (isinstance(view["k"], list) and all(_is_int(v) for v in view["k"]))):
        msgs.append(f"k must be an integer (or a list holding one), or null, got {view['k']!r}")
    attributes = view.get("attributes", {})
    if not isinstance(attributes, dict) or not all(_is_int(v) for v in attributes.values()):
        msgs.append(f"attributes must be an object of integer attributes, got {attributes!r}")
    if "K" in view:
        tensor = view["K"]
        if not (isinstance(tensor, dict) and set(tensor) == {"dtype", "shape"} and isinstance(tensor["dtype"], str)
                and isinstance(tensor["shape"], list)
                and all(d is None or (_is_int(d) and d >= 0) for d in tensor["shape"])):
            msgs.append(f'K must be an object with "dtype" (a type name) and "shape" (a list of non-negative '
                        f"integers, null where unknown), got {tensor!r}")
    return msgs


def onnx_attrs_allowed(view, params, tables, ctx):
    allowed = tables["onnx_versions"][ctx["opset"]]["attributes"]
    return [f"attribute {name!r} does not exist in TopK-{ctx['opset']} (it has {', '.join(allowed)})"
            for name in (view.get("attributes") or {}) if name not in allowed]


def onnx_k_attribute_matches(view, params, tables, ctx):
    attributes = view.get("attributes") or {}
    if "k" in attributes and attributes["k"] != _k(view):
        return [f"attribute k is {attributes['k']} but k is {_k(view)}"]
    return []


def onnx_dtype_in_table(view, params, tables, ctx):
    allowed = tables["onnx_versions"][ctx["opset"]][params["column"]]
    dtype = view["X"]["dtype"]
    return [] if dtype in allowed else [f"X type {dtype} is not in T for TopK-{ctx['opset']} ({', '.join(allowed)})"]


def signed_axis_in_range(view, params, tables, ctx):
    rank = len(_sizes(view, "X"))
    axis = (view.get("attributes") or {}).get("axis", -1)
    return [] if -rank <= axis <= rank - 1 else [f"axis {axis} is outside [-{rank}, {rank - 1}] for rank {rank}"]


def k_single(view, params, tables, ctx):
    k = view["k"]  # null (unknown) is no list: nothing to count
    msgs = []
    if isinstance(k, list) and len(k) != 1:
        msgs.append(f"K must hold a single value, got {len(k)} values")
    tensor = view.get("K")
    if tensor is None:
        return msgs
    if tables["onnx_versions"][ctx["opset"]]["k_from"] != "input":
        return msgs + [f"TopK-{ctx['opset']} has no input K (k is its attribute), but the node has one"]
    if tensor["dtype"] != "int64":
        msgs.append(f"K is a tensor of {tensor['dtype']}, must be tensor(int64)")
    shape = tensor["shape"]
    if len(shape) != 1:
        msgs.append(f"K has {len(shape)} dimensions (shape {shape}), must be a 1-D tensor")
    elif shape[0] is not None and shape[0] != 1:
        msgs.append(f"K holds {shape[0]} values, must hold a single value")
    return msgs


def onnx_bool_attrs(view, params, tables, ctx):
    attributes = view.get("attributes") or {}
    return [f"attribute {name} is {attributes[name]}, must be one of {params['values']}"
            for name in params["attributes"] if name in attributes and attributes[name] not in params["values"]]


# kind -> (meaning, implementation). The meanings (tables.CHECK_KIND_MEANINGS) are exported with the spec.
_IMPLEMENTATIONS = {fn.__name__: fn for fn in (
    dml_fields, dml_tensor_fields, dml_operator_available, sizes_min, same_rank, rank_in_table, dtype_in_table,
    same_dtype, axis_below_rank, k_min, k_max_axis_size, enum, output_sizes, same_sizes, strides_length,
    total_size_min, alignment, outputs_distinct, onnx_fields, onnx_attrs_allowed, onnx_k_attribute_matches, onnx_dtype_in_table,
    signed_axis_in_range, k_single, onnx_bool_attrs)}
CHECK_KINDS = {kind: (meaning, _IMPLEMENTATIONS[kind]) for kind, meaning in CHECK_KIND_MEANINGS.items()}

DML_DATA_TYPE_SIZES = {name: (8 if "64" in name else 4 if "32" in name else 2 if "16" in name else 1)
                       for name in DML_DATA_TYPES}
