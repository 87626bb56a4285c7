"""The built-in targets' contracts: every point sourced, the right family per runtime, the table
in docs/runtimes.md equal to the data, and `topkspec targets --contract` printing one."""
import pathlib
import subprocess
import sys

import pytest

from topkspec.spec.contracts import POINTS
from topkspec.targets.listing import CONTRACT_ROWS, contract_table
from topkspec.targets.registry import get_target, known_names

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs" / "runtimes.md"
FRAMEWORKS = ("torch", "torch-cuda", "jax", "jax-gpu", "tensorflow", "litert", "keras-numpy", "paddle",
              "mindspore", "tinygrad")
IMPORTERS = ("onnxruntime", "openvino", "tract", "iree", "onnx-reference", "onnx-checker", "onnxruntime-directml")


@pytest.mark.parametrize("name", sorted(set(FRAMEWORKS + IMPORTERS + ("directml",))))
def test_each_builtin_target_declares_a_sourced_contract(name):
    contract = get_target(name).contract
    expected = "own" if name in FRAMEWORKS else "onnx" if name in IMPORTERS else "dml"
    assert contract.implements == expected
    for promise in contract.promises:
        assert promise.url.startswith("https://") and promise.title, (name, promise.point)
        if promise.status == "documented":
            assert promise.quote, (name, promise.point)  # a documented promise quotes its sentence
        else:
            assert promise.reason, (name, promise.point)  # our reading says why
    if expected == "own":  # a framework is held to its own page, never to ONNX's
        assert not any("onnx.ai" in p.url for p in contract.promises)


def test_frameworks_quote_what_their_pages_say():
    assert get_target("torch").contract.value("ties") == "unspecified"
    assert "not guaranteed to be stable" in get_target("torch").contract.promise("ties").quote
    assert get_target("jax").contract.value("ties") == "index_order"
    assert get_target("tensorflow").contract.value("smallest") == "not_offered"
    assert get_target("tinygrad").contract.value("k_zero") == "unspecified"
    assert get_target("paddle").contract.promise("axis_out_of_range").status == "documented"


def test_the_docs_table_is_the_contracts():
    assert set(CONTRACT_ROWS) <= set(known_names())
    assert contract_table() in DOCS.read_text(), "docs/runtimes.md: regenerate the table with contract_table()"
    assert len(contract_table().splitlines()[0].split("|")) == len(POINTS) + 4


def test_targets_contract_prints_every_point():
    out = subprocess.run([sys.executable, "-m", "topkspec", "targets", "--contract", "tensorflow"],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("TensorFlow tf.math.top_k: implements its own API")
    assert '"If two elements are equal, the lower-index element appears first."' in out
    assert "https://www.tensorflow.org/api_docs/python/tf/math/top_k" in out
    bad = subprocess.run([sys.executable, "-m", "topkspec", "targets", "--contract", "nosuch"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
