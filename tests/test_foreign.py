"""A target's runtime in another Python environment (topkspec.targets.foreign): the standalone
worker script, the interpreter it runs under, and a crash or a hang there, shown with a kernel
of our own run by this interpreter (any interpreter with numpy can run it)."""
import os
import sys

import numpy as np
import pytest

from topkspec.targets.base import AdapterError, Rejected
from topkspec.targets.foreign import ForeignTarget, find_python, python_variable
from topkspec.targets.isolation import TargetCrashed, TargetHung

KERNEL = '''
import os, sys, time
import numpy as np

def version():
    return "toy 1.0"

def topk(x, k):
    order = np.argsort(-x, kind="stable")[:k]
    return x[order], order

def refuse():
    raise ValueError("no such thing")

def broken():
    return undefined_name

def crash():
    os.abort()

def hang():
    time.sleep(60)

def where():
    return sys.executable, "topkspec" in sys.modules
'''


class Toy(ForeignTarget):
    name = "toy"
    environment = "toy"


@pytest.fixture
def toy(tmp_path, monkeypatch):
    (tmp_path / "toy_kernel.py").write_text(KERNEL)
    monkeypatch.setenv(python_variable("toy"), sys.executable)
    made = Toy(timeout=10)
    made.kernel = str(tmp_path / "toy_kernel.py")
    yield made
    made.close()


def test_the_variable_names_the_interpreter(monkeypatch, tmp_path):
    assert python_variable("onnxruntime@1.31") == "TOPKSPEC_ONNXRUNTIME_1_31_PYTHON"
    monkeypatch.setenv("TOPKSPEC_ENVS", str(tmp_path))
    monkeypatch.delenv(python_variable("toy"), raising=False)
    python, why = find_python("toy")
    assert python is None and "topkspec env setup toy" in why
    monkeypatch.setenv(python_variable("toy"), str(tmp_path / "nothing"))
    assert "names no interpreter" in find_python("toy")[1]


def test_calls_cross_as_plain_data_and_the_worker_needs_no_topkspec(toy):
    assert toy.available() == (True, "")
    assert toy.version().startswith("toy 1.0 (Python ")
    values, indices = toy.call("topk", np.array([3, 1, 2, 5], dtype=np.int16), 2)
    assert values.dtype == np.int16 and values.tolist() == [5, 3] and indices.tolist() == [3, 0]
    executable, imported_topkspec = toy.call("where")
    assert executable and not imported_topkspec


def test_a_refusal_and_a_kernel_bug_are_told_apart(toy):
    with pytest.raises(Rejected, match="ValueError: no such thing"):
        toy.call("refuse")
    with pytest.raises(AdapterError, match="NameError"):
        toy.call("broken")
    assert toy.call("topk", np.array([1.0, 2.0]), 1)[0].tolist() == [2.0]  # the same worker goes on


def test_a_crash_and_a_hang_end_the_worker_and_the_next_call_starts_another(toy):
    toy.set_timeout(2)
    with pytest.raises(TargetCrashed, match="SIGABRT"):
        toy.call("crash")
    with pytest.raises(TargetHung, match="no answer within 2s"):
        toy.call("hang")
    assert toy.call("topk", np.array([1.0, 2.0]), 1)[1].tolist() == [1]
    assert toy.worker().starts == 3  # the crash call started one, each call after a death another


def test_an_interpreter_whose_runtime_does_not_import_is_unavailable(tmp_path, monkeypatch):
    (tmp_path / "bad_kernel.py").write_text("import no_such_runtime\n")
    monkeypatch.setenv(python_variable("toy"), sys.executable)
    made = Toy()
    made.kernel = str(tmp_path / "bad_kernel.py")
    usable, why = made.available()
    assert not usable and "No module named 'no_such_runtime'" in why
    made.close()


@pytest.mark.skipif(find_python("onnxruntime@1.31")[0] is None,
                    reason="onnxruntime@1.31 is not set up (topkspec env setup onnxruntime@1.31)")
def test_two_onnxruntime_versions_side_by_side():
    from topkspec.spec import Case
    from topkspec.targets.registry import get_target

    other, here = get_target("onnxruntime@1.31"), get_target("onnxruntime")
    try:
        assert other.available() == (True, "")
        assert "onnxruntime 1.31" in other.version() and other.name == "onnxruntime@1.31"
        case = Case("onnx:11", "TopK", "float32", (2, 3), 1, 2, index_dtype="int64")
        x = np.array([[3, 1, 2], [0, 5, 5]], dtype=np.float32)
        for mine, theirs in zip(here.run(case, x), other.run(case, x)):
            assert np.array_equal(mine, theirs)
        with pytest.raises(Rejected):
            other.run(case.with_(k=4), x)
    finally:
        other.close()
        here.close()
