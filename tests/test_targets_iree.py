"""The `iree` target: IREE's own ONNX TopK, compiled for llvm-cpu and run on local-sync.

Exact results against the reference (both directions, a non-last axis, ties, float64 with
demotion off), IREE's refusals as Rejected, the shipped known entry's deviation (sorted=0
does not compile), and repro programs in IREE's own API that run. Modules come from the
adapter's disk cache when an earlier run compiled them (a first run compiles about ten)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

from topkspec.known import load_known  # noqa: E402
from topkspec.properties import failures  # noqa: E402
from topkspec.spec import Case  # noqa: E402
from topkspec.spec import dtypes  # noqa: E402
from topkspec.targets import Rejected  # noqa: E402
from topkspec.targets.runtimes.iree import IreeTarget  # noqa: E402
from target_checks import assert_exact, recorded_report, standalone_repro  # noqa: E402


@pytest.fixture(scope="module")
def target():
    made = IreeTarget()
    ok, reason = made.available()
    if not ok:
        pytest.skip(reason)
    yield made
    made.close()


def onnx_case(dtype, shape, axis, k, largest=True, sorted_=True, profile="onnx:24"):
    return Case(profile, "TopK", dtype, shape, axis, k, largest=largest, sorted=sorted_, index_dtype="int64")


def check_exact(target, case, x):
    assert target.supports(case) is None
    assert_exact(target, case, x)


def test_largest_on_a_non_last_axis(target):
    x = np.array([[3, 1, 2], [5, 1, 2], [4, 0, 9]], dtype=np.float32)
    check_exact(target, onnx_case("float32", (3, 3), 0, 2), x)


def test_smallest_with_ties_and_signed_zeros_in_index_order(target):
    x = np.array([[1, 3, 1, 3, 1, 3], [0.0, -0.0, 2, -0.0, 0.0, -1]], dtype=np.float32)
    check_exact(target, onnx_case("float32", (2, 6), -1, 4, largest=False), x)


def test_float64_is_computed_in_float64(target):
    x = np.array([1 + 2 ** -40, 1.0, 1e300, -1e300], dtype=np.float64)  # the first two are one float32
    check_exact(target, onnx_case("float64", (4,), 0, 4), x)


def test_uint8_below_the_sign_bit_is_right_and_typed_uint8(target):
    x = np.array([7, 1, 127, 0], dtype=np.uint8)
    check_exact(target, onnx_case("uint8", (4,), -1, 2), x)


def test_an_axis_at_the_rank_is_refused(target):
    case = onnx_case("float32", (2, 3), 2, 1)
    with pytest.raises(Rejected, match="iree"):
        target.run(case, np.zeros((2, 3), np.float32))


def test_sorted_0_is_refused_as_the_known_list_declares(target):
    """IREE cannot compile TopK with sorted=0 (torch-mlir's aten.topk decomposition): Rejected
    from supports, a finding the shipped list declares."""
    with pytest.raises(Rejected, match="sorted=0"):
        target.supports(onnx_case("float32", (3,), -1, 1, sorted_=False))
    known = load_known(None, "iree")
    entry = known.match("out.valid_accepted", failures.REJECTS_VALID, "float32", "onnx:24", target.version())
    assert entry is not None and entry.url, list(known)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_subnormals_compare_equal_to_zero_as_the_known_list_declares(target, dtype):
    """IREE's CPU code flushes denormals to zero: the smallest subnormal ties with 0.0, which
    comes first by index. float16 is compared in float32, where its subnormals are normal."""
    width = dtypes.numpy_dtype(dtype).itemsize * 8
    x = np.array([0, 1], dtype=f"uint{width}").view(dtypes.numpy_dtype(dtype))  # 0.0, the smallest subnormal
    case = onnx_case(dtype, (2,), 0, 1)
    values, indices = target.run(case, x)
    assert indices.tolist() == [0] and float(values[0]) == 0.0, \
        f"IREE now ranks the subnormal above 0.0 ({values.tolist()}, {indices.tolist()}): bound the entries' versions"
    entry = load_known(None, "iree").match("out.values.select", failures.WRONG_RESULT, dtype, "onnx:24",
                                           target.version())
    assert entry is not None and entry.url
    check_exact(target, onnx_case("float16", (2,), 0, 1), np.array([0.0, 6e-8], np.float16))


UNSIGNED = "findings/iree-unsigned-compared-as-signed/report.md"


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_values_compare_as_signed_as_the_known_list_declares(target, dtype):
    """torch-mlir's sort lowering compares unsigned integers as signed: the top bit set ranks
    below 1. Both rules it breaks are declared per type, linked to the finding; a signed type's
    failure is not."""
    top = np.iinfo(dtype).max
    x = np.array([top, 1], dtype=dtype)
    values, _ = target.run(onnx_case(dtype, (2,), 0, 1), x)
    assert values.tolist() == [1], f"IREE now ranks {top} above 1: update the finding and its entries"
    known = load_known(None, "iree")
    for rule in ("out.values.select", "out.order"):
        entry = known.match(rule, failures.WRONG_RESULT, dtype, "onnx:24", target.version())
        assert entry is not None and entry.url == UNSIGNED, (rule, entry)
    assert known.match("out.values.select", failures.WRONG_RESULT, "int8", "onnx:24", target.version()) is None


def test_topk_10_is_unsupported_with_iree_s_reason(target):
    reason = target.supports(onnx_case("float32", (3,), -1, 1, profile="onnx:10"))
    assert isinstance(reason, str) and "TopK-10" in reason and "onnx.TopK" in reason, reason



def repro_of(tmp_path, case, x, name):
    folder = recorded_report(tmp_path, "iree", case, x, name=name)
    source = standalone_repro(folder)
    assert "iree.compiler.compile_str(" in source and "onnx_importer" in source, source
    return subprocess.run([sys.executable, os.path.join(folder, "repro.py")], capture_output=True, text=True,
                          timeout=300)


def test_repro_runs_and_reproduces_the_unsigned_comparison(tmp_path):
    """repro.py compiles the same model with IREE's own API: exit 0 on a case IREE gets right,
    exit 1 on uint8 values with the top bit set, which IREE compares as signed (new: no public
    report; if a release fixes it, this test says so)."""
    right = repro_of(tmp_path, onnx_case("float32", (2, 3), 0, 1, largest=False),
                     np.array([[3, 1, 2], [0, 5, 2]], np.float32), "right")
    assert right.returncode == 0, f"expected exit 0\n{right.stdout}{right.stderr}"
    x = np.array([200, 1, 3], dtype=np.uint8)
    wrong = repro_of(tmp_path, onnx_case("uint8", (3,), -1, 1), x, "uint8")
    assert wrong.returncode == 1, f"IREE now ranks uint8 200 above 3? exit {wrong.returncode}\n{wrong.stdout}{wrong.stderr}"
    assert "expected: values [200]" in wrong.stdout, wrong.stdout


def test_version_names_the_compiler_runtime_and_driver():
    assert re.fullmatch(r"iree-base-compiler \S+ \(iree-base-runtime \S+, llvm-cpu on local-sync\)",
                        IreeTarget().version())


def test_k_and_axis_out_of_range_are_taken_as_the_known_list_declares(target):
    """ONNX's contract refuses them (validates); IREE clamps K, takes K = 0, wraps the axis."""
    x = np.array([[3, 1, 2]], np.float32)
    known = load_known(None, "iree")
    for rule, k, axis, want in (("onnx.k.max", 5, -1, [[3, 2, 1]]), ("onnx.k.positive", 0, -1, [[]]),
                                ("onnx.axis.range", 1, -3, [[3]])):
        values, _ = target.run(onnx_case("float32", (1, 3), axis, k), x)
        assert values.tolist() == want, (rule, values.tolist())
        assert known.match(rule, failures.ACCEPTS_INVALID, "float32", "onnx:24", target.version()), rule
    assert target.validates
