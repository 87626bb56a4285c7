"""A bug only long axes show is found by a run that draws them: a planted TopK that looks at
the first 65,536 elements of an axis and no further, found within 300 examples on each of
three seeds with `--max-axis-size 1048576 --max-elements 1048576` (docs/fuzzing.md)."""
import os

import pytest

from topkspec.fuzz.config import RunConfig
from topkspec.fuzz.run import run_fuzz

SLOW = os.environ.get("TOPKSPEC_SLOW_TESTS") == "1"  # .ci/run sets it
BUG = os.path.join(os.path.dirname(__file__), "plugins", "long_axis_bug.py") + ":first_65536_only"


@pytest.mark.skipif(not SLOW, reason="slow (about a minute a seed): .ci/run runs it (TOPKSPEC_SLOW_TESTS=1)")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_bug_past_the_first_65536_elements_is_found_within_300_examples(seed):
    run = run_fuzz(RunConfig(target=BUG, max_examples=300, seed=seed, settings="ci", shrink=False,
                             stop_at_first=True, max_axis_size=1 << 20, max_elements=1 << 20, confirm=False))
    assert run.first_failure is not None, f"seed {seed}: not found in {run.total_examples} examples"
    seconds, examples = run.first_failure
    assert examples <= 300, f"seed {seed}: found after {examples} examples"
    failure = run.failures[0]
    assert failure.case.axis_size > 1 << 16, f"seed {seed}: the failing axis is {failure.case.axis_size} long"
