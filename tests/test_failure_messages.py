"""Failure messages stand alone: what a failing test shows names each rule once and ends with
the call, `[K=3, axis=1, largest, sorted]`, for every property of the catalogue (each on an
example its planted bug fails) and for the failures the fuzz engine finds itself (a crash, a
hang, a broken adapter, a refusal)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, settings

sys.path.insert(0, str(Path(__file__).parent))
from test_properties_planted import PLANTED, _violation  # noqa: E402

from topkspec.fuzz.context import GroupContext  # noqa: E402
from topkspec.fuzz.results import RunResult  # noqa: E402
from topkspec.properties import CATALOGUE, failures  # noqa: E402
from topkspec.properties.failures import Violation  # noqa: E402
from topkspec.spec import Case  # noqa: E402
from topkspec.targets.base import CallableTarget, Rejected  # noqa: E402
from topkspec.targets.isolation import TargetCrashed, TargetHung  # noqa: E402

# The first example that fails is enough: the message, not the shrinking, is under test.
FIRST_FAILURE = settings(max_examples=1000, derandomize=True, database=None, deadline=None,
                         phases=(Phase.generate,), suppress_health_check=list(HealthCheck))

CALL_AT_THE_END = re.compile(r" \[[^\[\]]+\]$")


def assert_stands_alone(violation: Violation) -> str:
    """The violation's text names each of its rules exactly once and ends with its call."""
    text = str(violation)
    assert violation.call and text.endswith(" " + violation.call), f"no call at the end: {text}"
    assert CALL_AT_THE_END.search(text), f"the call is not in brackets: {text}"
    for rule in (rule for rule in violation.rules if "." in rule):  # a pseudo-rule ("adapter") is a word too
        named = len(re.findall(rf"(?<![\w.]){re.escape(rule)}(?![\w])", text))
        assert named == 1, f"{rule} named {named} times: {text}"
    assert violation.call not in violation.message, f"the message names the call itself: {violation.message}"
    assert text.startswith(f"{', '.join(violation.rules)}: "), f"the rules do not lead: {text}"
    return text


def _first_row(prop):
    return next(row for row in PLANTED if row.check is prop.check)


@pytest.mark.parametrize("prop", CATALOGUE, ids=lambda prop: prop.name)
def test_every_property_s_message_ends_with_the_call(prop):
    row = _first_row(prop)
    drawn = find(row.strategy, row.predicate(row.fn()), settings=FIRST_FAILURE)
    violation = _violation(row, drawn)
    assert_stands_alone(violation)


def test_the_call_is_the_case_s_in_its_operator_s_words():
    onnx = Case("onnx:24", "TopK", "float32", (2, 5), 1, 3, index_dtype="int64")
    assert onnx.call_text() == "[K=3, axis=1, largest, sorted]"
    assert onnx.with_(largest=False, sorted=False).call_text() == "[K=3, axis=1, smallest, unsorted]"
    dml = Case("dml:5.0", "TOP_K1", "float32", (2, 5), 1, 3)
    assert dml.call_text() == "[TOP_K1, K=3, axis=1, DECREASING]"
    assert dml.with_(largest=False).call_text() == "[TOP_K1, K=3, axis=1, INCREASING]"
    assert dml.with_(op="TOP_K").call_text() == "[TOP_K, K=3, axis=1]"  # DML_TOP_K has no direction
    # a call that asks for K passed one way of two (self.k_input) says which, and keeps it in its JSON
    constant = onnx.with_k_form("constant")
    assert constant.call_text() == "[K=3, axis=1, largest, sorted, K as a constant]", constant.call_text()
    assert Case.from_dict(constant.to_dict()) == constant and constant.to_dict()["k_form"] == "constant"
    assert "k_form" not in onnx.to_dict() and constant.with_k_form(None) == onnx


def test_a_check_inside_another_keeps_the_call_it_named():
    violation = Violation("out.order", "out of order", call="[K=1, axis=0, largest, sorted]")
    violation.at(Case("onnx:24", "TopK", "float32", (3,), 0, 2, index_dtype="int64"))
    assert str(violation) == "out.order: out of order [K=1, axis=0, largest, sorted]"
    copy = violation.with_(also=("out.prefix",))
    assert str(copy) == str(violation) and copy.also == ("out.prefix",)


CASE = Case("onnx:24", "TopK", "float32", (3,), 0, 2, index_dtype="int64")
X = np.array([1.0, 3.0, 2.0], dtype=np.float32)


class Raising(CallableTarget):
    """A target whose call raises `exc` as the run sees it (a worker's crash or hang, a refusal)."""

    def __init__(self, exc):
        super().__init__(lambda x, *, axis, k, largest=True: None, name="t")
        self.exc = exc

    def run(self, case, x):
        raise self.exc


@pytest.mark.parametrize("target, failure_class, rule", [
    (Raising(TargetCrashed("the worker died: signal 11")), failures.CRASH, "out.valid_accepted"),
    (Raising(TargetHung("no answer within 1s")), failures.TIMEOUT, "timeout"),
    (Raising(Rejected("K=2 is not supported")), failures.REJECTS_VALID, "out.valid_accepted"),
    (CallableTarget(lambda x, *, axis, k, largest=True: x, name="t"), failures.ADAPTER_ERROR, "adapter"),
], ids=["crash", "hang", "refusal", "adapter"])
def test_the_engine_s_own_failures_end_with_the_call(target, failure_class, rule):
    result = RunResult(target="t", version="", profile="onnx:24", settings=None, seed=None, max_examples=0)
    ctx = GroupContext(target, result, "valid")
    ctx.start_example()
    with pytest.raises(Violation) as info:
        ctx.run(CASE, X)
    assert (info.value.failure_class, info.value.rules) == (failure_class, (rule,)), str(info.value)
    assert assert_stands_alone(info.value).endswith(" [K=2, axis=0, largest, sorted]")
    assert CASE.describe() not in str(info.value), "the call said twice"
