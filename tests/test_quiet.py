"""Runtimes' logging stays out of a run's output unless TOPKSPEC_RUNTIME_LOGS=keep."""
import logging
import os
import subprocess
import sys

import pytest
from slow import slow

from topkspec.targets.quiet import RUNTIME_LOGS_ENV, quiet_environment, quiet_logger, stderr_captured

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_quiet_defaults_keep_what_the_user_set(monkeypatch):
    monkeypatch.delenv(RUNTIME_LOGS_ENV, raising=False)
    monkeypatch.delenv("TOPKSPEC_TEST_A", raising=False)
    monkeypatch.setenv("TOPKSPEC_TEST_B", "users")
    quiet_environment(TOPKSPEC_TEST_A="2", TOPKSPEC_TEST_B="2")
    assert os.environ["TOPKSPEC_TEST_A"] == "2" and os.environ["TOPKSPEC_TEST_B"] == "users"
    quiet_environment(TOPKSPEC_TEST_B="0", replace=True)
    assert os.environ["TOPKSPEC_TEST_B"] == "0"


def test_keep_leaves_every_setting_alone(monkeypatch):
    monkeypatch.setenv(RUNTIME_LOGS_ENV, "keep")
    monkeypatch.delenv("TOPKSPEC_TEST_A", raising=False)
    quiet_environment(TOPKSPEC_TEST_A="2", replace=True)
    assert "TOPKSPEC_TEST_A" not in os.environ
    logger = logging.getLogger("topkspec-test-runtime")
    logger.setLevel(logging.DEBUG)
    quiet_logger("topkspec-test-runtime")
    assert logger.level == logging.DEBUG
    monkeypatch.delenv(RUNTIME_LOGS_ENV)
    quiet_logger("topkspec-test-runtime")
    assert logger.level == logging.ERROR


def test_native_writes_to_stderr_are_captured_unless_kept(monkeypatch, capfd):
    monkeypatch.delenv(RUNTIME_LOGS_ENV, raising=False)
    with stderr_captured() as captured:
        os.write(2, b"clang: error: no bf16\n")
    assert captured == ["clang: error: no bf16\n"] and capfd.readouterr().err == ""
    monkeypatch.setenv(RUNTIME_LOGS_ENV, "keep")
    with stderr_captured() as captured:
        os.write(2, b"runtime notice\n")
    assert captured == [] and capfd.readouterr().err == "runtime notice\n"


# Eight signatures, one call each: TensorFlow's tracing counter calls that retracing.
TENSORFLOW_SIGNATURES = """
import numpy as np
from topkspec.spec import Case
from topkspec.targets.runtimes.tensorflow import TensorFlowTarget

target = TensorFlowTarget()
for rank in (1, 2, 3, 4):
    for dtype in ("float32", "int32"):
        x = np.arange(2 ** rank, dtype=dtype).reshape((2,) * rank)
        target.run(Case("onnx:24", "TopK", dtype, x.shape, 0, 1, index_dtype="int64"), x)
counts = sorted({f.experimental_get_tracing_count() for f in target._functions.values()})
print("functions", len(target._functions), "traced", counts)
"""


def tensorflow_run(keep: bool):
    pytest.importorskip("tensorflow")
    env = {k: v for k, v in os.environ.items() if k not in (RUNTIME_LOGS_ENV, "TF_CPP_MIN_LOG_LEVEL")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if keep:
        env[RUNTIME_LOGS_ENV] = "keep"
    return subprocess.run([sys.executable, "-c", TENSORFLOW_SIGNATURES], capture_output=True, text=True,
                          timeout=300, env=env)


@slow
def test_tensorflow_traces_once_per_signature_and_says_nothing():
    done = tensorflow_run(keep=False)
    assert done.returncode == 0, done.stderr
    assert "functions 8 traced [1]" in done.stdout, done.stdout
    assert "retracing" not in done.stderr and "cpu_feature_guard" not in done.stderr, done.stderr


@slow
def test_tensorflow_logs_as_the_user_set_them_when_asked():
    done = tensorflow_run(keep=True)
    assert done.returncode == 0, done.stderr
    assert "triggered tf.function retracing" in done.stderr, done.stderr
