"""The exact order-reversing key of the largest-only runtimes (tensorflow, keras-numpy):
needs no runtime."""
import numpy as np

from topkspec.targets.order_key import smallest_key


def test_smallest_key_reverses_the_order_exactly():
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    x = np.array([np.nan, -np.inf, -1.0, -tiny, -0.0, 0.0, tiny, 1.0, np.inf], np.float32)
    key = smallest_key(x)
    assert key.dtype == np.int32 and key[4] == key[5], "-0.0 and +0.0 must tie"
    assert np.all(np.diff(key[1:].astype(np.int64))[[0, 1, 2, 4, 5, 6]] < 0), key.tolist()
    assert key[0] == key.min(), "NaN comes last in the smallest form"
    assert smallest_key(np.array([1, -128], np.int8)).tolist() == [-2, 127]
    assert smallest_key(np.array([0, 255], np.uint8)).tolist() == [255, 0]
