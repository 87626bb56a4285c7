"""The `mlx` target: MLX's argpartition on the CPU, judged as what MLX promises (the K extreme
elements, in no order), its contract quoted from MLX's pages, and a repro in MLX's own API."""
import os
import subprocess
import sys

import numpy as np
import pytest

from topkspec import reference_topk
from topkspec.spec import Case, dtypes

try:
    import mlx.core  # noqa: F401
except ImportError as exc:
    pytest.skip(f"mlx is not installed (pip install 'mlx[cpu]' on Linux): {exc}", allow_module_level=True)

from topkspec.targets.runtimes.mlx import MlxTarget  # noqa: E402
from target_checks import recorded_report, standalone_repro  # noqa: E402


@pytest.fixture(scope="module")
def target():
    made = MlxTarget()
    ok, reason = made.available()
    if not ok:
        pytest.skip(reason)
    return made


def unordered(case):
    return case.with_(sorted=False)


def check_selection(target, case, x):
    """The (index, value) pairs returned are the reference's, in any order (no ties here)."""
    values, indices = target.run(case, x)
    want_values, want_indices = reference_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)
    assert indices.dtype == np.uint32 and values.dtype == x.dtype
    order = np.argsort(indices, axis=case.norm_axis)
    got_i = np.take_along_axis(indices.astype(np.int64), order, axis=case.norm_axis)
    got_v = np.take_along_axis(values, order, axis=case.norm_axis)
    order = np.argsort(want_indices, axis=case.norm_axis)
    assert np.array_equal(got_i, np.take_along_axis(want_indices, order, axis=case.norm_axis))
    assert np.array_equal(got_v.view(f"u{x.dtype.itemsize}"),
                          np.take_along_axis(want_values, order, axis=case.norm_axis).view(f"u{x.dtype.itemsize}"))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "uint16", "int64", "uint64"])
@pytest.mark.parametrize("largest", [True, False])
def test_the_k_extreme_elements_of_each_type(target, dtype, largest):
    x = np.random.default_rng(5).permutation(24).reshape(2, 3, 4).astype(np.float32).astype(dtypes.numpy_dtype(dtype))
    for axis, k in ((0, 1), (1, 2), (-1, 3)):
        case = Case("onnx:11", "TopK", dtype, (2, 3, 4), axis, k, largest=largest, sorted=False, index_dtype="int64")
        assert target.supports(case) is None
        check_selection(target, case, x)


def test_float64_keeps_its_precision(target):
    x = np.array([1.0 + 2 ** -40, 1.0, 0.5])
    values, indices = target.run(Case("onnx:11", "TopK", "float64", (3,), 0, 1, sorted=False, index_dtype="int64"), x)
    assert values.tolist() == [1.0 + 2 ** -40] and indices.tolist() == [0]


def test_sorted_requests_are_outside_its_contract(target):
    for case in (Case("onnx:11", "TopK", "float32", (3,), 0, 1, index_dtype="int64"),
                 Case("onnx:10", "TopK", "float32", (3,), 0, 1, index_dtype="int64"),
                 Case("dml:5.0", "TOP_K1", "float32", (1, 1, 1, 3), 3, 1)):
        assert "MLX promises no order" in target.supports(case)


def test_its_contract_quotes_mlx():
    contract = MlxTarget.contract
    assert contract.implements == "own" and contract.value("sorted") == "never"
    assert contract.value("ties") == "unspecified" and contract.value("k_above_axis") == "refused"
    assert "undefined" in contract.promise("sorted").quote
    assert contract.promise("sorted").url.startswith("https://ml-explore.github.io/mlx/")


def test_k_out_of_range_is_refused_by_mlx(target):
    from topkspec.targets.base import Rejected

    with pytest.raises(Rejected, match="invalid kth"):
        target.run(Case("onnx:11", "TopK", "float32", (3,), 0, 4, sorted=False, index_dtype="int64"),
                   np.arange(3, dtype=np.float32))


def test_repro_runs_in_mlxs_own_api(tmp_path):
    x = np.array([[4, 1, 3, 2], [0, 7, 5, 6]], dtype=np.float32)
    case = Case("onnx:11", "TopK", "float32", (2, 4), 1, 2, largest=False, sorted=False, index_dtype="int64")
    folder = recorded_report(tmp_path, "mlx", case, x, rule="out.unsorted.set")
    source = standalone_repro(folder)
    assert "mx.argpartition(a, kth=k - 1, axis=axis)" in source, source
    done = subprocess.run([sys.executable, os.path.join(folder, "repro.py")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"MLX is right here: expected exit 0\n{done.stdout}{done.stderr}"
