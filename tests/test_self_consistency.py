"""A runtime held to itself where its contract leaves the answer open: one that contradicts itself
is reported once, under the self-consistency rule its two calls break, with a repro.py that makes
both calls and exits 1; one that makes the same choice every time is never reported."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from slow import slow

sys.path.insert(0, str(Path(__file__).parent))
import planted_bugs as bugs  # noqa: E402

from topkspec.fuzz import RunConfig, run_fuzz  # noqa: E402
from topkspec.properties.catalogue import BY_NAME, RELATION_OF_RULE  # noqa: E402
from topkspec.spec.contracts import dml_contract  # noqa: E402
from topkspec.targets.base import CallableTarget  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PLANTED = ROOT / "tests" / "planted_bugs.py"
SELF_RULES = ("self.batch", "self.prefix", "self.axis", "self.k_input", "self.repeat")


def _fresh_repro(folder) -> subprocess.CompletedProcess:
    """The report's repro.py run in a fresh process, with this checkout importable."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(Path(folder) / "repro.py")], capture_output=True, text=True,
                          env=env, timeout=120, cwd=folder)


def test_nan_first_alone_and_last_in_a_batch_is_reported_as_contradicting_itself(tmp_path):
    result = run_fuzz(RunConfig(target=f"{PLANTED}:nan_first_alone_last_in_batch", profile="dml:5.0",
                                max_examples=1000, seed=0, report_dir=str(tmp_path), isolate=False))
    rules = [failure.rule for failure in result.failures]
    assert rules == ["self.batch"], f"expected one failure, under self.batch, got {rules}"
    failure = result.failures[0]
    prop = BY_NAME[RELATION_OF_RULE[failure.rule]]
    assert getattr(prop, "self_consistency", False), f"{prop.name} is not marked self_consistency"
    assert failure.report_dir, "no report folder was written"
    report = (Path(failure.report_dir) / "report.md").read_text()
    title = report.splitlines()[0]
    assert "contradicts itself" in title, f"title: expected 'contradicts itself', got {title!r}"
    assert "NaN" in report and "alone" in report and "batch" in report, report[:800]
    calls = json.loads((Path(failure.report_dir) / "case.json").read_text())
    assert calls, "case.json is empty"
    done = _fresh_repro(failure.report_dir)
    assert done.returncode == 1, f"repro.py: expected exit 1, got {done.returncode}: {done.stdout}{done.stderr}"
    assert "differ" in done.stderr, done.stderr


def test_k_constant_against_k_input_is_reported_and_replayed(tmp_path):
    result = run_fuzz(RunConfig(target=f"{PLANTED}:nan_last_for_constant_k_target", max_examples=300, seed=0,
                                report_dir=str(tmp_path), isolate=False, groups=("self",)))
    assert [f.rule for f in result.failures] == ["self.k_input"], [f.rule for f in result.failures]
    case = json.loads((Path(result.failures[0].report_dir) / "case.json").read_text())
    assert "constant" in json.dumps(case), f"case.json does not say how K was passed: {case}"
    done = _fresh_repro(result.failures[0].report_dir)
    assert done.returncode == 1, f"repro.py: expected exit 1, got {done.returncode}: {done.stdout}{done.stderr}"


def _ties_open(fn):
    """`fn` as a target whose contract leaves ties open (DirectML's text otherwise)."""
    contract = dml_contract(fn.__name__).replaced(ties="unspecified")
    return CallableTarget(fn, name=fn.__name__, contract=contract)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", ["nan_first", "nan_last", "ties_by_descending_index"])
@slow
def test_the_same_choice_every_time_is_never_reported(name, seed):
    """NaN first everywhere, NaN last everywhere, ties in descending index order where ties are
    open: each a choice the contract leaves to the runtime, made the same way each time."""
    fn = getattr(bugs, name)
    target = _ties_open(fn) if name.startswith("ties") else f"{PLANTED}:{name}"
    result = run_fuzz(RunConfig(target=target, profile="dml:5.0", max_examples=150, seed=seed, isolate=False,
                                groups=("self",), confirm=False))
    broken = [(f.rule, f.violation.message) for f in result.failures]
    assert not broken, f"{name}, seed {seed}: expected no failure, got {broken}"
    judged = {prop: result.checks[prop] for prop in ("self_batch", "self_prefix", "self_axis", "self_repeat")}
    assert all(judged.values()), f"{name}, seed {seed}: a relation judged no example: {judged}"


@slow
def test_a_planted_contradiction_per_relation_is_caught_by_a_run():
    """Where ties are open, a runtime that reverses them in a batch, or on an inner axis, is
    caught by the run (not only by the property): the existing relations are not promised."""
    for fn, rule in ((bugs.ties_reversed_in_batch, "self.batch"), (bugs.inner_axis_ties, "self.axis")):
        result = run_fuzz(RunConfig(target=_ties_open(fn), profile="dml:5.0", max_examples=200, seed=0,
                                    isolate=False, groups=("self",), confirm=False))
        assert rule in [f.rule for f in result.failures], f"{fn.__name__}: {[f.rule for f in result.failures]}"


def test_the_docs_list_the_groups_and_rules_there_are():
    """docs/fuzzing.md lists every group a run of a computing target plans, self included, and
    names each self-consistency rule; docs/spec.md names each rule too."""
    import re

    from topkspec.fuzz.groups import plan_groups
    from topkspec.spec import RULES
    from topkspec.targets.registry import get_target

    fuzzing = (ROOT / "docs" / "fuzzing.md").read_text()
    section = fuzzing.split("## Property groups", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- \*\*(\w+)\*\*", section, flags=re.M)
    planned = list(plan_groups(get_target("reference"), "onnx:24"))
    assert sorted(listed) == sorted(g for g in planned), f"docs list {listed}, a run plans {planned}"
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
    assert f"A run is {words[len(planned)]} property groups" in section, section[:200]
    spec_page = (ROOT / "docs" / "spec.md").read_text()
    for rule in SELF_RULES:
        assert rule in RULES, f"{rule} is no rule"
        assert f"`{rule}`" in section and f"`{rule}`" in spec_page, f"{rule} is not named in the docs"


def _nan_pick(pick):
    """A run whose answers put NaN first (two NaNs tied, ties open): `pick(k)` says which of
    the input's two NaNs, -NaN at index 0 or NaN at index 1, each K gets first."""
    def run(case, x):
        first = pick(case.k)
        order = [first, 1 - first, 2][:case.k]
        return x[order], np.array(order, dtype=np.int64)
    return run


def test_prefix_ties_every_nan_where_ties_are_open_and_tells_their_signs_apart_where_settled():
    """Two NaNs of different signs: a runtime that ties them may give one for K and the other
    for K-1 where ties are open; where ties are settled it picks the same one, and the report
    prints the sign (-nan) that tells them apart."""
    from topkspec.properties.failures import Violation
    from topkspec.properties.self_consistency import check_self_prefix
    from topkspec.spec import Case

    case = Case("onnx:24", "TopK", "float32", (3,), 0, 2, index_dtype="int64")
    x = np.array([-np.nan, np.nan, 1.0], dtype=np.float32)
    assert np.signbit(x[0]) and not np.signbit(x[1])
    by_k = _nan_pick(lambda k: 0 if k == 2 else 1)
    check_self_prefix(case, x, by_k, settled=False)  # open ties: any NaN matches any NaN
    with pytest.raises(Violation, match=r"-nan") as raised:
        check_self_prefix(case, x, by_k, settled=True)
    assert raised.value.rules == ("self.prefix",), raised.value.rules
    check_self_prefix(case, x, _nan_pick(lambda k: 0), settled=True)  # the same pick for both K

    def nan_last_for_k_minus_1(case, x):  # NaN first for K=2, a number first for K=1
        order = [0, 1][:case.k] if case.k == 2 else [2]
        return x[order], np.array(order, dtype=np.int64)
    with pytest.raises(Violation, match="NaN"):
        check_self_prefix(case, x, nan_last_for_k_minus_1, settled=False)
