"""Every property catches a planted bug, and Hypothesis shrinks it to a small case.

Each row of PLANTED names a bug from planted_bugs.py, the property that must catch it, the
strategy that drives it, the rules the violation must name, and how small the shrunk case
must be. `python tests/test_properties_planted.py` times how long each bug takes to find.
"""
from __future__ import annotations

import functools
import math
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from slow import slow
from hypothesis import HealthCheck, Phase, find, settings

sys.path.insert(0, str(Path(__file__).parent))
import planted_bugs as bugs  # noqa: E402
import planted_layouts as layouts  # noqa: E402

from topkspec import spec  # noqa: E402
from topkspec.properties.failures import ACCEPTS_INVALID, NONDETERMINISTIC, REJECTS_VALID, Violation  # noqa: E402
from topkspec.properties import (  # noqa: E402
    check_accepts_valid, check_axis_moves, check_deterministic, check_dtypes, check_exact, check_gather,
    check_indices, check_nan_policy_free, check_order, check_prefix, check_rejects_invalid, check_result,
    check_select, check_shape, check_ties, check_topk_equals_topk1, check_unsorted_set,
)
from topkspec.properties.nan_order import check_nan_order  # noqa: E402
from topkspec.properties.self_consistency import (  # noqa: E402
    check_self_axis, check_self_batch, check_self_k_input, check_self_prefix, check_self_repeat,
)
from topkspec.strategies import case_and_input, invalid_descriptors  # noqa: E402
from topkspec.strategies.layouts import layout_inputs  # noqa: E402
from topkspec.properties.layouts import (  # noqa: E402
    check_half_precision_call, check_no_write_outside, check_same_layout, judges,
)

FIND_SETTINGS = settings(max_examples=1000, derandomize=True, database=None, deadline=None,
                         suppress_health_check=list(HealthCheck))


def direct_run(fn):
    """run(case, x) for a plain callable, with no conversion of its outputs."""
    def run(case, x):
        values, indices = fn(x, axis=case.norm_axis, k=case.k, largest=case.largest)
        return np.asarray(values), np.asarray(indices)
    return run


def result_kind(check):
    """Predicate: the callable's result on (case, x) breaks `check`. Plain callables return
    int64 indices, so cases are judged with int64 indices."""
    def predicate(fn):
        run = direct_run(fn)

        def fails(drawn):
            case, x = drawn
            case = case.with_(index_dtype="int64")
            try:
                values, indices = run(case, x)
            except ValueError:
                return False
            return _raises(check, case, x, values, indices)
        return fails
    return predicate


def metamorphic_kind(check, **options):
    """Predicate: the relation `check` breaks on (case, x), called with `options` (what a run
    passes: a contract that leaves ties open, the ways the target passes K)."""
    def predicate(fn):
        run = fn if getattr(fn, "takes_case", False) else direct_run(fn)

        def fails(drawn):
            case, x = drawn
            return _raises(functools.partial(check, **options), case, x, run)
        return fails
    predicate.options = options
    return predicate


def accepts_kind(fn):
    run = direct_run(fn)

    def fails(drawn):
        case, x = drawn
        return _raises(check_accepts_valid, case, run, x)
    return fails


def rejects_kind(fn):
    run = direct_run(fn)

    def fails(draw):
        return _raises(check_rejects_invalid, draw, run)
    return fails


def _raises(check, *args) -> bool:
    try:
        check(*args)
    except Violation:
        return True
    return False


def _unsorted(profile, **kw):
    return case_and_input(profile, **kw).map(lambda ci: (ci[0].with_(sorted=False), ci[1]))


def _topk_path_bug(case, x):
    """A DirectML runtime whose TOP_K keeps the last equal value at the K-th place."""
    fn = bugs.last_equal_at_kth if case.op == "TOP_K" else bugs.CORRECT
    return direct_run(fn)(case, x)


_topk_path_bug.takes_case = True


@dataclass
class Planted:
    bug: str  # function name in planted_bugs (or a local run for metamorphic rows)
    check: object
    predicate: object  # fn -> (drawn -> bool)
    strategy: object
    rules: tuple  # the violation names all of these
    # Shrinking aims (measured by main(), not asserted): at most this many input elements and
    # dimensions longer than 1.
    max_total: int = 16
    max_rank: int = 1
    failure_class: str | None = None

    @property
    def id(self):
        return f"{self.bug}-{self.check.__name__}"

    def fn(self):
        if self.bug == "topk_path_bug":
            return _topk_path_bug
        return getattr(layouts, self.bug) if hasattr(layouts, self.bug) else getattr(bugs, self.bug)


def _ci(profile="onnx:24", **kw):
    return case_and_input(profile, **kw)


def _nan(profile="onnx:24"):
    """Float inputs that hold NaN, of both signs: where its place is open."""
    return case_and_input(profile, dtypes=["float32", "float16"], allow_nan=True, require_nan=True)


def _laid(profile="dml:5.0"):
    """DirectML cases with a drawn layout (strategies.layouts), laid-out ones only."""
    return layout_inputs(case_and_input(profile)).filter(lambda ci: not ci[0].layout.is_plain)


PLANTED = [
    Planted("squeezes_unit_dims", check_shape, result_kind(check_shape), _ci(), ("out.shape",)),
    Planted("always_last_axis", check_shape, result_kind(check_shape), _ci(), ("out.shape",), max_rank=2),
    Planted("widened_values", check_dtypes, result_kind(check_dtypes), _ci(), ("out.dtype.values",)),
    Planted("int32_indices", check_dtypes, result_kind(check_dtypes), _ci(), ("out.dtype.indices",)),
    Planted("zero_padding_to_power_of_two", check_indices, result_kind(check_indices), _ci(),
            ("out.indices.range_distinct",)),
    Planted("one_based_indices", check_indices, result_kind(check_indices), _ci(),
            ("out.indices.range_distinct", "out.indices.base")),
    Planted("flat_indices", check_indices, result_kind(check_indices), _ci(),
            ("out.indices.range_distinct", "out.indices.base"), max_rank=2),
    Planted("duplicate_index_on_ties", check_indices, result_kind(check_indices), _ci(),
            ("out.indices.range_distinct",)),
    Planted("values_from_next_sequence", check_gather, result_kind(check_gather), _ci(),
            ("out.values.gather",), max_rank=2),
    Planted("zero_sign_dropped", check_gather, result_kind(check_gather), _ci(), ("out.values.gather",)),
    Planted("narrowing_to_float32", check_gather, result_kind(check_gather), _ci(dtypes=["int64", "uint64"]),
            ("out.values.gather",)),
    Planted("narrowing_to_float16", check_select, result_kind(check_select), _ci(dtypes=["float32"]),
            ("out.values.select",)),
    Planted("negate_for_smallest", check_select, result_kind(check_select), _ci(dtypes=["int8"]),
            ("out.values.select",)),
    Planted("ignores_direction", check_select, result_kind(check_select), _ci(), ("out.values.select",)),
    Planted("index_order_output", check_order, result_kind(check_order), _ci(), ("out.order",)),
    Planted("last_equal_at_kth", check_ties, result_kind(check_ties), _ci(), ("out.ties.kth_place",)),
    Planted("signed_zero_order", check_ties, result_kind(check_ties), _ci(dtypes=["float32", "float16"]),
            ("out.ties.signed_zero",)),
    Planted("heap_path_above_64", check_ties, result_kind(check_ties), _ci(), ("out.ties.kth_place",),
            max_total=130),
    Planted("narrowing_to_float16", check_exact, result_kind(check_exact), _ci(dtypes=["float32"]),
            ("out.exact",)),
    Planted("last_equal_at_kth", check_unsorted_set, result_kind(check_unsorted_set), _unsorted("onnx:11"),
            ("out.unsorted.set",)),
    Planted("nan_index_out_of_range", check_nan_policy_free, result_kind(check_nan_policy_free),
            _ci(dtypes=["float32"], allow_nan=True), ("out.indices.range_distinct", "out.nan.unspecified")),
    Planted("nan_placed_last", check_nan_order, result_kind(check_nan_order),
            _ci(dtypes=["float32"], allow_nan=True, require_nan=True), ("out.nan.order",)),
    Planted("nan_breaks_order", check_nan_policy_free, result_kind(check_nan_policy_free),
            _ci(dtypes=["float32"], allow_nan=True), ("out.nan.unspecified",), max_total=32, max_rank=2),
    Planted("k_over_half_ties", check_prefix, metamorphic_kind(check_prefix), _ci(), ("out.prefix",)),
    Planted("inner_axis_ties", check_axis_moves, metamorphic_kind(check_axis_moves), _ci(),
            ("out.axis_moves",), max_rank=2),
    Planted("topk_path_bug", check_topk_equals_topk1, metamorphic_kind(check_topk_equals_topk1),
            _ci("dml:5.0"), ("out.topk_equals_topk1",)),
    Planted("alternating_ties", check_deterministic, metamorphic_kind(check_deterministic), _ci(),
            ("out.deterministic",), failure_class=NONDETERMINISTIC),
    # where the contract leaves NaN or ties open, a runtime held to itself
    Planted("nan_first_alone_last_in_batch", check_self_batch, metamorphic_kind(check_self_batch), _nan("dml:5.0"),
            ("self.batch",), max_rank=2),
    Planted("ties_reversed_in_batch", check_self_batch, metamorphic_kind(check_self_batch, settled=False), _ci(),
            ("self.batch",), max_rank=2),
    Planted("nan_first_for_even_k", check_self_prefix, metamorphic_kind(check_self_prefix), _nan(),
            ("self.prefix",)),
    Planted("nan_first_on_last_axis", check_self_axis, metamorphic_kind(check_self_axis), _nan(),
            ("self.axis",), max_rank=2),
    Planted("inner_axis_ties", check_self_axis, metamorphic_kind(check_self_axis, settled=False), _ci(),
            ("self.axis",), max_rank=2),
    Planted("nan_last_for_constant_k", check_self_k_input,
            metamorphic_kind(check_self_k_input, k_forms=("input", "constant")), _nan(), ("self.k_input",)),
    Planted("nan_side_alternating", check_self_repeat, metamorphic_kind(check_self_repeat), _nan(),
            ("self.repeat",), failure_class=NONDETERMINISTIC),
    # a DirectML call laid out (strides, bindings, guard bytes), emulated in numpy (planted_layouts.py)
    Planted("ignores_input_strides", check_same_layout, metamorphic_kind(check_same_layout), _laid(),
            ("out.layout.same_answer",), max_rank=2),
    Planted("writes_past_output", check_no_write_outside,
            metamorphic_kind(check_no_write_outside, buffers=layouts.writes_past_output.buffers), _laid(),
            ("out.layout.no_write_outside",)),
    Planted("half_reversed", check_half_precision_call, metamorphic_kind(check_half_precision_call),
            _laid().filter(lambda ci: judges("half_precision", ci[0]) and ci[0].k > 1), ("out.layout.half_precision",)),
    Planted("rejects_k_equal_n", check_accepts_valid, accepts_kind, _ci("onnx:24"), ("out.valid_accepted",),
            failure_class=REJECTS_VALID),
    Planted("raises_on_nan", check_accepts_valid, accepts_kind, _ci(dtypes=["float32"], allow_nan=True),
            ("out.valid_accepted",), failure_class=REJECTS_VALID),
    Planted("accepts_k_above_n", check_rejects_invalid, rejects_kind, invalid_descriptors("dml:5.0", "dml.k.max"),
            ("out.invalid_rejected", "dml.k.max"), failure_class=ACCEPTS_INVALID),
]


def shrink_size(case) -> tuple[int, int]:
    """(input elements, dimensions longer than 1): unit dimensions do not hurt reading a case."""
    return math.prod(case.shape), sum(1 for size in case.shape if size > 1)


def shrunk(row: Planted):
    return find(row.strategy, row.predicate(row.fn()), settings=FIND_SETTINGS)


def _violation(row: Planted, drawn) -> Violation:
    """The violation the row's check raises on the shrunk example."""
    fn = row.fn()
    try:
        if row.check is check_rejects_invalid:
            row.check(drawn, direct_run(fn))
        elif row.check is check_accepts_valid:
            row.check(drawn[0], direct_run(fn), drawn[1])
        elif row.predicate.__qualname__.startswith("metamorphic_kind"):
            run = fn if getattr(fn, "takes_case", False) else direct_run(fn)
            row.check(drawn[0], drawn[1], run, **getattr(row.predicate, "options", {}))
        else:
            case = drawn[0].with_(index_dtype="int64")
            values, indices = direct_run(fn)(case, drawn[1])
            row.check(case, drawn[1], values, indices)
    except Violation as violation:
        return violation
    raise AssertionError(f"{row.id}: the shrunk example no longer fails")


@pytest.mark.parametrize("row", PLANTED, ids=lambda row: row.id)
@slow
def test_planted_bug_is_found_and_shrunk(row):
    drawn = shrunk(row)
    violation = _violation(row, drawn)
    assert set(row.rules) <= set(violation.rules), (
        f"{row.id}: expected rules {row.rules}, got {violation.rules}: {violation.message}")
    assert set(violation.rules) <= set(spec.RULES), f"{row.id}: unknown rules {violation.rules}"
    if row.failure_class:
        assert violation.failure_class == row.failure_class, violation.failure_class
    # How small the example shrinks depends on the Hypothesis version: the benchmark at the
    # end of this file measures it against each row's aim, a test does not assert it.


def test_every_property_has_a_planted_bug():
    from topkspec.properties import CATALOGUE

    caught_by = {row.check for row in PLANTED}
    missing = [prop.name for prop in CATALOGUE if prop.check not in caught_by]
    assert not missing, f"properties without a planted bug: {missing}"


def test_check_result_names_the_most_specific_rule():
    x = np.array([3.0, 1.0, 2.0], dtype=np.float32)
    from topkspec.spec import Case

    case = Case("onnx:11", "TopK", "float32", (3,), -1, 2, index_dtype="int64")
    values, indices = bugs.one_based_indices(x, axis=0, k=2)
    with pytest.raises(Violation) as info:
        check_result(case, x, values, indices)
    assert info.value.rules == ("out.indices.range_distinct", "out.indices.base"), info.value.rules
    assert info.value.message == ("position 1: index 3 is not an index of the sequence (expected 0 <= index < 3, "
                                  "counted from the sequence start)")
    assert str(info.value) == f"out.indices.range_distinct, out.indices.base: {info.value.message} " \
                              "[K=2, axis=-1, largest, sorted]"
    assert info.value.where == {"sequence": (), "position": 1}

    zeros = np.array([-0.0, 0.0], dtype=np.float32)
    zcase = case.with_(shape=(2,), k=1)
    values, indices = bugs.signed_zero_order(zeros, axis=0, k=1)
    with pytest.raises(Violation) as info:
        check_result(zcase, zeros, values, indices)
    assert info.value.rules == ("out.ties.signed_zero", "out.ties.kth_place"), info.value.message


def test_order_message_says_where_expected_and_actual():
    from topkspec.spec import Case

    x = np.array([[5.0, 3.0, 4.0]], dtype=np.float32)
    case = Case("dml:5.0", "TOP_K1", "float32", (1, 3), 1, 3, index_dtype="int64")
    values, indices = bugs.index_order_output(x, axis=1, k=3)
    with pytest.raises(Violation) as info:
        check_order(case, x, values, indices)
    assert str(info.value) == ("out.order: sequence (0,) position 1: expected 3.0 >= next, got 3.0 then 4.0 "
                               "[TOP_K1, K=3, axis=1, DECREASING]")
    assert info.value.where == {"sequence": (0,), "position": 1}


@pytest.mark.parametrize("name, trigger, expect, limit", [
    ("segfaults_on_long_axis", "np.zeros(1025, np.float32), axis=0, k=1", "signal", 30),
    ("hangs_when_k_equals_n", "np.zeros(3, np.float32), axis=0, k=3", "timeout", 2),
])
def test_process_killing_bugs(name, trigger, expect, limit):
    """The crash and hang bugs really kill or stall their process (the runner isolates them)."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import numpy as np; "
            f"import planted_bugs; planted_bugs.{name}({trigger})")
    try:
        done = subprocess.run([sys.executable, "-c", code], timeout=limit, capture_output=True)
    except subprocess.TimeoutExpired:
        assert expect == "timeout"
        return
    assert expect == "signal" and done.returncode < 0, f"{name}: exit code {done.returncode}"


def _short(x, limit: int = 6) -> str:
    """The input's values, at most `limit` of them, as a list."""
    flat = [float(v) if np.asarray(v).dtype.kind == "f" or str(np.asarray(v).dtype) == "bfloat16" else int(v)
            for v in x.reshape(-1)[:limit].tolist()]
    more = f", ... ({x.size} values)" if x.size > limit else ""
    return "[" + ", ".join(repr(v) for v in flat) + more + "]"


def _plain(x) -> bool:
    """Whether every value of x is NaN or an integer of magnitude at most 3 (-0.0 included):
    what a shrinker reaches when the bug needs no particular value."""
    flat = np.asarray(x, dtype=np.float64).reshape(-1)
    return bool(np.all(np.isnan(flat) | ((flat == np.round(flat)) & (np.abs(flat) <= 3))))


def main():
    """Time how long each planted bug takes to find (first failing example, no shrinking) and
    to find and shrink: python tests/test_properties_planted.py"""
    generate_only = settings(FIND_SETTINGS, phases=[Phase.generate])
    found_total = shrunk_total = 0.0
    under_a_second = within_aim = plain_values = 0
    print(f"{'found':>7s} {'shrunk':>7s}  {'bug-property':55s} shrunk case")
    for row in PLANTED:
        start = time.perf_counter()
        find(row.strategy, row.predicate(row.fn()), settings=generate_only)
        found = time.perf_counter() - start
        start = time.perf_counter()
        drawn = shrunk(row)
        spent = time.perf_counter() - start
        found_total += found
        shrunk_total += spent
        under_a_second += found < 1.0
        case = drawn.case if row.check is check_rejects_invalid else drawn[0]
        total, rank = shrink_size(case)
        within = total <= row.max_total and rank <= row.max_rank
        within_aim += within
        mark = "" if within else f"  (aim: {row.max_total} elements, {row.max_rank} dims)"
        values = "" if row.check is check_rejects_invalid else f"  x = {_short(drawn[1])}"
        plain_values += row.check is check_rejects_invalid or _plain(drawn[1])
        print(f"{found:6.2f}s {spent:6.2f}s  {row.id:55s} {case.describe()}{values}{mark}")
    print(f"{found_total:6.2f}s {shrunk_total:6.2f}s  total for {len(PLANTED)} bugs; "
          f"{under_a_second} found within a second; {within_aim} shrunk within their aim; "
          f"{plain_values} with plain values (NaN, signed zeros, small integers up to 3)")


if __name__ == "__main__":
    main()
