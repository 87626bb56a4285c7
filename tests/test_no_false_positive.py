"""No false positive through any adapter form: a correct implementation, given as a plain
function, a file path, a module path, a Target subclass or a validator function, gets no report
at any standard profile and seed; one with a planted bug is reported for its bug alone.

`python tests/test_no_false_positive.py [SEEDS...]` runs the correct forms over more seeds (0-9
by default) and prints what each run found."""
from __future__ import annotations

import os
import sys

import pytest
from slow import slow

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import planted_bugs  # noqa: E402

from topkspec.fuzz import RunConfig, run_fuzz  # noqa: E402
from topkspec.fuzz.summary import format_summary  # noqa: E402
from topkspec.spec.profiles import STANDARD_PROFILES  # noqa: E402
from topkspec.targets.base import CallableTarget  # noqa: E402

PLANTED = os.path.join(HERE, "planted_bugs.py")
USER = os.path.join(HERE, "user_targets.py")
SEEDS = (0, 1)


def _form(form: str, name: str):
    """(target spec, Target object or None) for a correct or buggy implementation in one form."""
    if form == "function":
        return name, CallableTarget(getattr(planted_bugs, name), name=name)
    if form == "file":
        return f"{PLANTED}:{name}", None
    if form == "module":  # tests/ is on sys.path (above)
        return f"planted_bugs:{name}", None
    return f"{USER}:{name}", None  # a Target subclass or a validator function


CORRECT = {"function": "CORRECT", "file": "CORRECT_AXIS_FROM_0", "module": "CORRECT", "target": "StrictTarget",
           "validator": "validates_like_the_spec"}


def _run(form: str, name: str, profile: str, seed: int, max_examples: int = 60):
    spec_text, target = _form(form, name)
    return run_fuzz(RunConfig(target=spec_text, profile=profile, max_examples=max_examples, seed=seed,
                              settings="ci", report_dir=None, isolate=False), target=target)


@pytest.mark.parametrize("profile", STANDARD_PROFILES)
@pytest.mark.parametrize("form", list(CORRECT))
@slow
def test_a_correct_implementation_gets_no_report_in_any_form(form, profile):
    for seed in SEEDS:
        result = _run(form, CORRECT[form], profile, seed)
        assert result.exit_code == 0 and not result.failures, f"{form} at {profile}, seed {seed}:\n{format_summary(result)}"


def test_a_correct_function_in_a_worker_process_gets_no_report():
    result = run_fuzz(RunConfig(target=f"{PLANTED}:CORRECT", profile="onnx:11", max_examples=60, seed=1,
                                settings="ci", report_dir=None))
    assert result.exit_code == 0 and not result.failures, format_summary(result)


# Each bug, in each form it is planted in, and the rules a report may be filed under.
BUGGY = [
    ("function", "widened_values", {"out.dtype.values"}),
    ("file", "widened_values", {"out.dtype.values"}),
    ("module", "widened_values", {"out.dtype.values"}),
    ("target", "WidensValues", {"out.dtype.values"}),
    ("function", "wraps_the_axis", {"onnx.axis.range"}),
    ("file", "wraps_the_axis", {"onnx.axis.range"}),
    ("target", "AcceptsKAboveN", {"onnx.k.max"}),
    ("validator", "accepts_k_zero", {"onnx.k.positive"}),
]


@pytest.mark.parametrize("profile", ["onnx:1", "onnx:11"])
@pytest.mark.parametrize("form, name, rules", BUGGY, ids=[f"{f}-{n}" for f, n, _ in BUGGY])
@slow
def test_a_planted_bug_is_reported_for_its_bug_alone_in_any_form(form, name, rules, profile):
    result = _run(form, name, profile, seed=0, max_examples=120)
    found = {f.rule for f in result.failures}
    assert found and found <= rules, f"{form}:{name} at {profile}: expected {rules}, got {found}\n" \
                                     f"{format_summary(result)}"


@pytest.mark.parametrize("form, name, rules", [
    ("file", "widened_values", {"out.dtype.values"}),
    ("file", "wraps_the_axis", {"dml.axis.range"}),
    ("target", "AcceptsKAboveN", {"dml.k.max"}),
    ("validator", "accepts_k_zero", {"dml.k.positive"}),
])
@slow
def test_a_planted_bug_is_reported_for_its_bug_alone_at_a_directml_profile(form, name, rules):
    result = _run(form, name, "dml:5.0", seed=0, max_examples=300)
    found = {f.rule for f in result.failures}
    assert found and found <= rules, f"{form}:{name}: expected {rules}, got {found}\n{format_summary(result)}"


def main(seeds) -> int:
    """The correct forms at every profile over `seeds`; prints each run's failures."""
    bad = 0
    for form, name in CORRECT.items():
        for profile in STANDARD_PROFILES:
            for seed in seeds:
                result = _run(form, name, profile, seed, max_examples=200)
                found = sorted(f"{f.rule} ({f.failure_class})" for f in result.failures)
                bad += bool(found)
                print(f"{form:<9} {profile:<8} seed {seed}: exit {result.exit_code}, "
                      f"{result.total_examples} examples, {', '.join(found) or 'no report'}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main([int(s) for s in sys.argv[1:]] or range(10)))


def _page_block(page: str, first_line: str) -> str:
    """The code block of a docs page that starts with `first_line`."""
    from docs_blocks import ROOT, blocks_of
    return next(b.text for b in blocks_of(ROOT / "docs" / page) if b.text.startswith(f"{first_line}\n"))


# What the docs' my_topk gets wrong (`-x` wraps around for unsigned types and the most negative
# integer, so it picks the wrong elements): the rules on which values come out, in what order.
WRONG_VALUES = {"out.values.select", "out.order", "out.exact", "out.ties.index_order", "out.ties.kth_place",
                "out.prefix", "out.axis_moves", "out.nan.unspecified"}


@pytest.mark.parametrize("profile", STANDARD_PROFILES)
@slow
def test_the_docs_example_function_is_reported_for_its_bug_alone(tmp_path, profile):
    path = tmp_path / "my_topk.py"
    path.write_text(_page_block("targets.md", "# my_topk.py"))
    result = run_fuzz(RunConfig(target=f"{path}:topk", profile=profile, max_examples=300, seed=1, settings="ci",
                                report_dir=None, isolate=False))
    found = {f.rule for f in result.failures}
    assert found <= WRONG_VALUES, f"{profile}: {found - WRONG_VALUES} is no bug of it\n{format_summary(result)}"
    # TopK-1 and TopK-10 take float types alone, where `-x` is right.
    assert found or profile in ("onnx:1", "onnx:10"), f"{profile}: its bug was not found\n{format_summary(result)}"
