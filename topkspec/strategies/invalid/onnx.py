"""Breakers of the ONNX descriptor rules (see registry.py)."""
from __future__ import annotations

from topkspec import spec
from topkspec.spec import dtypes
from topkspec.strategies import cached
from topkspec.strategies.invalid.registry import breaks, broken, pick, small_case

_FOREIGN_TYPES = ("bool", "string", "complex64", "float8e4m3fn")  # outside every table


def _attributes(prof) -> tuple:
    return tuple(spec.tables.ONNX_VERSIONS[prof.opset]["attributes"])


def _descriptor(draw, prof):
    case = small_case(draw, prof.name)
    return case, spec.descriptor(case)


@breaks("onnx.desc.fields")
def _desc_fields(draw, prof, rule):
    _, desc = _descriptor(draw, prof)
    how = draw(cached.sampled(("op_type", "unknown key", "shape", "k", "attribute", "dtype")))
    if how == "op_type":
        desc["op_type"] = draw(cached.sampled(("Topk", "TopK1", "ArgMax")))
    elif how == "unknown key":
        desc[draw(cached.sampled(("domain", "Y", "inputs")))] = ""
    elif how == "shape":
        desc["X"]["shape"][draw(cached.integers(0, len(desc["X"]["shape"]) - 1))] = draw(
            cached.sampled((-1, 2.5, "3")))
    elif how == "k":
        desc["k"] = pick(draw, [str(desc["k"]), float(desc["k"]), True])  # null is a form: K unknown
    elif how == "attribute":
        desc["attributes"]["axis"] = pick(draw, [str(desc["attributes"]["axis"]), 0.5])
    else:
        desc["X"]["dtype"] = draw(cached.sampled((1, None)))
    return broken(prof, desc, {rule}, f"{how} malformed")


@breaks("onnx.attr.allowed")
def _attr_allowed(draw, prof, rule):
    _, desc = _descriptor(draw, prof)
    name = pick(draw, [a for a in ("k", "largest", "sorted", "select_last_index", "stable")
                       if a not in _attributes(prof)])
    desc["attributes"][name] = draw(cached.sampled((1, 0, 5)))
    return broken(prof, desc, {rule}, f"attribute {name} at {prof.name}")


@breaks("onnx.attr.k_matches", when=lambda prof: "k" in _attributes(prof))
def _k_matches(draw, prof, rule):
    case, desc = _descriptor(draw, prof)
    desc["attributes"]["k"] = case.k + draw(cached.sampled((1, -1, 5)))
    return broken(prof, desc, {rule}, f"attribute k {desc['attributes']['k']}, k {case.k}")


@breaks("onnx.dtype.T")
def _dtype(draw, prof, rule):
    # Canonical types outside T give a Case; names outside every table never do.
    allowed = spec.value_types(prof, "TopK")
    canonical = [t for t in dtypes.ALL_VALUE_TYPES if t not in allowed]
    case = small_case(draw, prof.name)
    dtype = pick(draw, canonical + list(_FOREIGN_TYPES))
    if dtype in canonical:
        case = case.with_(dtype=dtype)
        return broken(prof, case, {rule}, f"X of type {dtype}", case=case)
    desc = spec.descriptor(case)
    desc["X"]["dtype"] = dtype
    return broken(prof, desc, {rule}, f"X of type {dtype}")


@breaks("onnx.axis.range")
def _axis_range(draw, prof, rule):
    case = small_case(draw, prof.name)
    r = case.rank
    case = case.with_(axis=pick(draw, [r, -r - 1, r + 3, -r - 4]))
    return broken(prof, case, {rule}, f"axis {case.axis} for rank {r}", case=case)


@breaks("onnx.k.single")
def _k_single(draw, prof, rule):
    case, desc = _descriptor(draw, prof)
    desc["k"] = pick(draw, [[], [case.k, case.k], [case.k, 1, 1]])
    return broken(prof, desc, {rule}, f"k = {desc['k']!r}")


@breaks("onnx.k.positive")
def _k_positive(draw, prof, rule):
    case = small_case(draw, prof.name)
    k = pick(draw, [0, -1, -case.axis_size])
    case = case.with_(k=k)
    desc = spec.descriptor(case)
    if draw(cached.sampled((False, True))):
        desc["k"] = [k]  # K as the one-element tensor it is from opset 10
    return broken(prof, desc, {rule}, f"k = {k}", case=case)


@breaks("onnx.k.max")
def _k_max(draw, prof, rule):
    case = small_case(draw, prof.name)
    case = case.with_(k=case.axis_size + pick(draw, [1, 2, case.axis_size + 1]))
    return broken(prof, case, {rule}, f"k = {case.k} for axis size {case.axis_size}", case=case)


def _booleans(prof) -> list:
    return [a for a in ("largest", "sorted") if a in _attributes(prof)]


@breaks("onnx.attr.boolean", when=lambda prof: bool(_booleans(prof)))
def _boolean(draw, prof, rule):
    _, desc = _descriptor(draw, prof)
    name = pick(draw, _booleans(prof))
    desc["attributes"][name] = draw(cached.sampled((2, -1, 255)))
    return broken(prof, desc, {rule}, f"{name} = {desc['attributes'][name]}")
