"""Shapes at GPU scale: --max-axis-size and --max-elements reach the strategies, long axes
come over a few rows, and the special values a long axis holds stay few however long it is."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from topkspec.fuzz.config import SHAPE_SETTINGS, shape_limits
from topkspec.spec import Case
from topkspec.strategies import case_and_input
from topkspec.strategies.cases import DEFAULT_MAX_TOTAL, near_powers_of_two
from topkspec.strategies.tensors import SPARSE_SPECIALS, draw_array

from test_strategies import collect

LONG = 1 << 20


def test_long_axes_are_drawn_over_a_few_rows_within_the_limits():
    drawn = collect(case_and_input("onnx:24", max_axis_size=LONG, max_total=2 * LONG), 200)
    sizes = [case.axis_size for case, _ in drawn]
    assert max(sizes) <= LONG and all(x.size <= 2 * LONG for _, x in drawn), max(sizes)
    long = [(case, x) for case, x in drawn if case.axis_size > DEFAULT_MAX_TOTAL]
    assert long, f"no axis above {DEFAULT_MAX_TOTAL} in 200 draws: {sorted(sizes)[-5:]}"
    assert all(x.size // case.axis_size <= 8 for case, x in long), "long axes come over a few rows"
    assert {2**16 - 1, 2**16, 2**16 + 1, 2**20} <= set(near_powers_of_two(LONG)), "sizes where kernels switch"


def test_default_shapes_stay_below_the_default_limits():
    drawn = collect(case_and_input("onnx:24"), 200)
    assert max(case.axis_size for case, _ in drawn) <= 4096
    assert max(x.size for _, x in drawn) <= DEFAULT_MAX_TOTAL


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_long_axes_hold_a_few_special_values_among_random_ones(dtype):
    """With long axes, some inputs hold special values (NaN, ±0, ±inf, extremes) at a few
    places only ("sparse specials": at most SPARSE_SPECIALS, and the tie at the K-th
    place), however long the axis."""
    case = Case("onnx:24", "TopK", dtype, (2, 1 << 17), axis=1, k=5)
    counts = []

    @settings(max_examples=100, database=None, deadline=None, derandomize=True, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data):
        x = data.draw(st.composite(lambda d: draw_array(d, case, allow_nan=True, long_axes=True))())
        wide = x.astype(np.float64)
        magnitude = np.abs(wide)
        special = ~np.isfinite(wide) | (magnitude < 2.0**-60) | (magnitude >= np.finfo(x.dtype).max)
        counts.append(int(special.sum()))

    draw()
    sparse = [count for count in counts if 0 < count <= SPARSE_SPECIALS + 2]
    assert sparse, f"no input with a few special values among {len(counts)}: {sorted(counts)[:10]}"


def test_shape_limits_come_from_the_options_then_the_named_settings():
    assert shape_limits(None, None, None) == {"max_axis_size": None, "max_elements": None}
    assert shape_limits("gpu", None, None) == SHAPE_SETTINGS["gpu"]
    assert shape_limits("gpu", 5000, None)["max_axis_size"] == 5000
    # an axis longer than the default room brings room for it
    assert shape_limits(None, LONG, None) == {"max_axis_size": LONG, "max_elements": LONG}
    assert shape_limits(None, LONG, 2 * LONG)["max_elements"] == 2 * LONG
    assert SHAPE_SETTINGS["gpu"]["max_axis_size"] >= 2**20 and math.log2(SHAPE_SETTINGS["gpu"]["max_elements"]) >= 21
