"""What the runtime targets' tests share: a result held to the reference bit for bit."""
import numpy as np

from topkspec import reference_topk


def bits(a) -> np.ndarray:
    """An array's bits as unsigned integers of its width (so -0.0 and NaN payloads compare)."""
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}")


def assert_exact(target, case, x):
    """target.run(case, x) returns the reference's values (bit for bit, in x's type) and
    indices (in the target's own index type, else the case's); returns them."""
    index_dtype = getattr(target, "index_dtype", None) or case.index_dtype
    values, indices = target.run(case, x)
    want_values, want_indices = reference_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)
    where = f"{case.describe()} on {np.asarray(x).tolist()}"
    assert indices.dtype == np.dtype(index_dtype), f"{where}: indices are {indices.dtype}, expected {index_dtype}"
    assert np.array_equal(indices, want_indices), \
        f"{where}: indices expected {want_indices.tolist()}, got {indices.tolist()}"
    assert values.dtype == x.dtype, f"{where}: values are {values.dtype}, expected {x.dtype}"
    assert np.array_equal(bits(values), bits(want_values)), \
        f"{where}: values expected {want_values.tolist()}, got {values.tolist()}"
    return values, indices
