"""The valid cases of the corpus: small, chosen for coverage, each with the only result the
spec allows.

Every (profile, operator, value type) gets each adversarial pattern that fits it. Inputs are
built from the pattern alone (no random draws), so the corpus is the same on every machine.
A case goes in only when its expected result is unique (see `unique_result`): no NaN, sorted
output, zeros of one sign per sequence (-0.0 against +0.0 is our reading), and, for DirectML,
no tie across the K-th place (which tied element gets in is our reading there), K below the
axis size (K equal to it is ambiguous) and no subnormals (Direct3D's floating-point rules let
a shader flush them to zero, so they may tie with it: Mesa 26's lavapipe does).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from topkspec.spec import Case, dtypes, parse_profile
from topkspec.spec import queries

ONNX_PROFILES = ("onnx:1", "onnx:10", "onnx:11", "onnx:24")
DML_PROFILES = ("dml:2.1", "dml:3.1", "dml:5.0")
PROFILES = ONNX_PROFILES + DML_PROFILES

# The rules every exact result keeps; a pattern adds the ones it aims at.
RESULT_RULES = ("out.shape", "out.dtype.values", "out.dtype.indices", "out.values.select", "out.order",
                "out.indices.base", "out.indices.range_distinct", "out.values.gather", "out.exact")


@dataclass
class ValidCase:
    name: str
    case: Case
    x: np.ndarray
    patterns: tuple
    rules: tuple = field(default=RESULT_RULES)


def file_slug(text: str) -> str:
    """A part of a corpus file's name: lower case, each run of other characters one underscore."""
    import re

    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _ramp(dtype: str, n: int) -> np.ndarray:
    """n distinct values of the type, mixed in sign where it has one, in a fixed shuffled order."""
    np_type = dtypes.numpy_dtype(dtype)
    if dtypes.is_float(dtype):
        values = (np.arange(n) - n // 2) * 0.5
    elif dtypes.is_unsigned(dtype):
        values = np.arange(n)
    else:
        values = np.arange(n) - n // 2
    order = (np.arange(n) * 7 + 3) % n if n % 7 else np.arange(n)[::-1]  # a fixed permutation
    return values[order].astype(np_type)


def _finfo(dtype: str):
    import ml_dtypes  # its finfo knows bfloat16 as well as numpy's float types

    return ml_dtypes.finfo(dtypes.numpy_dtype(dtype))


def _extremes(dtype: str) -> list:
    if dtypes.is_float(dtype):
        info = _finfo(dtype)
        return [np.inf, float(info.max), 1.0, float(-info.max), -np.inf]
    info = np.iinfo(dtypes.numpy_dtype(dtype))
    middle = 2 if info.min == 0 else 0  # apart from min + 1, so nothing ties
    return [int(info.max), int(info.max) - 1, middle, int(info.min) + 1, int(info.min)]


def _array(values, dtype: str) -> np.ndarray:
    return np.array(values, dtype=np.float64 if dtypes.is_float(dtype) else object).astype(dtypes.numpy_dtype(dtype))


def _distinct_capacity(dtype: str) -> int:
    """How many distinct values _ramp can give the type exactly."""
    if dtype in ("int8", "uint8"):
        return 256
    if dtype == "bfloat16":
        return 512  # halves up to 128 stay exact in bfloat16's 8-bit significand
    return 1 << 20


def patterns(dtype: str, family: str):
    """[(pattern, shape, axis, k, largest, x)] for a value type; `family` 'onnx' or 'dml'."""
    out = []
    both = (True, False)
    for largest in both:
        out.append(("distinct", (3, 5), 1, 2, largest, _ramp(dtype, 15).reshape(3, 5)))
        out.append(("k_one", (7,), 0, 1, largest, _ramp(dtype, 7)))
        out.append(("axis_first", (4, 3, 2), 0, 2, largest, _ramp(dtype, 24).reshape(4, 3, 2)))
        out.append(("axis_middle", (2, 5, 3), 1, 3, largest, _ramp(dtype, 30).reshape(2, 5, 3)))
        out.append(("k_near_n", (6,), 0, 5, largest, _ramp(dtype, 6)))
        tied = [2, 5, 5, 1, 5] if largest else [4, 1, 1, 5, 1]
        out.append(("ties_inside_top_k", (5,), 0, 3, largest, _array(tied, dtype)))
        out.append(("extremes", (5,), 0, 3, largest, _array(_extremes(dtype), dtype)))
        if family == "onnx":
            out.append(("k_equals_n", (4,), 0, 4, largest, _ramp(dtype, 4)))
            kth = [3, 1, 3, 2, 3] if largest else [1, 3, 1, 2, 1]
            out.append(("ties_at_kth_place", (5,), 0, 2, largest, _array(kth, dtype)))
        if dtypes.is_float(dtype):
            out.append(("negative_zero", (3,), 0, 2, largest, _array([-0.0, 2.0, -1.0], dtype)))
            tiny = float(_finfo(dtype).smallest_subnormal)
            if family == "onnx":  # Direct3D's float rules let shaders flush subnormals: no one answer
                out.append(("subnormals", (4,), 0, 3, largest, _array([tiny, 2 * tiny, -tiny, 0.0], dtype)))
        if _distinct_capacity(dtype) >= 257:
            out.append(("power_of_two_plus_one", (257,), 0, 256, largest, _ramp(dtype, 257)))
        if dtype in ("float32", "int32"):
            out.append(("long_axis", (2, 1030), 1, 17, largest, _ramp(dtype, 2060).reshape(2, 1030)))
    return out


def _fits(profile: str, op: str, rank: int) -> bool:
    return rank in queries.ranks(profile, op)


def _padded(shape, axis, x, rank: int):
    """The pattern at `rank` dimensions: leading 1s added (DirectML 2_1 takes exactly 4)."""
    extra = rank - len(shape)
    return (1,) * extra + tuple(shape), axis + extra, x.reshape((1,) * extra + tuple(shape))


def unique_result(case: Case, x: np.ndarray) -> str | None:
    """Why the spec allows more than one result for the case, or None when it fixes one."""
    from topkspec.spec.reference import reference_topk

    if not case.sorted:
        return "sorted=0 leaves the order open"
    if dtypes.is_float(case.dtype) and np.isnan(x.astype(np.float64)).any():
        return "NaN has no order in either text"
    family = parse_profile(case.profile).family
    rows = np.moveaxis(x, case.norm_axis, -1).reshape(-1, case.axis_size).astype(np.float64 if dtypes.is_float(case.dtype) else object)
    if dtypes.is_float(case.dtype):
        zeros = rows == 0
        signs = np.signbit(rows.astype(np.float64))
        if (zeros & signs).any(axis=1).__and__((zeros & ~signs).any(axis=1)).any():
            return "-0.0 and +0.0 in one sequence: that they tie is our reading"
    if family == "dml":
        if case.k >= case.axis_size:
            return "K equal to the axis size: the DirectML text and DirectML disagree"
        ordered = np.moveaxis(reference_topk(x, axis=case.norm_axis, k=case.axis_size, largest=case.largest
                                             if case.op != "TOP_K" else True)[0], case.norm_axis, -1)
        ordered = ordered.reshape(-1, case.axis_size)
        if (ordered[:, case.k - 1] == ordered[:, case.k]).any():
            return "a tie across the K-th place: which element gets in is our reading for DirectML"
    return None


def _rules_for(pattern: str, family: str) -> tuple:
    extra = {"ties_inside_top_k": ("out.ties.index_order",),
             "ties_at_kth_place": ("out.ties.index_order", "out.ties.kth_place"),
             "negative_zero": ("out.values.gather",)}.get(pattern, ())
    return RESULT_RULES + tuple(r for r in extra if r not in RESULT_RULES)


def _onnx_cases(profile: str) -> list:
    opset = parse_profile(profile).opset
    out = []
    for dtype in queries.value_types(profile, "TopK"):
        for pattern, shape, axis, k, largest, x in patterns(dtype, "onnx"):
            if not largest and opset in ("1", "10"):
                continue  # no `largest` before TopK-11
            case = Case(profile, "TopK", dtype, tuple(shape), -1 if axis == len(shape) - 1 else axis, k,
                        largest=largest, index_dtype="int64")
            name = f"topk{opset}_{dtype}_{pattern}{'' if largest else '_smallest'}"
            out.append(ValidCase(name, case, x, (pattern,), _rules_for(pattern, "onnx")))
            if pattern == "distinct" and largest and dtype in GRAPH_TYPES:
                out += _graph_cases(out[-1], int(opset))
        if dtype == "float32":
            out += _rank_cases(profile, "TopK", dtype, "int64", f"topk{opset}_{dtype}")
    return out


# The value types whose first case also comes inside each graph context of its opset
# (spec.graphs): float32, and int8, which X's Cast context feeds in a wider type.
GRAPH_TYPES = ("float32", "int8")


def _graph_cases(item: ValidCase, opset: int) -> list:
    """`item` inside each graph context its opset builds (spec.graphs), one case each."""
    from topkspec.spec.graphs import contexts_at

    return [ValidCase(f"{item.name}_graph_{context}", item.case.with_context(context), item.x,
                      item.patterns + (f"graph_{context}",), item.rules) for context in contexts_at(opset)]


def _rank_cases(profile, op, dtype, index_dtype, prefix) -> list:
    """One case per rank the profile allows, the axis in the middle, the other sizes 1 or 2."""
    out = []
    for rank in queries.ranks(profile, op):
        axis = rank // 2
        shape = tuple(5 if d == axis else (2 if d == 0 and rank > 1 else 1) for d in range(rank))
        n = int(np.prod(shape))
        case = Case(profile, op, dtype, shape, axis, 2, index_dtype=index_dtype)
        out.append(ValidCase(f"{prefix}_rank{rank}", case, _ramp(dtype, n).reshape(shape), ("rank",)))
    return out


def _dml_cases(profile: str) -> list:
    level = parse_profile(profile).level_name
    out = []
    for op in queries.ops(profile):
        ranks = queries.ranks(profile, op)
        for dtype in queries.value_types(profile, op):
            for index_dtype in queries.index_types(profile, op):
                for pattern, shape, axis, k, largest, x in patterns(dtype, "dml"):
                    if op == "TOP_K" and not largest:
                        continue  # TOP_K always selects the largest
                    if index_dtype == "uint64" and pattern not in ("distinct", "long_axis", "extremes"):
                        continue  # the wider index type needs few cases
                    rank = len(shape) if len(shape) in ranks else min(r for r in ranks if r >= len(shape))
                    shape, axis, x = _padded(shape, axis, x, rank)
                    case = Case(profile, op, dtype, shape, axis, k, largest=largest, index_dtype=index_dtype)
                    direction = "" if op == "TOP_K" else ("_decreasing" if largest else "_increasing")
                    name = f"{level}_{op.lower()}_{dtype}_{index_dtype}_{pattern}{direction}"
                    out.append(ValidCase(name, case, x, (pattern,), _rules_for(pattern, "dml")))
            if dtype == "float32" and op == "TOP_K1":
                out += _rank_cases(profile, op, dtype, "uint32", f"{level}_{op.lower()}_{dtype}_uint32")
    return out


# Patterns repeated at every profile; the rest run at the lowest profile that has the type.
REPEATED = ("distinct", "ties_inside_top_k", "extremes", "k_equals_n", "rank")


def valid_cases(profiles=PROFILES) -> list:
    """[ValidCase] for the profiles, each with a unique expected result, without duplicates."""
    from topkspec import spec

    out, seen, typed = [], set(), set()
    for profile in profiles:
        family = parse_profile(profile).family
        fresh = set()
        for item in (_onnx_cases(profile) if family == "onnx" else _dml_cases(profile)):
            if unique_result(item.case, item.x) is not None:
                continue
            kind = (family, item.case.op, item.case.dtype, item.case.index_dtype)
            if kind in typed and item.patterns[0] not in REPEATED:
                continue  # a type a lower profile covered in full: the cases that tell versions apart
            fresh.add(kind)
            assert not spec.validate(spec.descriptor(item.case), item.case.profile), item.name
            key = (item.case, item.x.tobytes())
            if key in seen:
                continue
            seen.add(key)
            out.append(item)
        typed |= fresh
    return out
