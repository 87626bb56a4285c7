"""OpenVINO's CPU plugin narrows some types: the target runs them, the shipped known list
declares the wrong results, and this shows the narrowing is real (if a release stops
narrowing, bound the entry's versions)."""
import numpy as np
import pytest

from topkspec import reference_topk
from topkspec.spec import dtypes
from topkspec.spec import Case

pytest.importorskip("openvino")
from topkspec.known import load_known  # noqa: E402
from topkspec.targets.runtimes.openvino import OpenVinoTarget  # noqa: E402

# Observed: int64 2**63-1 comes back as -1, uint32 2**32-1 as -1 cast back, float64 inf as float32 max.
NARROWED_ON_CPU = {"float64": "float32", "int64": "int32", "uint64": "int32", "uint32": "int32"}


def extremes(dtype):
    if dtype == "float64":
        return np.array([1e300, -1e300, 1.0, 2.0], dtype=np.float64)
    info = np.iinfo(dtype)
    return np.array([info.max, info.min, 1, 2], dtype=dtype)


@pytest.mark.parametrize("dtype", sorted(NARROWED_ON_CPU))
def test_narrowed_types_run_come_back_wrong_and_are_declared_known(dtype):
    target = OpenVinoTarget()
    case = Case("onnx:11", "TopK", dtype, (4,), 0, 4, index_dtype="int64")
    assert target.supports(case) is None, "a narrowed type is run and judged, not set aside"
    x = extremes(dtype)
    values, _ = target.run(case, x)
    want, _ = reference_topk(x, axis=0, k=4, largest=True)
    assert not np.array_equal(values, want), \
        f"OpenVINO CPU now computes {dtype} exactly ({values.tolist()}): bound its known entries' versions"
    known = load_known(None, "openvino")
    assert any(entry.dtype == dtype and entry.url for entry in known), f"no known entry for {dtype}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8", "uint16", "int32"])
def test_supported_types_keep_their_extremes(dtype):
    target = OpenVinoTarget()
    case = Case("onnx:24", "TopK", dtype, (5,), 0, 5, largest=False, index_dtype="int64")
    assert target.supports(case) is None
    if dtypes.is_float(dtype):
        x = np.array([np.inf, -np.inf, 0.5, -2.0, 3.0], dtype=np.float32).astype(dtypes.numpy_dtype(dtype))
    else:
        info = np.iinfo(dtype)
        x = np.array([info.max, info.min, 0, 1, -1 if info.min else 2], dtype=dtype)
    values, indices = target.run(case, x)
    want_values, want_indices = reference_topk(x, axis=0, k=5, largest=False)
    assert values.dtype == want_values.dtype, f"values dtype: expected {want_values.dtype}, got {values.dtype}"
    assert np.array_equal(values, want_values), f"values: expected {want_values.tolist()}, got {values.tolist()}"
    assert np.array_equal(indices, want_indices), f"indices: expected {want_indices.tolist()}, got {indices.tolist()}"
