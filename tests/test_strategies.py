"""The strategies: valid draws validate, invalid draws break exactly the rules they claim, and
draws spread over the types, ranks, K positions and tie densities they are designed to cover.

`python tests/test_strategies.py` measures how fast cases and inputs are generated.
"""
from __future__ import annotations

import collections
import math
import time

import numpy as np
import pytest
from slow import slow
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from topkspec import spec
from topkspec.spec import dtypes
from topkspec.spec import Case
from topkspec.strategies import (
    BREAKERS, arrays_for, breakable_rules, case_and_input, invalid_descriptors, k_position,
    tie_density, valid_cases,
)
from topkspec.strategies.cases import DEFAULT_MAX_TOTAL
from topkspec.strategies.tensors import collision_pairs
from topkspec.strategies.invalid import CASE_RULES, IMPOSSIBLE_RULES, carries_cases

PROFILES = spec.STANDARD_PROFILES + ("dml:2.0",)
FAST = settings(max_examples=40, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))


def collect(strategy, count=300):
    """`count` draws of `strategy` from a fixed seed."""
    drawn = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def gather(value):
        drawn.append(value)

    gather()
    return drawn


# -- valid cases ------------------------------------------------------------------------

@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("strict_doc", [False, True])
def test_valid_cases_validate(profile, strict_doc):
    @FAST
    @given(valid_cases(profile, strict_doc=strict_doc))
    def check(case):
        findings = spec.validate(case, strict_doc=strict_doc)
        assert findings == [], f"{case.describe()} drawn as valid, but: {[f.rule for f in findings]}"
        assert math.prod(case.shape) <= DEFAULT_MAX_TOTAL, f"{case.describe()}: more than {DEFAULT_MAX_TOTAL} elements"
    check()


def test_from_type_draws_valid_cases():
    for case in collect(st.from_type(Case), 60):
        assert spec.validate(case) == [], case.describe()


def test_filters_and_bounds():
    cases = collect(valid_cases("dml:5.0", ops=["TOP_K1"], dtypes=["int8", "uint64"], max_rank=3,
                                max_axis_size=100, max_total=300), 100)
    assert {c.op for c in cases} == {"TOP_K1"}
    assert {c.dtype for c in cases} == {"int8", "uint64"}
    assert max(c.rank for c in cases) <= 3
    assert max(c.axis_size for c in cases) <= 100
    assert max(math.prod(c.shape) for c in cases) <= 300
    with pytest.raises(ValueError):
        valid_cases("onnx:10", dtypes=["int8"]).validate()  # TopK-10 has float types only


def test_spread_dml():
    cases = collect(valid_cases("dml:5.0"), 400)
    assert {c.op for c in cases} == {"TOP_K", "TOP_K1"}
    assert {c.dtype for c in cases} == set(spec.value_types("dml:5.0", "TOP_K1"))
    assert {c.rank for c in cases} == set(range(1, 9))
    assert {c.index_dtype for c in cases} == {"uint32", "uint64"}
    assert {c.largest for c in cases if c.op == "TOP_K1"} == {True, False}
    assert {c.largest for c in cases if c.op == "TOP_K"} == {True}
    positions = collections.Counter(k_position(c.k, c.axis_size) for c in cases)
    assert set(positions) == {"1", "middle", "n-1", "n"}, positions
    assert min(positions.values()) >= 20, f"every K position drawn often: {positions}"
    axis_positions = {(c.norm_axis == 0, c.norm_axis == c.rank - 1) for c in cases if c.rank >= 3}
    assert axis_positions == {(True, False), (False, False), (False, True)}
    sizes = {c.axis_size for c in cases}
    assert max(sizes) > 1000, "long axes drawn"
    assert sizes & {63, 64, 65, 127, 128, 129, 255, 256, 257}, "lengths around powers of two drawn"
    assert {1, 2, 3} <= sizes


def test_spread_onnx():
    cases = collect(valid_cases("onnx:11"), 300)
    assert {c.dtype for c in cases} == set(spec.value_types("onnx:11", "TopK"))
    assert any(c.axis < 0 for c in cases) and any(c.axis >= 0 for c in cases)
    assert {c.sorted for c in cases} == {True, False}
    assert {c.largest for c in cases} == {True, False}
    assert {c.index_dtype for c in cases} == {"int64"}
    old = collect(valid_cases("onnx:10"), 60)
    assert all(c.largest and c.sorted for c in old), "TopK-10 has no largest or sorted"


def test_spread_dml_2_1_is_4d():
    cases = collect(valid_cases("dml:2.1"), 60)
    assert {c.rank for c in cases} == {4}
    assert {c.index_dtype for c in cases} == {"uint32"}


def test_strict_doc_keeps_k_below_axis_size():
    cases = collect(valid_cases("dml:3.1", strict_doc=True), 100)
    assert all(c.k < c.axis_size for c in cases)
    assert any(c.k == c.axis_size - 1 for c in cases)


# -- invalid descriptors ------------------------------------------------------------------

def _breakable_pairs():
    return [(profile, rule) for profile in PROFILES for rule in breakable_rules(profile)]


def test_every_descriptor_rule_can_be_broken():
    checked = {r.id for r in spec.RULE_LIST if r.check is not None}
    assert set(BREAKERS) == checked, f"rules without a breaker: {checked - set(BREAKERS)}"
    broken_somewhere = {rule for _, rule in _breakable_pairs()}
    assert broken_somewhere == checked, f"never breakable: {checked - broken_somewhere}"


@pytest.mark.parametrize("profile, rule", _breakable_pairs())
def test_invalid_draws_break_exactly_their_rules(profile, rule):
    @settings(FAST, max_examples=10)
    @given(invalid_descriptors(profile, rule))
    def check(draw):
        assert rule in draw.rules
        reported = {f.rule for f in spec.validate(draw.descriptor, strict_doc=draw.strict_doc)}
        assert reported == set(draw.rules), (
            f"{draw.describe()}: claims {sorted(draw.rules)}, validator reports {sorted(reported)}")
        if not spec.RULES[rule].breakable_alone:
            assert len(draw.rules) >= 2, f"{rule} cannot break alone, yet {draw.describe()}"
        if draw.case is not None:
            assert rule in CASE_RULES, f"{rule} carries a case but is not in CASE_RULES"
            by_case = {f.rule for f in spec.validate(draw.case, strict_doc=draw.strict_doc)}
            assert by_case == set(draw.rules), f"{draw.case.describe()}: case reports {sorted(by_case)}"
    check()


@pytest.mark.parametrize("profile", ["dml:5.0", "onnx:1", "onnx:24"])
def test_any_invalid_draw_is_invalid(profile):
    @FAST
    @given(invalid_descriptors(profile))
    def check(draw):
        reported = {f.rule for f in spec.validate(draw.descriptor, strict_doc=draw.strict_doc)}
        assert reported == set(draw.rules), draw.describe()
    check()


def test_invalid_descriptors_refuses_what_it_cannot_break():
    # checked when first used, as Hypothesis's strategies check their arguments
    with pytest.raises(ValueError, match="unknown rule"):
        invalid_descriptors("dml:5.0", "dml.no.such.rule").validate()
    with pytest.raises(ValueError, match="no descriptor check"):
        invalid_descriptors("dml:5.0", "out.order").validate()
    with pytest.raises(ValueError, match="cannot be broken"):
        invalid_descriptors("dml:2.0", "dml.direction.enum").validate()  # TOP_K1 does not exist at 2_0
    with pytest.raises(ValueError, match="cannot be broken"):
        invalid_descriptors("onnx:11", "onnx.attr.k_matches").validate()  # k is no attribute after TopK-1


@pytest.mark.parametrize("profile", ["dml:5.0", "onnx:11", "onnx:24"])
def test_invalid_cases_are_the_runtime_checkable_ones(profile):
    draws = collect(invalid_descriptors(profile), 500)
    with_case = {rule for d in draws if d.case is not None for rule in d.rules}
    family = profile.split(":")[0]
    claimed = {rule for rule in breakable_rules(profile) if carries_cases(profile, rule)}
    assert with_case == claimed, f"draws carry cases for {sorted(with_case)}, claimed {sorted(claimed)}"
    assert claimed <= CASE_RULES
    assert {rule for d in draws for rule in d.rules} >= set(breakable_rules(profile, strict_doc=False))
    impossible = {rule for d in draws if d.impossible for rule in d.rules}
    assert impossible == {rule for rule in IMPOSSIBLE_RULES if rule.startswith(family)}, impossible


# -- input tensors ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", dtypes.ALL_VALUE_TYPES)
def test_arrays_match_case_and_hold_no_nan_unless_asked(dtype):
    @FAST
    @given(case_and_input("onnx:24", dtypes=[dtype], max_total=2000))
    def check(drawn):
        case, x = drawn
        assert x.shape == case.shape, f"{case.describe()}: array shape {x.shape}"
        assert dtypes.name_of(x.dtype) == dtype, f"array type {x.dtype}, expected {dtype}"
        if x.dtype.kind not in "iu":
            assert not np.isnan(x.astype(np.float64)).any(), f"NaN drawn without allow_nan: {x}"
    check()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int8", "int64", "uint8", "uint64"])
@slow
def test_arrays_reach_special_values(dtype):
    case = Case("onnx:24", "TopK", dtype, (8,), 0, 1, index_dtype="int64")
    seen = collections.Counter()
    for x in collect(arrays_for(case, allow_nan=True), 400):
        for v in x.reshape(-1).tolist():
            seen[(v, math.copysign(1.0, v) if isinstance(v, float) else 0)] += 1
    values = {v for v, _ in seen}
    dt = dtypes.numpy_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        assert {int(info.min), int(info.max)} <= values, f"{dtype}: extremes not drawn"
        pair = collision_pairs(dtype)[0]
        assert set(pair) <= values, f"{dtype}: values that collide when converted not drawn"
    else:
        import ml_dtypes

        info = ml_dtypes.finfo(dt) if dtype == "bfloat16" else np.finfo(dt)
        assert (0.0, -1.0) in seen and (0.0, 1.0) in seen, f"{dtype}: both signed zeros"
        assert {math.inf, -math.inf} <= values
        assert any(isinstance(v, float) and math.isnan(v) for v in values), f"{dtype}: NaN with allow_nan"
        magnitudes = {abs(v) for v in values}
        assert float(info.smallest_subnormal) in magnitudes, f"{dtype}: smallest subnormal not drawn"
        assert float(info.tiny) in magnitudes, f"{dtype}: smallest normal not drawn"
        assert float(info.max) in magnitudes, f"{dtype}: largest finite value not drawn"


def test_tie_densities_spread():
    drawn = collect(case_and_input("onnx:24", max_total=4000), 300)
    buckets = collections.Counter(tie_density(x) for _, x in drawn)
    assert set(buckets) == {"single", "all equal", "heavy ties", "some ties", "no ties"}, buckets


def test_every_adversarial_pattern_is_drawn():
    """Each pattern the bench's coverage table counts turns up in a modest sample: the shape
    and K patterns among any cases, the value patterns in every value type they apply to."""
    from topkspec.strategies.coverage import SHAPE_PATTERNS, VALUE_PATTERNS, applies, patterns_of

    seen = collections.Counter()
    for case, x in collect(case_and_input("onnx:24"), 500):
        found = patterns_of(case, x)
        seen.update(found)
    missing = [p for p in SHAPE_PATTERNS if seen[p] < 2]
    assert not missing, f"shape patterns drawn less than twice in 500 examples: {missing} ({dict(seen)})"
    for dtype in (t for t in dtypes.ALL_VALUE_TYPES if dtypes.numpy_dtype(t).kind in "iu"):
        seen = collections.Counter()
        for case, x in collect(case_and_input("onnx:24", dtypes=[dtype]), 100):
            seen.update(patterns_of(case, x))
        missing = [p for p in VALUE_PATTERNS if applies(p, dtype) and not seen[p]]
        assert not missing, f"{dtype}: value patterns never drawn in 100 examples: {missing} ({dict(seen)})"
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        seen = collections.Counter()
        for case, x in collect(case_and_input("onnx:24", dtypes=[dtype], allow_nan=True), 150):
            seen.update(patterns_of(case, x))
        missing = [p for p in VALUE_PATTERNS if not seen[p]]
        assert not missing, f"{dtype}: value patterns never drawn in 150 examples: {missing} ({dict(seen)})"


def test_coverage_patterns_of_known_inputs():
    from topkspec.strategies.coverage import patterns_of, tally

    case = Case("onnx:24", "TopK", "float32", (2, 4), -1, 1, index_dtype="int64")
    x = np.array([[3, 3, 2, 1], [-0.0, 0.0, 2, 1e-45]], dtype=np.float32)
    assert patterns_of(case, x) == {"K = 1", "ties at K-th (ordinary values)", "signed zeros", "subnormals"}
    assert patterns_of(case.with_(largest=False), x) == {"K = 1", "signed zeros", "subnormals"}
    assert "ties at K-th (ordinary values)" not in patterns_of(case, np.zeros((2, 4), np.float32)), "0 is no ordinary value"
    wide = Case("dml:5.0", "TOP_K1", "int8", (1024, 1, 1, 1, 32), 0, 1023)
    found = patterns_of(wide, np.full(wide.shape, -128, np.int8))
    assert {"K = n-1", "long axis (>= 1024)", "many rows (>= 32), long axis", "rank >= 5 with unit dims",
            "non-last axis", "type extremes"} == found, found
    table = tally([(case, x), (wide, np.zeros(wide.shape, np.int8))])
    assert table["shape"]["K = n-1"] == 50.0 and table["values"]["signed zeros"] == {"float32": 100.0}
    assert table["values"]["infinities"] == {"float32": 0.0}, "no infinity among integers to count"


def test_k_position_and_tie_density_buckets():
    assert [k_position(k, 5) for k in (1, 2, 3, 4, 5)] == ["1", "middle", "middle", "n-1", "n"]
    assert k_position(1, 1) == "n"
    assert tie_density(np.array([1.0])) == "single"
    assert tie_density(np.array([-0.0, 0.0])) == "all equal"
    assert tie_density(np.array([1, 2, 1, 2, 3])) == "heavy ties"
    assert tie_density(np.arange(8) % 7) == "some ties"
    assert tie_density(np.arange(8)) == "no ties"


def main():
    """Cases and inputs generated per second, per profile: python tests/test_strategies.py"""
    for profile in ("dml:5.0", "onnx:24"):
        count = 0
        start = time.perf_counter()
        elements = 0
        for case, x in collect(case_and_input(profile), 500):
            count += 1
            elements += x.size
        spent = time.perf_counter() - start
        print(f"{profile}: {count} cases with inputs in {spent:.2f}s ({count / spent:.0f}/s, "
              f"{elements / count:.0f} elements on average)")
    start = time.perf_counter()
    draws = collect(invalid_descriptors("dml:5.0"), 500)
    print(f"dml:5.0: {len(draws)} invalid descriptors in {time.perf_counter() - start:.2f}s")


if __name__ == "__main__":
    main()


def test_require_nan_puts_nan_in_every_float_input():
    import numpy as np
    from hypothesis import given, settings

    from topkspec.strategies import case_and_input

    seen = []

    @settings(max_examples=60, database=None, derandomize=True)
    @given(case_and_input("onnx:24", dtypes=["float16", "bfloat16", "float32", "float64"], require_nan=True))
    def check(drawn):
        case, x = drawn
        seen.append(bool(np.isnan(x.astype(np.float64)).any()))

    check()
    assert seen and all(seen)
