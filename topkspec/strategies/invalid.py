"""Invalid descriptors: each draw starts from a valid case and breaks one named rule.

`BREAKERS` maps every descriptor rule with a check to a function (profile) -> strategy of
InvalidDraw, or None where the profile gives no way to break it. A draw's `rules` are exactly
the rules `spec.validate` reports for it: the rule it breaks plus any rule that cannot help
breaking with it (see the rule's `co_broken`).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from hypothesis import event, strategies as st

from topkspec import dtypes, spec
from topkspec.spec import Case
from topkspec.strategies.descriptors import valid_cases

_TENSORS = ("InputTensor", "OutputValueTensor", "OutputIndexTensor")
_DML_TYPES = list(spec.tables.DML_DATA_TYPES)
_UINT_MAX = 2**32 - 1


@dataclass(frozen=True)
class InvalidDraw:
    """A descriptor that breaks `rules`, judged at `profile` (the level/opset it names).

    `case` is the Case the descriptor describes when the breakage is expressible as one
    (K = 0, K > n, axis out of range, unsupported value/index type or rank), for checking that
    a runtime rejects it; otherwise None."""
    descriptor: dict
    rules: frozenset
    profile: str
    case: Case | None = None
    strict_doc: bool = False
    how: str = ""  # what was broken, in words

    def describe(self) -> str:
        return f"{', '.join(sorted(self.rules))}: {self.how}"

    @property
    def impossible(self) -> bool:
        """True when no TopK can compute the case (K or axis out of range), so any
        implementation must refuse it; False when it breaks what the profile supports (a type,
        rank or index type), which an implementation that does not know profiles may compute."""
        return self.case is not None and self.rules <= IMPOSSIBLE_RULES


# Rules whose breakage leaves nothing to compute.
IMPOSSIBLE_RULES = frozenset({"dml.k.positive", "dml.k.max", "dml.axis.range",
                              "onnx.k.positive", "onnx.k.max", "onnx.axis.range"})
# Rules whose breakers can carry a Case, so a call can show whether a runtime refuses them;
# the rest (a malformed member, an attribute at the wrong opset) only `validate` judges.
CASE_RULES = IMPOSSIBLE_RULES | frozenset({
    "dml.k.max_strict", "dml.rank.supported", "dml.dtype.value_supported", "dml.dtype.index_supported",
    "onnx.dtype.T"})


def carries_cases(profile, rule: str) -> bool:
    """Whether draws breaking `rule` at `profile` can carry a Case, so that a call can show
    the refusal. onnx.dtype.T carries one only where some value type lies outside T."""
    if rule not in CASE_RULES:
        return False
    if rule == "onnx.dtype.T":
        allowed = spec.value_types(profile, "TopK")
        return any(t not in allowed for t in dtypes.ALL_VALUE_TYPES)
    return True


def _small_cases(profile, **kw):
    return valid_cases(profile, max_axis_size=64, max_total=512, **kw)


def _draw(prof, case_or_desc, rules, how, *, case=None, strict_doc=False):
    desc = case_or_desc if isinstance(case_or_desc, dict) else spec.descriptor(case_or_desc)
    event(f"invalid: {', '.join(sorted(rules))}")
    return InvalidDraw(descriptor=desc, rules=frozenset(rules), profile=prof, case=case,
                       strict_doc=strict_doc, how=how)


def _dml_name(canonical: str) -> str:
    return "DML_TENSOR_DATA_TYPE_" + canonical.upper()


# -- DirectML ---------------------------------------------------------------------------------

def _dml_desc_fields(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        body = desc["Desc"]
        how = draw(st.sampled_from(["missing", "unknown", "not a UINT"]))
        if how == "missing":
            member = draw(st.sampled_from([m for m in ("Axis", "K", "AxisDirection") if m in body]))
            del body[member]
            how = f"member {member} removed"
        elif how == "unknown":
            member = draw(st.sampled_from(["AxisDirection", "Largest", "Sorted"]).filter(
                lambda m: m not in body))
            body[member] = 1
            how = f"unknown member {member} added"
        else:
            member = draw(st.sampled_from(["Axis", "K"]))
            body[member] = draw(st.sampled_from([-1, _UINT_MAX + 1, str(body[member]), 1.0 * body[member]]))
            how = f"{member} = {body[member]!r}"
        return _draw(prof, desc, {"dml.desc.fields"}, how)
    return draw()


def _dml_tensor_fields(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        name = draw(st.sampled_from(_TENSORS))
        tensor = desc["Desc"][name]
        how = draw(st.sampled_from(["missing", "unknown field", "bad DataType", "bad Sizes",
                                    "bad optional"]))
        if how == "missing":
            field = draw(st.sampled_from(["DataType", "Sizes"]))
            del tensor[field]
            how = f"{name}.{field} removed"
        elif how == "unknown field":
            tensor["Layout"] = "NCHW"
            how = f"{name} has unknown field Layout"
        elif how == "bad DataType":
            tensor["DataType"] = draw(st.sampled_from(["DML_TENSOR_DATA_TYPE_BOOL", "BFLOAT16", 0, 12]))
            how = f"{name}.DataType = {tensor['DataType']!r}"
        elif how == "bad Sizes":
            i = draw(st.integers(0, len(tensor["Sizes"]) - 1))
            tensor["Sizes"][i] = draw(st.sampled_from([-1, _UINT_MAX + 1, "2", 2.0]))
            how = f"{name}.Sizes[{i}] = {tensor['Sizes'][i]!r}"
        else:
            field = draw(st.sampled_from(["TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment", "Flags"]))
            tensor[field] = draw(st.sampled_from([-16, "16", 16.0]))
            how = f"{name}.{field} = {tensor[field]!r}"
        return _draw(prof, desc, {"dml.tensor.fields"}, how)
    return draw()


def _dml_operator_available(prof):
    # A level below the operator's first (TOP_K arrives at 2_0, TOP_K1 at 2_1); the descriptor names it.
    missing_at = {"TOP_K1": ["1_0", "2_0"], "TOP_K": ["1_0"]}

    @st.composite
    def draw(draw):
        op = draw(st.sampled_from(sorted(missing_at, reverse=True)))
        case = draw(_small_cases("dml:3.1", ops=[op]))
        level = draw(st.sampled_from(missing_at[op]))
        desc = spec.descriptor(case)
        desc["FeatureLevel"] = "DML_FEATURE_LEVEL_" + level
        return _draw("dml:" + level.replace("_", "."), desc, {"dml.operator.available"},
                     f"{op} at DML_FEATURE_LEVEL_{level}")
    return draw()


def _dml_sizes_positive(prof):
    rank_choices = [r for r in spec.ranks(prof, spec.ops(prof)[-1]) if r >= 2]
    if not rank_choices:
        return None

    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof, ranks=rank_choices))
        desc = spec.descriptor(case)
        dim = draw(st.sampled_from([d for d in range(case.rank) if d != case.norm_axis]))
        for name in _TENSORS:
            desc["Desc"][name]["Sizes"][dim] = 0
        return _draw(prof, desc, {"dml.tensor.sizes_positive"}, f"dimension {dim} has size 0")
    return draw()


def _dml_rank_same(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        names = draw(st.sampled_from([("OutputValueTensor",), ("OutputIndexTensor",),
                                      ("OutputValueTensor", "OutputIndexTensor")]))
        grow = case.rank == 1 or draw(st.booleans())
        new_rank = case.rank + 1 if grow else case.rank - 1
        for name in names:
            sizes = desc["Desc"][name]["Sizes"]
            desc["Desc"][name]["Sizes"] = [1] + sizes if grow else sizes[1:]
        rules = {"dml.rank.same"}
        if new_rank not in spec.ranks(prof, case.op):
            rules.add("dml.rank.supported")  # the changed outputs now have a rank the table lacks
        return _draw(prof, desc, rules, f"{' and '.join(names)} rank {new_rank}, input rank {case.rank}")
    return draw()


def _dml_rank_supported(prof):
    allowed = set(spec.ranks(prof, spec.ops(prof)[-1]))
    unsupported = [r for r in range(1, 11) if r not in allowed]

    @st.composite
    def draw(draw):
        rank = draw(st.sampled_from(unsupported))
        case = draw(_small_cases(prof, ranks=[rank], max_rank=10))
        return _draw(prof, case, {"dml.rank.supported"}, f"rank {rank}", case=case)
    return draw()


def _dml_value_supported(prof):
    @st.composite
    def draw(draw):
        op = draw(st.sampled_from(spec.ops(prof)))
        allowed = spec.value_types(prof, op)
        dtype = draw(st.sampled_from([dtypes.canonical(t) for t in _DML_TYPES
                                      if dtypes.canonical(t) not in allowed]))
        base = draw(_small_cases(prof, ops=[op]))
        case = base.with_(dtype=dtype)
        return _draw(prof, case, {"dml.dtype.value_supported"}, f"{op} values of type {dtype}", case=case)
    return draw()


def _dml_index_supported(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        allowed = spec.index_types(prof, case.op)
        index = draw(st.sampled_from([dtypes.canonical(t) for t in _DML_TYPES
                                      if dtypes.canonical(t) not in allowed]))
        case = case.with_(index_dtype=index)
        return _draw(prof, case, {"dml.dtype.index_supported"}, f"indices of type {index}", case=case)
    return draw()


def _dml_dtype_same(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        other = draw(st.sampled_from([t for t in spec.value_types(prof, case.op) if t != case.dtype]))
        desc = spec.descriptor(case)
        desc["Desc"]["OutputValueTensor"]["DataType"] = _dml_name(other)
        return _draw(prof, desc, {"dml.dtype.same"}, f"input {case.dtype}, output values {other}")
    return draw()


def _dml_axis_range(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        case = case.with_(axis=case.rank + draw(st.sampled_from([0, 1, 7, _UINT_MAX - case.rank])))
        return _draw(prof, case, {"dml.axis.range"}, f"Axis {case.axis} for rank {case.rank}", case=case)
    return draw()


def _dml_k_positive(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof)).with_(k=0)
        return _draw(prof, case, {"dml.k.positive"}, "K = 0", case=case)
    return draw()


def _dml_k_max(prof, *, strict_doc=False):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        low = case.axis_size if strict_doc else case.axis_size + 1
        case = case.with_(k=draw(st.sampled_from([low, low + 1, case.axis_size * 2 + 1])))
        rule = "dml.k.max_strict" if strict_doc else "dml.k.max"
        return _draw(prof, case, {rule}, f"K = {case.k} for axis size {case.axis_size}",
                     case=case, strict_doc=strict_doc)
    return draw()


def _dml_direction_enum(prof):
    if "TOP_K1" not in spec.ops(prof):
        return None

    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof, ops=["TOP_K1"]))
        desc = spec.descriptor(case)
        desc["Desc"]["AxisDirection"] = draw(st.sampled_from(
            [2, -1, 255, "DML_AXIS_DIRECTION_NONE", "ASCENDING"]))
        return _draw(prof, desc, {"dml.direction.enum"}, f"AxisDirection = {desc['Desc']['AxisDirection']!r}")
    return draw()


def _dml_output_sizes(prof, which):
    """Outputs of the wrong sizes. `which` is the rule asked for; each variant breaks the
    rules that an output differing from its expected sizes (and from the other output) breaks."""
    variants = {
        "dml.shape.output_values": [("OutputValueTensor",), ("both, same",)],
        "dml.shape.output_indices": [("OutputIndexTensor",), ("both, same",)],
        "dml.shape.outputs_same_sizes": [("OutputValueTensor",), ("OutputIndexTensor",), ("both, different",)],
    }[which]

    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        variant = draw(st.sampled_from(variants))[0]
        dim = draw(st.integers(0, case.rank - 1))
        grow = draw(st.integers(1, 3))
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
        return _draw(prof, desc, rules, f"{variant}: dimension {dim} grown by {grow}")
    return draw()


def _packed_bytes(sizes, dtype_name):
    count = 1
    for s in sizes:
        count *= s
    size = count * dtypes.itemsize(dtypes.canonical(dtype_name))
    return (size + 3) // 4 * 4


def _dml_strides(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        name = draw(st.sampled_from(_TENSORS))
        count = draw(st.sampled_from([c for c in (case.rank + 1, case.rank - 1, 0) if c >= 0 and c != case.rank]))
        desc["Desc"][name]["Strides"] = [1] * count
        return _draw(prof, desc, {"dml.tensor.strides"}, f"{name} has {count} strides for rank {case.rank}")
    return draw()


def _dml_total_size(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        name = draw(st.sampled_from(_TENSORS))
        tensor = desc["Desc"][name]
        need = _packed_bytes(tensor["Sizes"], tensor["DataType"])
        tensor["TotalTensorSizeInBytes"] = draw(st.integers(0, need - 1))
        return _draw(prof, desc, {"dml.tensor.total_size"},
                     f"{name}.TotalTensorSizeInBytes = {tensor['TotalTensorSizeInBytes']} < {need}")
    return draw()


def _dml_alignment(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        name = draw(st.sampled_from(_TENSORS))
        size = spec.checks.DML_DATA_TYPE_SIZES[desc["Desc"][name]["DataType"].replace("DML_TENSOR_DATA_TYPE_", "")]
        below = [p for p in (1, 2, 4) if p < size]  # powers of two smaller than the element
        value = draw(st.sampled_from(below + [3, 24, 48, 100]))
        desc["Desc"][name]["GuaranteedBaseOffsetAlignment"] = value
        return _draw(prof, desc, {"dml.tensor.alignment"}, f"{name}.GuaranteedBaseOffsetAlignment = {value}")
    return draw()


# -- ONNX -------------------------------------------------------------------------------------

def _onnx_desc_fields(prof):
    @st.composite
    def draw(draw):
        desc = spec.descriptor(draw(_small_cases(prof)))
        how = draw(st.sampled_from(["op_type", "unknown key", "shape", "k", "attribute", "dtype"]))
        if how == "op_type":
            desc["op_type"] = draw(st.sampled_from(["Topk", "TopK1", "ArgMax"]))
        elif how == "unknown key":
            desc[draw(st.sampled_from(["domain", "Y", "inputs"]))] = ""
        elif how == "shape":
            desc["X"]["shape"][draw(st.integers(0, len(desc["X"]["shape"]) - 1))] = draw(
                st.sampled_from([-1, 2.5, "3"]))
        elif how == "k":
            desc["k"] = draw(st.sampled_from([str(desc["k"]), float(desc["k"]), None]))
        elif how == "attribute":
            desc["attributes"]["axis"] = draw(st.sampled_from([str(desc["attributes"]["axis"]), 0.5]))
        else:
            desc["X"]["dtype"] = draw(st.sampled_from([1, None]))
        return _draw(prof, desc, {"onnx.desc.fields"}, f"{how} malformed")
    return draw()


def _onnx_attr_allowed(prof):
    allowed = spec.tables.ONNX_VERSIONS[spec.parse_profile(prof).opset]["attributes"]
    extra = [a for a in ("k", "largest", "sorted", "select_last_index", "stable") if a not in allowed]

    @st.composite
    def draw(draw):
        desc = spec.descriptor(draw(_small_cases(prof)))
        name = draw(st.sampled_from(extra))
        desc["attributes"][name] = draw(st.sampled_from([1, 0, 5]))
        return _draw(prof, desc, {"onnx.attr.allowed"}, f"attribute {name} at {prof}")
    return draw()


def _onnx_k_matches(prof):
    if "k" not in spec.tables.ONNX_VERSIONS[spec.parse_profile(prof).opset]["attributes"]:
        return None

    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        desc["attributes"]["k"] = case.k + draw(st.sampled_from([1, -1, 5]))
        return _draw(prof, desc, {"onnx.attr.k_matches"}, f"attribute k {desc['attributes']['k']}, k {case.k}")
    return draw()


def _onnx_dtype(prof):
    allowed = spec.value_types(prof, "TopK")
    # Canonical types outside T give a Case; names outside every table never do.
    canonical = [t for t in dtypes.ALL_VALUE_TYPES if t not in allowed]
    foreign = ["bool", "string", "complex64", "float8e4m3fn"]

    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        dtype = draw(st.sampled_from(canonical + foreign))
        if dtype in canonical:
            case = case.with_(dtype=dtype)
            return _draw(prof, case, {"onnx.dtype.T"}, f"X of type {dtype}", case=case)
        desc = spec.descriptor(case)
        desc["X"]["dtype"] = dtype
        return _draw(prof, desc, {"onnx.dtype.T"}, f"X of type {dtype}")
    return draw()


def _onnx_axis_range(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        r = case.rank
        case = case.with_(axis=draw(st.sampled_from([r, -r - 1, r + 3, -r - 4])))
        return _draw(prof, case, {"onnx.axis.range"}, f"axis {case.axis} for rank {r}", case=case)
    return draw()


def _onnx_k_single(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        desc = spec.descriptor(case)
        desc["k"] = draw(st.sampled_from([[], [case.k, case.k], [case.k, 1, 1]]))
        return _draw(prof, desc, {"onnx.k.single"}, f"k = {desc['k']!r}")
    return draw()


def _onnx_k_positive(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        k = draw(st.sampled_from([0, -1, -case.axis_size]))
        case = case.with_(k=k)
        desc = spec.descriptor(case)
        if draw(st.booleans()):
            desc["k"] = [k]  # K as the one-element tensor it is from opset 10
        return _draw(prof, desc, {"onnx.k.positive"}, f"k = {k}", case=case)
    return draw()


def _onnx_k_max(prof):
    @st.composite
    def draw(draw):
        case = draw(_small_cases(prof))
        case = case.with_(k=case.axis_size + draw(st.sampled_from([1, 2, case.axis_size + 1])))
        return _draw(prof, case, {"onnx.k.max"}, f"k = {case.k} for axis size {case.axis_size}", case=case)
    return draw()


def _onnx_boolean(prof):
    allowed = spec.tables.ONNX_VERSIONS[spec.parse_profile(prof).opset]["attributes"]
    names = [a for a in ("largest", "sorted") if a in allowed]
    if not names:
        return None

    @st.composite
    def draw(draw):
        desc = spec.descriptor(draw(_small_cases(prof)))
        name = draw(st.sampled_from(names))
        desc["attributes"][name] = draw(st.sampled_from([2, -1, 255]))
        return _draw(prof, desc, {"onnx.attr.boolean"}, f"{name} = {desc['attributes'][name]}")
    return draw()


BREAKERS = {
    "dml.desc.fields": _dml_desc_fields,
    "dml.tensor.fields": _dml_tensor_fields,
    "dml.operator.available": _dml_operator_available,
    "dml.tensor.sizes_positive": _dml_sizes_positive,
    "dml.rank.same": _dml_rank_same,
    "dml.rank.supported": _dml_rank_supported,
    "dml.dtype.value_supported": _dml_value_supported,
    "dml.dtype.index_supported": _dml_index_supported,
    "dml.dtype.same": _dml_dtype_same,
    "dml.axis.range": _dml_axis_range,
    "dml.k.positive": _dml_k_positive,
    "dml.k.max": _dml_k_max,
    "dml.k.max_strict": lambda prof: _dml_k_max(prof, strict_doc=True),
    "dml.direction.enum": _dml_direction_enum,
    "dml.shape.output_values": lambda prof: _dml_output_sizes(prof, "dml.shape.output_values"),
    "dml.shape.output_indices": lambda prof: _dml_output_sizes(prof, "dml.shape.output_indices"),
    "dml.shape.outputs_same_sizes": lambda prof: _dml_output_sizes(prof, "dml.shape.outputs_same_sizes"),
    "dml.tensor.strides": _dml_strides,
    "dml.tensor.total_size": _dml_total_size,
    "dml.tensor.alignment": _dml_alignment,
    "onnx.desc.fields": _onnx_desc_fields,
    "onnx.attr.allowed": _onnx_attr_allowed,
    "onnx.attr.k_matches": _onnx_k_matches,
    "onnx.dtype.T": _onnx_dtype,
    "onnx.axis.range": _onnx_axis_range,
    "onnx.k.single": _onnx_k_single,
    "onnx.k.positive": _onnx_k_positive,
    "onnx.k.max": _onnx_k_max,
    "onnx.attr.boolean": _onnx_boolean,
}


def breakable_rules(profile, *, strict_doc=None) -> list[str]:
    """Ids of the descriptor rules `invalid_descriptors(profile, rule)` can break.
    strict_doc: None for all, True/False for the rules active under that setting."""
    prof = spec.parse_profile(profile)
    out = []
    for rule in spec.RULE_LIST:
        if rule.check is None or rule.scope != prof.family:
            continue
        if strict_doc is True and rule.lenient_only or strict_doc is False and rule.strict_only:
            continue
        if not any(op in rule.ops for op in spec.ops(prof)) and rule.id != "dml.operator.available":
            continue
        if BREAKERS[rule.id](prof.name) is not None:
            out.append(rule.id)
    return out


def invalid_descriptors(profile, rule=None) -> st.SearchStrategy[InvalidDraw]:
    """Descriptors that break `rule` (any breakable rule of the profile when None).

    Raises ValueError for a rule that is unknown, has no check, or cannot be broken at the
    profile (e.g. dml.direction.enum where TOP_K1 does not exist)."""
    prof = spec.parse_profile(profile)
    if rule is None:  # the rule first, so every rule is drawn about as often
        strategies = {r: BREAKERS[r](prof.name) for r in breakable_rules(prof)}
        return st.sampled_from(sorted(strategies)).flatmap(strategies.__getitem__)
    if rule not in spec.RULES:
        raise ValueError(f"unknown rule {rule!r}")
    if rule not in BREAKERS:
        raise ValueError(f"rule {rule} has no descriptor check, so no descriptor breaks it")
    if rule not in breakable_rules(prof):
        raise ValueError(f"rule {rule} cannot be broken at {prof.name}")
    return BREAKERS[rule](prof.name)
