"""The litert target (LiteRT's TOPK_V2 through ai_edge_litert's Interpreter, models converted by
TensorFlow's TFLiteConverter): exact results against the reference in both directions (the
smallest K through the adapter's order-reversing key), on a non-last axis, with ties and
signed zeros; the runtime's refusals raised as Rejected; every known deviation real; and a
repro program that runs."""
import os
import runpy
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("ai_edge_litert.interpreter")
pytest.importorskip("tensorflow")

from topkspec.known import load_known  # noqa: E402
from topkspec.properties import failures  # noqa: E402
from topkspec.spec import Case, dtypes  # noqa: E402
from topkspec.targets.base import Rejected  # noqa: E402
from topkspec.targets.runtimes.litert import LiteRtTarget  # noqa: E402
from target_checks import assert_exact, recorded_report, standalone_repro  # noqa: E402


@pytest.fixture(scope="module")
def litert():
    target = LiteRtTarget(warm=False)
    yield target
    target.close()


def check(target, x, *, axis, k, largest, profile="onnx:11"):
    case = Case(profile, "TopK" if profile.startswith("onnx") else "TOP_K1", dtypes.name_of(x.dtype), x.shape,
                axis, k, largest=largest, index_dtype="int64")
    assert target.supports(case) is None, f"{case.describe()} should be supported"
    assert_exact(target, case, x)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32", "int64", "uint8"])
def test_exact_on_a_non_last_axis_with_ties_and_extremes(litert, dtype, largest):
    rng = np.random.default_rng(3)
    if dtypes.numpy_dtype(dtype).kind == "f":
        pool = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 1e-45, -1e-45, 3.5, 3.5], np.float32)
    else:
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1, 1, 0], dtype=dtype)
    x = rng.choice(pool, size=(5, 6, 3))  # many ties, on purpose
    for axis, k in ((1, 4), (0, 5), (-1, 2), (2, 1)):
        check(litert, x, axis=axis, k=k, largest=largest)


def test_signed_zeros_tie_in_index_order_both_ways(litert):
    x = np.array([0.0, -0.0, 1.0, 0.0, -0.0], dtype=np.float32)
    for largest in (True, False):
        check(litert, x, axis=0, k=5, largest=largest)
        check(litert, x, axis=0, k=3, largest=largest, profile="dml:5.0")


def test_k_above_the_axis_and_a_refused_type_are_rejections(litert):
    case = Case("onnx:11", "TopK", "float32", (2, 5), 1, 6, index_dtype="int64")
    with pytest.raises(Rejected, match="higher than the internal dimension"):
        litert.run(case, np.zeros((2, 5), np.float32))
    with pytest.raises(Rejected, match="converter refused a float16 TopK"):
        litert.supports(case.with_(dtype="float16", k=2))
    out_of_range = case.with_(axis=2, k=2)
    reason = litert.supports(out_of_range)
    assert reason and "no axis" in reason, f"an axis outside the rank cannot be expressed: {reason!r}"


@pytest.mark.parametrize("entry", list(load_known(None, "litert")), ids=lambda e: f"{e.rule}-{e.dtype or 'any'}")
def test_every_known_deviation_is_real(litert, entry):
    assert entry.reason and entry.url.startswith("https://"), entry
    if entry.rule.endswith("k.positive"):
        family = entry.rule.split(".")[0]
        for k in ((0,) if family == "dml" else (0, -1, -3)):
            case = Case("dml:5.0" if family == "dml" else "onnx:11", "TOP_K1" if family == "dml" else "TopK",
                        "float32", (2, 3), 1, k, index_dtype="int64")
            values, indices = litert.run(case, np.ones((2, 3), np.float32))  # accepted: no Rejected
            assert values.shape == indices.shape == (2, 0), f"K = {k}: shapes {values.shape}, {indices.shape}"
    else:
        case = Case("onnx:24", "TopK", entry.dtype, (3,), 0, 1, index_dtype="int64")
        with pytest.raises(Rejected):
            litert.supports(case)


def test_the_repro_reproduces_k_zero_and_passes_where_litert_is_right(tmp_path, capsys):
    def report(case, x, rule, failure_class, name):
        folder = recorded_report(tmp_path, "litert", case, x, rule=rule, failure_class=failure_class, name=name)
        source = standalone_repro(folder)
        assert "TFLiteConverter" in source and "Interpreter(" in source, source
        return os.path.join(folder, "repro.py")

    # standalone, in a fresh interpreter: LiteRT accepts K = 0, so the program exits 1
    k_zero = report(Case("dml:5.0", "TOP_K", "float32", (3,), 0, 0, index_dtype="int64"),
                    np.array([1, 2, 3], np.float32), "dml.k.positive", failures.ACCEPTS_INVALID, "k0")
    process = subprocess.Popen([sys.executable, k_zero], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # in this process (TensorFlow is imported already): the smallest 2 on axis 0, with signed zeros
    # tied and a subnormal, through the run's key, are right, so the program exits 0
    right = report(Case("dml:5.0", "TOP_K1", "float32", (3, 2), 0, 2, largest=False, index_dtype="int64"),
                   np.array([[0.0, 2.0], [-0.0, 1.0], [0.0, -1e-45]], np.float32), "out.exact",
                   failures.WRONG_RESULT, "right")
    with pytest.raises(SystemExit) as ended:
        runpy.run_path(right, run_name="__main__")
        raise SystemExit(0)
    printed = capsys.readouterr().out
    assert ended.value.code in (0, None), f"the smallest 2: expected exit 0, got {ended.value.code}\n{printed}"
    assert "fixed: the result is right" in printed, printed
    out, err = process.communicate(timeout=300)
    assert process.returncode == 1, f"K = 0 is accepted: expected exit 1, got {process.returncode}\n{out}{err[-2000:]}"
    assert "an invalid TopK was accepted" in err, err[-2000:]
