"""The `tvm` target: exact results against the reference where TVM is right, its own refusals
as Rejected, each shipped known entry shown real, and repro programs in TVM's own API."""
import os
import subprocess
import sys

import numpy as np
import pytest

from topkspec.spec import Case

try:
    import tvm  # noqa: F401
    from tvm.relax.frontend.onnx import from_onnx  # noqa: F401
except ImportError as exc:
    pytest.skip(f"apache-tvm is not installed (pip install apache-tvm==0.27.0.post1): {exc}", allow_module_level=True)

from topkspec.known import load_known  # noqa: E402
from topkspec.targets.base import Rejected  # noqa: E402
from topkspec.targets.runtimes.tvm import TvmTarget  # noqa: E402
from target_checks import assert_exact, recorded_report, standalone_repro  # noqa: E402


@pytest.fixture(scope="module")
def target():
    made = TvmTarget()
    ok, reason = made.available()
    if not ok:
        pytest.skip(reason)
    yield made
    made.close()


TIES = np.array([[1, -0.0, 0.0, 1, 2, 0.0], [5, 5, 5, -1, 5, 5]], dtype=np.float32)


@pytest.mark.parametrize("largest", [True, False])
def test_ties_and_signed_zeros_come_in_index_order(target, largest):
    assert_exact(target, Case("onnx:11", "TopK", "float32", (2, 6), -1, 5, largest=largest, index_dtype="int64"),
                 TIES)


@pytest.mark.parametrize("dtype", ["float16", "float64", "int8", "int32", "int64", "uint8"])
def test_a_non_last_axis_in_types_it_runs(target, dtype):
    x = np.random.default_rng(3).integers(-4, 4, size=(5, 3, 4)).astype(np.float64).astype(dtype)
    assert_exact(target, Case("onnx:24", "TopK", dtype, (5, 3, 4), 0, 3, index_dtype="int64"), x)
    assert_exact(target, Case("onnx:11", "TopK", dtype, (5, 3, 4), -2, 2, largest=False, index_dtype="int64"), x)


def test_one_machine_per_signature_and_k(target):
    case = Case("onnx:11", "TopK", "float32", (6,), 0, 2, index_dtype="int64")
    before = target.machines_built
    for _ in range(3):
        target.run(case, TIES[0])
    target.run(case.with_(shape=(4,)), TIES[0][:4])
    assert target.machines_built - before <= 1


def test_the_frontends_refusals_are_rejected(target):
    with pytest.raises(Rejected, match="tvm: IndexError"):
        target.run(Case("onnx:11", "TopK", "float32", (6,), 1, 1, index_dtype="int64"), TIES[0])


# -- the shipped known list: each entry's behaviour, shown ------------------------------------

def _topk10_reads_no_k(target):
    values, _ = target.run(Case("onnx:10", "TopK", "float32", (6,), 0, 3, index_dtype="int64"), TIES[0])
    assert values.shape == (1,), values


def _sorted_0_refused(target):
    with pytest.raises(Rejected, match="sorted must be 1"):
        target.run(Case("onnx:11", "TopK", "float32", (6,), 0, 3, sorted=False, index_dtype="int64"), TIES[0])


def _k_zero_returns_all(target):
    values, _ = target.run(Case("onnx:11", "TopK", "float32", (6,), 0, 0, index_dtype="int64"), TIES[0])
    assert values.shape == (6,), values


def _types_refused(target):
    for dtype in ("int16", "uint16", "uint32", "uint64"):
        case = Case("onnx:11", "TopK", dtype, (3,), 0, 1, index_dtype="int64")
        with pytest.raises(Rejected, match="Unsupported input dtype"):
            target.supports(case)
        with pytest.raises(Rejected, match="Unsupported input dtype"):
            target.run(case, np.arange(3, dtype=dtype))


def _bfloat16_wrong(target):
    from topkspec.spec import dtypes

    x = np.array([3, 1, 2, 5, 1], dtype=np.float32).astype(dtypes.numpy_dtype("bfloat16"))
    values, _ = target.run(Case("onnx:11", "TopK", "bfloat16", (5,), 0, 2, index_dtype="int64"), x)
    assert values.astype(np.float32).tolist() != [5.0, 3.0], values


def _nan_unsorts_the_rest(target):
    x = np.array([np.nan, 1, 0, 1], dtype=np.float32)
    values, _ = target.run(Case("onnx:11", "TopK", "float32", (4,), 0, 4, index_dtype="int64"), x)
    rest = values[~np.isnan(values)].tolist()
    assert rest != sorted(rest, reverse=True), values


def _k_above_reads_past(_target):
    """Reads past the input: shown by its repro in a child process (test_findings, refind)."""


KNOWN_CHECKS = {"onnx:10": _topk10_reads_no_k, "out.unsorted.set": _sorted_0_refused,
                "onnx.k.positive": _k_zero_returns_all, "out.valid_accepted": _types_refused,
                "bfloat16": _bfloat16_wrong, "onnx.k.max": _k_above_reads_past,
                "out.nan.unspecified": _nan_unsorts_the_rest}


def test_every_known_entry_is_real(target):
    entries = load_known(None, "tvm")
    assert entries, "tvm ships a known list"
    for entry in entries:
        assert entry.reason and entry.url, entry
        check = KNOWN_CHECKS.get(entry.profile) or KNOWN_CHECKS.get(entry.dtype) or KNOWN_CHECKS.get(entry.rule)
        assert check, f"no test shows {entry.describe()}"
        check(target)


def test_repro_runs_in_tvms_own_api(tmp_path):
    case = Case("onnx:11", "TopK", "float32", (2, 6), 1, 4, largest=False, index_dtype="int64")
    folder = recorded_report(tmp_path, "tvm", case, TIES)
    source = standalone_repro(folder)
    assert "from_onnx(model)" in source and "relax.VirtualMachine" in source, source
    done = subprocess.run([sys.executable, os.path.join(folder, "repro.py")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"TVM is right here: expected exit 0\n{done.stdout}{done.stderr}"
