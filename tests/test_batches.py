"""Many cases per Hypothesis example (fuzz.batches) and their calls sent to a worker together
(fuzz.prefetch, IsolatedTarget.submit_many): each case keeps its own verdict, report and
earlier calls; a crash or hang in a batch is the call that caused it."""
import os

import numpy as np
import pytest
from slow import slow

from topkspec.fuzz.config import RunConfig
from topkspec.fuzz.run import run_fuzz
from topkspec.spec import Case
from topkspec.targets.isolation import IsolatedTarget, TargetCrashed, TargetHung

HERE = os.path.join(os.path.dirname(__file__), "test_isolation.py")
PLANTED = os.path.join(os.path.dirname(__file__), "planted_by_bug.py")


def _call(k):
    case = Case("onnx:24", "TopK", "float32", (4,), axis=0, k=k)
    return case, np.arange(4, dtype=np.float32)


@pytest.mark.parametrize("bug, error", [("sigsegv_when_k_above_1", TargetCrashed), ("hang_when_k_above_1", TargetHung)])
def test_a_batch_that_breaks_the_worker_answers_for_the_call_that_broke_it(bug, error):
    target = IsolatedTarget(f"{HERE}:{bug}", timeout=3)
    try:
        calls = [_call(1), _call(1), _call(2), _call(1)]
        answers = target.submit_many(calls)()
        assert list(answers) == [2], f"answers for calls {list(answers)}: expected only the third's (index 2)"
        number, wait = answers[2]
        with pytest.raises(error):
            wait()
        held = [case.k for case, _ in target.history.before(number + 1)]
        assert held == [1, 1, 2], f"the worker's history up to the call that broke it: {held}"
        values, _ = target.run(*_call(1))  # a fresh worker answers the next call
        assert values.tolist() == [3.0]
    finally:
        target.close()


def test_a_batch_answers_each_call_in_order_with_its_number_in_the_history():
    target = IsolatedTarget("reference")
    try:
        target.run(*_call(1))  # one call before: numbers continue from it
        answers = target.submit_many([_call(1), _call(3), _call(2)])()
        assert sorted(answers) == [0, 1, 2]
        got = {index: (number, wait()[0].tolist()) for index, (number, wait) in answers.items()}
        assert got == {0: (1, [3.0]), 1: (2, [3.0, 2.0, 1.0]), 2: (3, [3.0, 2.0])}, got
    finally:
        target.close()


@pytest.mark.parametrize("seed", [0, 1])
@slow
def test_two_bugs_in_one_list_are_each_reported_on_their_own_minimal_case(seed):
    """A function wrong for two value types: each gets its report, each on the smallest case
    its bug allows: one uint8 element for the garbage, three floats (NaN, then two values) for
    the NaN tail, as before a list held many cases."""
    run = run_fuzz(RunConfig(target=f"{PLANTED}:garbage_in_int8_and_nan_tail", max_examples=300, seed=seed,
                             settings="ci", profile="onnx:24", confirm=False))
    sizes = sorted((failure.rule, int(np.prod(failure.case.shape))) for failure in run.failures)
    assert sizes == [("out.indices.range_distinct", 1), ("out.values.select", 3)], (
        f"seed {seed}: expected one report per bug on its smallest case, got {sizes}")
