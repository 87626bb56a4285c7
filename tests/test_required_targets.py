"""A green run means the runtimes it should have were there: every target named in
TOPKSPEC_REQUIRE_TARGETS (CI sets it in .ci/run) must be available, or this fails with why; and
CI names every built-in target its machine can run."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import required_targets  # noqa: E402

from topkspec.targets.registry import BUILTIN_TARGETS, get_target  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Built-in targets CI's machine (Linux x86_64, no GPU) cannot run, and what each needs.
NOT_ON_CI = {
    "onnxruntime-cuda": "an NVIDIA GPU and onnxruntime-gpu",
    "torch-cuda": "an NVIDIA GPU and a CUDA build of torch",
    "jax-gpu": "a GPU and jax with a CUDA or ROCm backend",
}


def test_every_required_target_is_available():
    names = required_targets.required()
    if not names:
        pytest.skip(f"{required_targets.VARIABLE} names no target: nothing is required here")
    missing = required_targets.unavailable(names, get_target)
    assert not missing, f"required by {required_targets.VARIABLE} but unavailable:\n" + "\n".join(missing)


def test_the_names_come_from_the_variable_and_the_directml_switch():
    assert required_targets.required({}) == []
    assert required_targets.required({"TOPKSPEC_REQUIRE_TARGETS": " torch, jax,,torch "}) == ["torch", "jax"]
    assert required_targets.required({"TOPKSPEC_REQUIRE_TARGETS": "tract",
                                      "TOPKSPEC_REQUIRE_DIRECTML": "1"}) == ["tract", "directml",
                                                                             "onnxruntime-directml"]


class _Target:
    def __init__(self, ok, why=""):
        self.answer, self.closed = (ok, why), False

    def available(self):
        return self.answer

    def close(self):
        self.closed = True


def test_an_unavailable_or_unknown_target_is_reported_with_why():
    made = {"here": _Target(True), "gone": _Target(False, "No module named 'tract'")}

    def make(name):
        if name not in made:
            raise ValueError(f"unknown target {name!r}")
        return made[name]

    assert required_targets.unavailable(["here", "gone", "nope"], make) == [
        "gone: No module named 'tract'", "nope: ValueError: unknown target 'nope'"]
    assert made["here"].closed and made["gone"].closed


def test_a_run_missing_a_required_target_fails():
    """End to end: pytest itself fails when the variable names a target this machine lacks."""
    env = dict(os.environ, TOPKSPEC_REQUIRE_TARGETS="reference,no-such-target", PYTHONPATH=str(ROOT))
    env.pop("TOPKSPEC_REQUIRE_DIRECTML", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__,
                           "-k", "every_required_target_is_available"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no-such-target: TargetError: unknown target 'no-such-target'" in done.stdout, done.stdout


def ci_required():
    script = (ROOT / ".ci" / "run").read_text()
    found = re.search(rf"^export {required_targets.VARIABLE}=(\S+)$", script, re.M)
    assert found, f".ci/run must export {required_targets.VARIABLE}"
    return required_targets.required({required_targets.VARIABLE: found.group(1)})


def test_ci_requires_every_built_in_target_its_machine_can_run():
    assert set(ci_required()) == set(BUILTIN_TARGETS) - set(NOT_ON_CI), (
        "name a new built-in target in .ci/run's TOPKSPEC_REQUIRE_TARGETS, or say here why CI cannot run it")
