"""DirectML calls laid out as applications lay them out (spec.layouts): strides on each tensor,
binding offsets with guard bytes around the outputs, execution flags, the operator in a graph.

The layout group's two properties each catch a DirectML-level bug planted in the directml
target: reading the input without its strides, and writing past the output's elements. These
tests need the target set up (`topkspec directml setup`), as tests/test_directml.py does."""
import os
import sys

import numpy as np
import pytest
from slow import slow

from topkspec.directml.client.layout_call import input_buffer
from topkspec.fuzz import RunConfig, run_fuzz
from topkspec.properties import failures
from topkspec.spec import Case
from topkspec.spec.dtypes import itemsize
from topkspec.spec.layouts import Layout, buffer_plan, outside_mask
from topkspec.spec.reference import reference_topk
from topkspec.targets.runtimes.directml import DirectMLTarget

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from directml_needed import need  # noqa: E402

X = np.array([[[[3, 1, 2], [5, 9, 4]]]], np.float32)
BASE = Case("dml:5.0", "TOP_K1", "float32", (1, 1, 2, 3), 3, 2)
# The layouts DirectML 1.15.4 computes right under Wine on lavapipe (docs/directml.md).
LAYOUTS = {
    "transposed input": Layout(input="permuted", strides=((6, 6, 1, 2), None, None)),
    "padded input": Layout(input="padded", strides=((8, 8, 4, 1), None, None)),
    "padded outputs": Layout(output="padded", strides=(None, (8, 8, 4, 1), (8, 8, 3, 1))),
    "outputs in a slice": Layout(output="slice", offsets=(16, 32, 64), tails=(0, 12, 20)),
    "no meta commands, in a graph": Layout(flags=2, graph=True),
    "descriptors volatile": Layout(output="slice", offsets=(0, 16, 16), tails=(0, 4, 4), flags=4),
}


@pytest.fixture(scope="module")
def dml():
    target = need(DirectMLTarget())
    yield target
    target.close()


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_each_layout_computes_the_packed_answer_and_keeps_the_guard_bytes(dml, name):
    case = BASE.with_layout(LAYOUTS[name])
    values, indices = dml.run(case, X)
    want_values, want_indices = reference_topk(X, axis=3, k=2, largest=True)
    assert values.tolist() == want_values.tolist(), f"{name}: values: expected {want_values.tolist()}, got {values.tolist()}"
    assert indices.tolist() == want_indices.tolist(), f"{name}: indices: expected {want_indices.tolist()}, got {indices.tolist()}"
    kept = dml.last_output_buffers()
    for data, entry in ((kept.values, kept.plan[1]), (kept.indices, kept.plan[2])):
        raw = np.frombuffer(data, np.uint8)
        changed = np.flatnonzero(outside_mask(entry, raw.size) & (raw != kept.fill))
        assert not changed.size, f"{name}: bytes outside the output changed at {changed[:5].tolist()}"


def test_a_broadcast_input_reads_one_row_for_both(dml):
    case = BASE.with_layout(Layout(input="broadcast", strides=((0, 0, 0, 1), None, None)))
    values, indices = dml.run(case, np.array([[[[3, 1, 2], [3, 1, 2]]]], np.float32))
    assert values.ravel().tolist() == [3, 2, 3, 2], f"values: expected [3, 2, 3, 2], got {values.ravel().tolist()}"
    assert indices.ravel().tolist() == [0, 2, 0, 2], f"indices: expected [0, 2, 0, 2], got {indices.ravel().tolist()}"


def test_overlapping_outputs_are_refused_as_our_reading_says(dml):
    case = BASE.with_layout(Layout(output="padded", strides=(None, (0, 0, 0, 1), None)))
    from topkspec.targets.base import Rejected
    with pytest.raises(Rejected, match="E_INVALIDARG"):
        dml.run(case, X)


class IgnoresInputStrides(DirectMLTarget):
    """DirectML with a planted bug: it reads the bound input as if it were packed, whatever its
    Strides say (the buffer is laid out as the case says; DirectML is told a packed tensor)."""

    def run(self, case, x):
        layout = case.layout
        if case.family != "dml" or layout.strides[0] is None:
            return super().run(case, x)
        plan = buffer_plan(case)
        raw = np.frombuffer(input_buffer(case, x, plan), np.uint8)[plan[0]["offset"]:]
        size = itemsize(case.dtype)
        read = np.zeros(x.size, dtype=case.dtype)
        as_packed = raw[:len(raw) // size * size].view(case.dtype)[:x.size]
        read[:as_packed.size] = as_packed
        packed = Layout(**{**layout.__dict__, "input": "packed", "strides": (None,) + tuple(layout.strides[1:])})
        return super().run(case.with_layout(packed), read.reshape(x.shape))


class WritesPastTheOutput(DirectMLTarget):
    """DirectML with a planted bug: the values kernel writes one element past the output's last
    element (into the guard bytes after it, or the padding between its rows)."""

    def run(self, case, x):
        result = super().run(case, x)
        kept = self.kept["buffers"]
        if kept is not None:
            entry = kept.plan[1]
            outside = np.flatnonzero(outside_mask(entry, len(kept.values)))
            outside = outside[outside >= entry["offset"]]  # past the binding's start: a write past an element
            if outside.size:
                data = bytearray(kept.values)
                data[int(outside[0])] ^= 0xFF
                self.kept["buffers"] = type(kept)(bytes(data), kept.indices, kept.plan, kept.fill)
        return result


@pytest.mark.parametrize("planted, rules", [
    (IgnoresInputStrides, ("out.layout.same_answer", "out.values.gather", "out.values.select", "out.exact")),
    (WritesPastTheOutput, ("out.layout.no_write_outside",))])
@slow
def test_a_planted_directml_bug_is_found_within_1000_examples(planted, rules):
    target = need(planted())
    try:
        result = run_fuzz(RunConfig(target=target, max_examples=1000, seed=0, settings="ci", groups=("layout",)))
    finally:
        target.close()
    # Filed under the one rule that decides it: a result read without the input's strides is
    # no gathering of the input, so a result rule may decide before out.layout.same_answer.
    found = [f for f in result.failures if f.rule in rules]
    assert found, f"{planted.__name__}: expected a failure of {rules}, got {[(f.rule, f.violation.message) for f in result.failures]}"
    assert found[0].failure_class == failures.WRONG_RESULT, found[0].failure_class
    assert not found[0].case.layout.is_plain, f"the reported case has no layout: {found[0].case.call_text()}"
    if planted is IgnoresInputStrides:
        assert found[0].case.layout.strides[0] is not None, f"input packed: {found[0].case.call_text()}"
    # Found within the budget (shrinking it afterwards runs examples of its own, counted apart).
    assert result.first_failure is not None and result.first_failure[1] <= 1000, (result.first_failure,
                                                                                   result.examples)


def _repro(tmp_path, dml, rule, calls, name):
    """The report package's repro.py for a recorded finding of `rule` on these calls, run."""
    import subprocess

    from topkspec.fuzz import Failure, RunResult
    from topkspec.properties.failures import Violation
    from topkspec.report import write_report

    case, x = calls[-1]
    violation = Violation(rule, f"{rule}: recorded", failure_class=failures.WRONG_RESULT, expected="e", actual="a")
    failure = Failure(target=dml.name, group="layout", violation=violation, case=case, x=x, calls=list(calls),
                      outputs=[None] * len(calls))
    result = RunResult(target=dml.name, version=dml.version(), profile=case.profile, settings="ci", seed=0,
                       max_examples=1)
    folder = write_report(failure, result, str(tmp_path / name), target_spec=dml)
    text = open(os.path.join(folder, "repro.py")).read()
    return subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300), text


@pytest.mark.parametrize("rule", ["out.layout.same_answer", "out.layout.no_write_outside", "out.exact"])
def test_a_laid_out_finding_replays_laid_out_and_passes_where_directml_is_right(dml, tmp_path, rule):
    laid = BASE.with_layout(Layout(input="permuted", output="padded", strides=((6, 6, 1, 2), (8, 8, 4, 1), (8, 8, 3, 1)),
                                   offsets=(16, 0, 0), tails=(0, 4, 8), flags=2))
    calls = [(laid, X), (BASE, X)] if rule == "out.layout.same_answer" else [(laid, X)]
    out, text = _repro(tmp_path, dml, rule, calls, rule.replace(".", "_"))
    assert '"strides": [6, 6, 1, 2]' in text, f"{rule}: the repro does not lay the input out:\n{text[:2000]}"
    assert out.returncode == 0, f"{rule}: DirectML is right here: expected exit 0, got {out.returncode}\n{out.stdout}{out.stderr}"
