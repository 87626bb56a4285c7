"""Breakers of the DirectML descriptor rules (see registry.py)."""
from __future__ import annotations

from topkspec import spec
from topkspec.spec import dtypes
from topkspec.spec.strides import packed_strides, total_size
from topkspec.strategies import cached
from topkspec.strategies.invalid.registry import breaks, broken, pick, small_case

_TENSORS = ("InputTensor", "OutputValueTensor", "OutputIndexTensor")
_DML_TYPES = tuple(dtypes.canonical(t) for t in spec.tables.DML_DATA_TYPES)
_UINT_MAX = 2**32 - 1


def _dml_name(canonical: str) -> str:
    return "DML_TENSOR_DATA_TYPE_" + canonical.upper()


def _descriptor(draw, prof, **filters):
    """(case, descriptor) for a small valid case of the profile."""
    case = small_case(draw, prof.name, **filters)
    return case, spec.descriptor(case)


@breaks("dml.desc.fields")
def _desc_fields(draw, prof, rule):
    _, desc = _descriptor(draw, prof)
    body = desc["Desc"]
    how = draw(cached.sampled(("missing", "unknown", "not a UINT")))
    if how == "missing":
        member = pick(draw, [m for m in ("Axis", "K", "AxisDirection") if m in body])
        del body[member]
        how = f"member {member} removed"
    elif how == "unknown":
        member = pick(draw, [m for m in ("AxisDirection", "Largest", "Sorted") if m not in body])
        body[member] = 1
        how = f"unknown member {member} added"
    else:
        member = draw(cached.sampled(("Axis", "K")))
        body[member] = pick(draw, [-1, _UINT_MAX + 1, str(body[member]), 1.0 * body[member]])
        how = f"{member} = {body[member]!r}"
    return broken(prof, desc, {rule}, how)


@breaks("dml.tensor.fields")
def _tensor_fields(draw, prof, rule):
    _, desc = _descriptor(draw, prof)
    name = draw(cached.sampled(_TENSORS))
    tensor = desc["Desc"][name]
    how = draw(cached.sampled(("missing", "unknown field", "bad DataType", "bad Sizes", "bad optional")))
    if how == "missing":
        field = draw(cached.sampled(("DataType", "Sizes")))
        del tensor[field]
        how = f"{name}.{field} removed"
    elif how == "unknown field":
        tensor["Layout"] = "NCHW"
        how = f"{name} has unknown field Layout"
    elif how == "bad DataType":
        tensor["DataType"] = draw(cached.sampled(("DML_TENSOR_DATA_TYPE_BOOL", "BFLOAT16", 0, 12)))
        how = f"{name}.DataType = {tensor['DataType']!r}"
    elif how == "bad Sizes":
        i = draw(cached.integers(0, len(tensor["Sizes"]) - 1))
        tensor["Sizes"][i] = draw(cached.sampled((-1, _UINT_MAX + 1, "2", 2.0)))
        how = f"{name}.Sizes[{i}] = {tensor['Sizes'][i]!r}"
    else:
        field = draw(cached.sampled(("TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment", "Flags")))
        tensor[field] = draw(cached.sampled((-16, "16", 16.0)))
        how = f"{name}.{field} = {tensor[field]!r}"
    return broken(prof, desc, {rule}, how)


# A level below each operator's first (TOP_K arrives at 2_0, TOP_K1 at 2_1).
_MISSING_AT = {"TOP_K1": ("1_0", "2_0"), "TOP_K": ("1_0",)}


@breaks("dml.operator.available")
def _operator_available(draw, prof, rule):
    # The descriptor names a level its operator is missing at.
    op = draw(cached.sampled(("TOP_K1", "TOP_K")))
    case = small_case(draw, "dml:3.1", ops=[op])
    level = draw(cached.sampled(_MISSING_AT[op]))
    desc = spec.descriptor(case)
    desc["FeatureLevel"] = "DML_FEATURE_LEVEL_" + level
    return broken("dml:" + level.replace("_", "."), desc, {rule}, f"{op} at DML_FEATURE_LEVEL_{level}")


def _ranks_from_two(prof):
    return [r for r in spec.ranks(prof, spec.ops(prof)[-1]) if r >= 2]


@breaks("dml.tensor.sizes_positive", when=lambda prof: bool(_ranks_from_two(prof)))
def _sizes_positive(draw, prof, rule):
    case, desc = _descriptor(draw, prof, ranks=_ranks_from_two(prof))
    dim = pick(draw, [d for d in range(case.rank) if d != case.norm_axis])
    for name in _TENSORS:
        desc["Desc"][name]["Sizes"][dim] = 0
    return broken(prof, desc, {rule}, f"dimension {dim} has size 0")


@breaks("dml.rank.same")
def _rank_same(draw, prof, rule):
    case, desc = _descriptor(draw, prof)
    names = draw(cached.sampled((("OutputValueTensor",), ("OutputIndexTensor",),
                                 ("OutputValueTensor", "OutputIndexTensor"))))
    grow = case.rank == 1 or draw(cached.sampled((False, True)))
    new_rank = case.rank + 1 if grow else case.rank - 1
    for name in names:
        sizes = desc["Desc"][name]["Sizes"]
        desc["Desc"][name]["Sizes"] = [1] + sizes if grow else sizes[1:]
    rules = {rule}
    if new_rank not in spec.ranks(prof, case.op):
        rules.add("dml.rank.supported")  # the changed outputs now have a rank the table lacks
    return broken(prof, desc, rules, f"{' and '.join(names)} rank {new_rank}, input rank {case.rank}")


@breaks("dml.rank.supported")
def _rank_supported(draw, prof, rule):
    allowed = set(spec.ranks(prof, spec.ops(prof)[-1]))
    rank = pick(draw, [r for r in range(1, 11) if r not in allowed])
    case = small_case(draw, prof.name, ranks=[rank], max_rank=10)
    return broken(prof, case, {rule}, f"rank {rank}", case=case)


@breaks("dml.dtype.value_supported")
def _value_supported(draw, prof, rule):
    op = pick(draw, spec.ops(prof))
    allowed = spec.value_types(prof, op)
    dtype = pick(draw, [t for t in _DML_TYPES if t not in allowed])
    case = small_case(draw, prof.name, ops=[op]).with_(dtype=dtype)
    return broken(prof, case, {rule}, f"{op} values of type {dtype}", case=case)


@breaks("dml.dtype.index_supported")
def _index_supported(draw, prof, rule):
    case = small_case(draw, prof.name)
    allowed = spec.index_types(prof, case.op)
    case = case.with_(index_dtype=pick(draw, [t for t in _DML_TYPES if t not in allowed]))
    return broken(prof, case, {rule}, f"indices of type {case.index_dtype}", case=case)


@breaks("dml.dtype.same")
def _dtype_same(draw, prof, rule):
    case, desc = _descriptor(draw, prof)
    other = pick(draw, [t for t in spec.value_types(prof, case.op) if t != case.dtype])
    desc["Desc"]["OutputValueTensor"]["DataType"] = _dml_name(other)
    return broken(prof, desc, {rule}, f"input {case.dtype}, output values {other}")


@breaks("dml.axis.range")
def _axis_range(draw, prof, rule):
    case = small_case(draw, prof.name)
    case = case.with_(axis=case.rank + pick(draw, [0, 1, 7, _UINT_MAX - case.rank]))
    return broken(prof, case, {rule}, f"Axis {case.axis} for rank {case.rank}", case=case)


@breaks("dml.k.positive")
def _k_positive(draw, prof, rule):
    case = small_case(draw, prof.name).with_(k=0)
    return broken(prof, case, {rule}, "K = 0", case=case)


@breaks("dml.k.max", "dml.k.max_strict")
def _k_max(draw, prof, rule):
    strict_doc = rule == "dml.k.max_strict"
    case = small_case(draw, prof.name)
    low = case.axis_size if strict_doc else case.axis_size + 1
    case = case.with_(k=pick(draw, [low, low + 1, case.axis_size * 2 + 1]))
    return broken(prof, case, {rule}, f"K = {case.k} for axis size {case.axis_size}", case=case,
                  strict_doc=strict_doc)


@breaks("dml.direction.enum", when=lambda prof: "TOP_K1" in spec.ops(prof))
def _direction_enum(draw, prof, rule):
    _, desc = _descriptor(draw, prof, ops=["TOP_K1"])
    desc["Desc"]["AxisDirection"] = draw(cached.sampled((2, -1, 255, "DML_AXIS_DIRECTION_NONE", "ASCENDING")))
    return broken(prof, desc, {rule}, f"AxisDirection = {desc['Desc']['AxisDirection']!r}")


# Outputs of the wrong sizes: per rule asked for, the variants that break it. Each variant
# breaks the rules that an output differing from its expected sizes (and from the other) breaks.
_SIZE_VARIANTS = {
    "dml.shape.output_values": ("OutputValueTensor", "both, same"),
    "dml.shape.output_indices": ("OutputIndexTensor", "both, same"),
    "dml.shape.outputs_same_sizes": ("OutputValueTensor", "OutputIndexTensor", "both, different"),
}


@breaks(*_SIZE_VARIANTS)
def _output_sizes(draw, prof, rule):
    case, desc = _descriptor(draw, prof)
    variant = draw(cached.sampled(_SIZE_VARIANTS[rule]))
    dim = draw(cached.integers(0, case.rank - 1))
    grow = draw(cached.integers(1, 3))
    body = desc["Desc"]
    if variant == "both, same":
        changed = ["OutputValueTensor", "OutputIndexTensor"]
        for name in changed:
            body[name]["Sizes"][dim] += grow
    elif variant == "both, different":
        changed = ["OutputValueTensor", "OutputIndexTensor"]
        body["OutputValueTensor"]["Sizes"][dim] += grow
        body["OutputIndexTensor"]["Sizes"][dim] += grow + 1
    else:
        changed = [variant]
        body[variant]["Sizes"][dim] += grow
    rules = set()
    if "OutputValueTensor" in changed:
        rules.add("dml.shape.output_values")
    if "OutputIndexTensor" in changed:
        rules.add("dml.shape.output_indices")
    if body["OutputValueTensor"]["Sizes"] != body["OutputIndexTensor"]["Sizes"]:
        rules.add("dml.shape.outputs_same_sizes")
    return broken(prof, desc, rules, f"{variant}: dimension {dim} grown by {grow}")


def _packed_bytes(sizes, dtype_name) -> int:
    count = 1
    for s in sizes:
        count *= s
    size = count * dtypes.itemsize(dtypes.canonical(dtype_name))
    return (size + 3) // 4 * 4


@breaks("dml.tensor.strides")
def _strides(draw, prof, rule):
    case, desc = _descriptor(draw, prof)
    name = draw(cached.sampled(_TENSORS))
    count = pick(draw, [c for c in (case.rank + 1, case.rank - 1, 0) if c >= 0 and c != case.rank])
    desc["Desc"][name]["Strides"] = [1] * count
    return broken(prof, desc, {rule}, f"{name} has {count} strides for rank {case.rank}")


@breaks("dml.tensor.total_size")
def _total_size(draw, prof, rule):
    _, desc = _descriptor(draw, prof)
    name = draw(cached.sampled(_TENSORS))
    tensor = desc["Desc"][name]
    need = _packed_bytes(tensor["Sizes"], tensor["DataType"])
    if draw(cached.sampled((False, True))) and max(tensor["Sizes"]) > 1:  # padded strides the packed size cannot hold
        tensor["Strides"] = [2 * s for s in packed_strides(tensor["Sizes"])]
        size = dtypes.itemsize(dtypes.canonical(tensor["DataType"]))
        tensor["TotalTensorSizeInBytes"] = need
        need = total_size(tensor["Sizes"], tensor["Strides"], size)
        if need > tensor["TotalTensorSizeInBytes"]:
            return broken(prof, desc, {rule}, f"{name}.Strides {tensor['Strides']} need {need} bytes, "
                                              f"TotalTensorSizeInBytes = {tensor['TotalTensorSizeInBytes']} (packed)")
        del tensor["Strides"]
    tensor["TotalTensorSizeInBytes"] = draw(cached.integers(0, need - 1))
    return broken(prof, desc, {rule}, f"{name}.TotalTensorSizeInBytes = {tensor['TotalTensorSizeInBytes']} < {need}")


@breaks("dml.tensor.outputs_distinct")
def _outputs_distinct(draw, prof, rule):
    case, desc = _descriptor(draw, prof)
    name = draw(cached.sampled(_TENSORS[1:]))
    sizes = desc["Desc"][name]["Sizes"]
    wide = [d for d, s in enumerate(sizes) if s > 1]
    if not wide:  # every output dimension is 1: no strides can overlap, so K grows to the axis size
        if case.axis_size < 2:
            case = case.with_(shape=case.shape[:case.axis] + (2,) + case.shape[case.axis + 1:])
        case = case.with_(k=case.axis_size)
        desc = spec.descriptor(case)
        sizes, wide = desc["Desc"][name]["Sizes"], [case.axis]
    dim = pick(draw, wide)
    strides = list(packed_strides(sizes))
    strides[dim] = 0 if draw(cached.sampled((True, False))) else max(1, strides[dim] - 1) if len(wide) > 1 and dim != wide[-1] else 0
    desc["Desc"][name]["Strides"] = strides
    return broken(prof, desc, {rule}, f"{name}.Strides {strides}: two elements share an address")


@breaks("dml.tensor.alignment")
def _alignment(draw, prof, rule):
    _, desc = _descriptor(draw, prof)
    name = draw(cached.sampled(_TENSORS))
    size = spec.checks.DML_DATA_TYPE_SIZES[desc["Desc"][name]["DataType"].replace("DML_TENSOR_DATA_TYPE_", "")]
    below = tuple(p for p in (1, 2, 4) if p < size)  # powers of two smaller than the element
    value = draw(cached.sampled(below + (3, 24, 48, 100)))
    desc["Desc"][name]["GuaranteedBaseOffsetAlignment"] = value
    return broken(prof, desc, {rule}, f"{name}.GuaranteedBaseOffsetAlignment = {value}")
