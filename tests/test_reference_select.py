"""The reference selects the first K of long sequences without sorting them whole: the same
result, bit for bit, as one stable sort of every sequence (ties in ascending index order,
-0.0 tied with +0.0)."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from topkspec.spec.reference import _SELECT_FROM, reference_topk

TYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int32, np.uint64]


def sorted_whole(x, axis, k, largest):
    """Top K by one stable sort of each whole sequence (what the selection must equal)."""
    moved = np.moveaxis(x, axis, -1)
    key = moved.astype(np.float64) if moved.dtype.kind not in "iu" else moved.astype(object)
    order = np.argsort(-key if largest else key, axis=-1, kind="stable")[..., :k].astype(np.int64)
    return (np.moveaxis(np.take_along_axis(moved, order, axis=-1), -1, axis), np.moveaxis(order, -1, axis))


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(TYPES), n=st.integers(_SELECT_FROM, 3 * _SELECT_FROM), rows=st.integers(1, 3),
       pool=st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, 100.0]), min_size=1, max_size=4),
       seed=st.integers(0, 2**16), k_share=st.floats(0, 0.25), largest=st.booleans(), axis=st.sampled_from([0, -1]))
def test_selecting_the_first_k_equals_sorting_whole_sequences(dtype, n, rows, pool, seed, k_share, largest, axis):
    rng = np.random.default_rng(seed)
    values = np.array(pool) if np.dtype(dtype).kind not in "iu" else np.abs(np.array(pool))
    x = rng.choice(values, size=(rows, n)).astype(dtype)  # heavy ties, both zeros
    x = x.T.copy() if axis == 0 else x
    k = max(1, int(k_share * n))
    got, want = reference_topk(x, axis=axis, k=k, largest=largest), sorted_whole(x, axis, k, largest)
    assert np.array_equal(got[1], want[1]), "indices differ from one stable sort of each sequence"
    assert np.array_equal(np.ascontiguousarray(got[0]).view(np.uint8), np.ascontiguousarray(want[0]).view(np.uint8))


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int64])
def test_selection_keeps_ties_of_integer_extremes_in_index_order(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max] * _SELECT_FROM, dtype=dtype)
    values, indices = reference_topk(x, axis=0, k=3, largest=True)
    assert indices.tolist() == [1, 3, 5] and (values == info.max).all()
    values, indices = reference_topk(x, axis=0, k=3, largest=False)
    assert indices.tolist() == [0, 2, 4] and (values == info.min).all()


@settings(max_examples=80, deadline=None)
@given(dtype=st.sampled_from(TYPES + [np.int64, np.uint16]),
       shape=st.lists(st.integers(1, 5), min_size=1, max_size=4),
       pool=st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, 100.0]), min_size=1, max_size=4),
       seed=st.integers(0, 2**16), data=st.data(), largest=st.booleans())
def test_short_sequences_on_every_axis_equal_sorting_whole_sequences(dtype, shape, pool, seed, data, largest):
    """The short path (one stable sort) on every axis of every rank: the key (a negation, a
    bitwise not, a widening) and the moves of the axis there and back keep the result."""
    rng = np.random.default_rng(seed)
    values = np.array(pool) if np.dtype(dtype).kind not in "iu" else np.abs(np.array(pool))
    x = rng.choice(values, size=tuple(shape)).astype(dtype)
    before = x.copy()
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    k = data.draw(st.integers(1, shape[axis]), label="k")
    got, want = reference_topk(x, axis=axis, k=k, largest=largest), sorted_whole(x, axis % x.ndim, k, largest)
    assert got[0].shape == want[0].shape and got[0].dtype == x.dtype
    assert np.array_equal(got[1], want[1]), "indices differ from one stable sort of each sequence"
    assert np.array_equal(np.ascontiguousarray(got[0]).view(np.uint8), np.ascontiguousarray(want[0]).view(np.uint8))
    assert np.array_equal(x.view(np.uint8), before.view(np.uint8)), "the input changed"


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16])
def test_nan_comes_first_when_largest_and_last_otherwise(dtype):
    x = np.array([[1.0, np.nan, 3.0, -np.nan], [2.0, 0.0, -0.0, 1.0]], dtype=dtype)
    _, indices = reference_topk(x, axis=1, k=4, largest=True)
    assert indices.tolist() == [[1, 3, 2, 0], [0, 3, 1, 2]]
    _, indices = reference_topk(x, axis=1, k=4, largest=False)
    assert indices.tolist() == [[0, 2, 1, 3], [1, 2, 3, 0]]
