"""The `jittor` target: jt.topk in jittor's own Python environment (numpy below 2), through the
worker in another environment; its repro runs under that environment's interpreter."""
import os
import subprocess

import numpy as np
import pytest

from topkspec.spec import Case
from topkspec.targets.foreign import find_python

PYTHON, WHERE = find_python("jittor")
if PYTHON is None:
    pytest.skip(f"no jittor environment: {WHERE}", allow_module_level=True)

from topkspec.targets.runtimes.jittor import JittorTarget, jittor_home  # noqa: E402
from target_checks import assert_exact, recorded_report, standalone_repro  # noqa: E402


@pytest.fixture(scope="module")
def target():
    made = JittorTarget(timeout=300)  # a new signature compiles jittor's operators
    ok, reason = made.available()
    if not ok:
        pytest.skip(reason)
    yield made
    made.close()


def test_it_runs_in_its_own_environment(target):
    assert "jittor 1.3" in target.version() and "numpy 1." in target.version()
    assert target.contract.implements == "own" and target.contract.value("sorted") == "optional"


@pytest.mark.parametrize("largest", [True, False])
def test_distinct_values_on_a_non_last_axis(target, largest):
    x = np.random.default_rng(2).permutation(24).reshape(2, 3, 4).astype(np.float32)
    assert_exact(target, Case("onnx:11", "TopK", "float32", (2, 3, 4), 1, 2, largest=largest, index_dtype="int32"), x)


def test_types_jittor_narrows_are_unsupported(target):
    for dtype in ("float64", "int64", "uint64"):
        assert "jt.array changes it" in target.supports(Case("onnx:11", "TopK", dtype, (3,), 0, 1))
    assert target.supports(Case("onnx:11", "TopK", "int16", (3,), 0, 1)) is None


def test_every_known_entry_is_real(target):
    """float16 does not compile (a refusal of every float16 case); NaN takes the wrong elements."""
    from topkspec.known import load_known
    from topkspec.targets.base import Rejected

    rules = {entry.rule for entry in load_known(None, "jittor")}
    assert rules == {"out.valid_accepted", "out.nan.unspecified", "onnx.k.max", "onnx.axis.range"}  # the crash: its repro
    values, _ = target.run(Case("onnx:11", "TopK", "float32", (3,), 0, 5, index_dtype="int32"),
                           np.array([3, 1, 2], dtype=np.float32))
    assert values.shape == (3,), values
    with pytest.raises(Rejected, match="float16"):
        target.supports(Case("onnx:11", "TopK", "float16", (3,), 0, 1))
    case = Case("onnx:11", "TopK", "float32", (4,), 0, 2, index_dtype="int32")
    values, _ = target.run(case, np.array([1, np.nan, 3, 2], dtype=np.float32))
    assert 1.0 in values.tolist(), values


def test_repro_runs_under_jittors_interpreter(tmp_path):
    x = np.array([[4, 1, 3, 2], [0, 7, 5, 6]], dtype=np.float32)
    case = Case("onnx:11", "TopK", "float32", (2, 4), 1, 2, index_dtype="int32")
    folder = recorded_report(tmp_path, "jittor", case, x)
    source = standalone_repro(folder)
    assert "jt.topk(jt.array(x), k, dim=axis" in source, source
    env = {**os.environ, "JITTOR_HOME": jittor_home(), "nvcc_path": "", "use_mkl": "0"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(PYTHON), os.path.join(folder, "repro.py")], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, f"jittor is right here: expected exit 0\n{done.stdout}{done.stderr}"
