"""What the suite says in passing, said so that it cannot be misread: a runtime's refusal of a
value type names no shape of its own probe, a whole opset that does not run says so, unsupported
counts say what they count, and what commands write by default is in the ignore file."""
from pathlib import Path

import pytest

from topkspec.fuzz import RunResult, format_summary
from topkspec.spec import Case

ROOT = Path(__file__).resolve().parent.parent


def test_a_refused_value_type_names_no_shape_but_the_cases():
    pytest.importorskip("onnxruntime")
    from topkspec.targets.runtimes import onnxruntime as ort
    from topkspec.targets.base import Rejected

    target = ort.cpu()
    try:
        refusal = target.probe(24, "bfloat16")
        if refusal is None:
            pytest.skip("this onnxruntime runs bfloat16 TopK-24")
        assert "elements" not in refusal and "runs no TopK-24 on bfloat16" in refusal, refusal
        with pytest.raises(Rejected) as refused:
            target.supports(Case("onnx:24", "TopK", "bfloat16", (1,), 0, 1, index_dtype="int64"))
        assert "3 elements" not in str(refused.value), refused.value
    finally:
        target.close()


def test_an_opset_that_does_not_run_at_all_says_so_for_every_type():
    pytest.importorskip("onnxruntime")
    from topkspec.targets.runtimes import onnxruntime as ort

    target = ort.cpu()
    try:
        target._probes[(24, "float32")] = "onnxruntime runs no TopK-24 on float32: InvalidGraph: opset 24"
        reason = target.supports(Case("onnx:24", "TopK", "uint8", (3,), 0, 1, index_dtype="int64"))
        assert reason.startswith("TopK-24 does not run here on any type, float32 included: "), reason
    finally:
        target.close()


def test_unsupported_counts_say_they_are_examples_set_aside():
    result = RunResult(target="t", version="1", profile="onnx:24", settings="ci", seed=0, max_examples=10)
    result.unsupported["invalid uint16 cases: the runtime refuses valid uint16 cases alike"] += 9
    summary = format_summary(result)
    assert "unsupported cases by reason (examples set aside, not judged: neither failures nor the known " \
           "deviations' counts):" in summary, summary
    assert "      9  invalid uint16 cases: " in summary, summary


def test_what_commands_write_by_default_is_ignored():
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    for name in ("topk-reports/", "matrix.md", "matrix-reports/", "topkspec-reports/", ".topkspec/"):
        assert name in ignored, name
