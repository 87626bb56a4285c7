"""The pytest plugin: options, Hypothesis profiles, the topk_target fixture and topkspec.suite."""
import json
import os
import re
import shutil

import pytest

from slow import slow

pytest_plugins = ["pytester"]

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLANTED = os.path.join(REPO, "tests", "planted_bugs.py")

# A small budget for the suite runs below, as a user's own profile would set it.
TINY_PROFILE = """
from hypothesis import settings
settings.register_profile("tiny", max_examples=100, derandomize=True, database=None, deadline=None)
settings.register_profile("wide", max_examples=1000, derandomize=True, database=None, deadline=None)
"""


def run_suite(pytester, *args, profile="tiny"):
    pytester.makepyfile(tinyprofile=TINY_PROFILE)
    pytester.syspathinsert()
    return pytester.runpytest_subprocess("-p", "tinyprofile", "-p", "no:cacheprovider", "--pyargs",
                                         "topkspec.suite", "--hypothesis-profile", profile, *args)


def test_the_suite_passes_on_the_reference_and_leaves_no_empty_report_folder(pytester, tmp_path):
    reports = tmp_path / "new" / "reports"
    result = run_suite(pytester, "--topk-target", "reference", "--topk-report-dir", str(reports))
    result.assert_outcomes(passed=6)
    # Made to check it can be written, and taken away again: nothing failed, nothing to keep.
    assert not (tmp_path / "new").exists(), f"left behind: {sorted(map(str, (tmp_path / 'new').rglob('*')))}"


@slow
def test_the_suite_fails_on_a_planted_bug_and_writes_reports(pytester, tmp_path):
    reports = tmp_path / "reports"
    result = run_suite(pytester, "--topk-target", f"{PLANTED}:ignores_direction",
                       "--topk-report-dir", str(reports))
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1, f"outcomes: {outcomes}\n{result.stdout.str()}"
    result.stdout.fnmatch_lines(["*topkspec found * distinct failure* in the * group: see 'topkspec: what was found'*"])
    text = result.stdout.str()
    # nothing of the suite's own code, nor Hypothesis's advice to decorate a test the user does not own
    for inside in ("settle(", "def ", "topkspec/fuzz/", "reproduce_failure", "your test function", "Violation_"):
        assert inside not in text, f"{inside!r} in the output:\n{text[-4000:]}"
    folders = sorted(reports.iterdir())
    assert folders, "no report folder written"
    names = sorted(p.name for p in folders[0].iterdir())
    assert names == ["case.json", "inputs.npz", "report.md", "repro.py"], f"{folders[0].name}: {names}"
    result.stdout.fnmatch_lines(["*topkspec: what was found*", "*expected: *", "*actual: *", "*rule: *",
                                 f"bug report: {folders[0]}"])


@slow
def test_a_failure_without_a_report_folder_says_how_to_get_one(pytester):
    result = run_suite(pytester, "--topk-target", f"{PLANTED}:ignores_direction")
    result.stdout.fnmatch_lines(["*input: *", "*expected: values *", "*actual: *values *",
                                 "bug report: none written (give --topk-report-dir DIR)"])


def test_statistics_show_the_suites_coverage_events(pytester):
    result = run_suite(pytester, "--topk-target", "reference", "--hypothesis-show-statistics")
    result.assert_outcomes(passed=6)
    text = result.stdout.str()
    for event in ("dtype=", "rank=", "K position=", "direction=", "array="):
        assert event in text, f"--hypothesis-show-statistics lacks the {event!r} events:\n{text[-3000:]}"


@pytest.mark.parametrize("option, value, message", [
    ("--topk-target", "no-such-target", "*unknown target 'no-such-target'*"),
    ("--topk-target", "onnxruntme", "*unknown target 'onnxruntme' (did you mean 'onnxruntime'?)*"),
    ("--topk-target", f"{PLANTED}:no_such_function", "*no attribute*"),
    ("--topk-spec", "cuda:1", "*unknown profile*"),
    ("--topk-report-dir", os.path.abspath(__file__), "*cannot write reports to*it is a file*"),
    ("--topk-max-axis-size", "0", "*--topk-max-axis-size must be at least 1, got 0*"),
    ("--topk-shards", "0", "*--topk-shards must be at least 1, got 0*"),
])
def test_bad_options_are_usage_errors(pytester, option, value, message):
    result = run_suite(pytester, option, value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, f"exit code: expected usage error, got {result.ret}"
    result.stderr.fnmatch_lines([message])


def test_a_target_whose_worker_does_not_start_is_a_usage_error_of_the_suite(pytester, monkeypatch):
    monkeypatch.setenv("TOPKSPEC_TEST_WORKER_START", "exit")
    target = os.path.join(REPO, "tests", "plugins", "worker_start.py") + ":topk"
    result = run_suite(pytester, "--topk-target", target)
    result.stdout.fnmatch_lines(["*UsageError: topkspec: worker for * exited with code 3 while starting*"])
    assert "isolation.TargetCrashed:" not in result.stdout.str(), result.stdout.str()  # not the raw error


def test_the_profiles_are_registered_and_ci_can_be_chosen(pytester):
    pytester.makepyfile("""
        from hypothesis import settings

        def test_ci_loaded():
            assert settings.default.derandomize is True
            assert settings.default.database is None
            assert settings.default.max_examples == 200
            for name in ("dev", "nightly"):
                settings.get_profile(name)
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hypothesis-profile", "ci")
    result.assert_outcomes(passed=1)


def test_the_fixture_gives_the_configured_target(pytester):
    pytester.makepyfile("""
        import numpy as np
        from topkspec.spec import Case

        def test_target(topk_target):
            assert topk_target.name == "reference"
            values, indices = topk_target.run(Case("dml:5.0", "TOP_K1", "int32", (3,), 0, 1), np.array([1, 3, 2], np.int32))
            assert values.tolist() == [3] and indices.tolist() == [1]
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--topk-target", "reference")
    result.assert_outcomes(passed=1)


def test_a_run_that_does_not_use_it_is_untouched(pytester):
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    help_text = pytester.runpytest_subprocess("--help").stdout.str()
    for option in ("--topk-target", "--topk-spec", "--topk-report-dir"):
        assert option in help_text, f"pytest --help lacks {option}"


@slow
def test_strict_doc_option_applies_the_literal_k_bound(pytester):
    # The invalid group draws among three rules here, K = n among them: 150 examples draw it
    # whatever the seed (15, at the tiny profile, drew it or not as source edits moved the
    # derandomized seed).
    args = ("--topk-target", f"{PLANTED}:CORRECT", "--topk-spec", "dml:5.0")
    run_suite(pytester, *args, profile="wide").assert_outcomes(passed=6)
    strict = run_suite(pytester, *args, "--topk-strict-doc", profile="wide")
    strict.assert_outcomes(passed=5, failed=1)
    strict.stdout.fnmatch_lines(["*dml.k.max_strict*"])


@slow
def test_long_axes_reach_the_suite(pytester):
    """--topk-max-axis-size: the suite draws axes longer than the default room, where a bug
    that only long axes show is found."""
    bug = os.path.join(REPO, "tests", "plugins", "long_axis_bug.py")
    args = ("--topk-target", f"{bug}:reversed_above_8192", "-k", "test_valid")
    run_suite(pytester, *args, profile="wide").assert_outcomes(passed=1, deselected=5)
    long = run_suite(pytester, *args, "--topk-max-axis-size", str(1 << 17), profile="wide")
    long.assert_outcomes(failed=1, deselected=5)
    long.stdout.fnmatch_lines(["*out.order*"])


def test_a_group_that_judged_nothing_fails(pytester):
    broken = os.path.join(REPO, "tests", "plugins", "broken_adapters.py")
    result = run_suite(pytester, "--topk-target", f"{broken}:NothingSupported")
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines(["*judged too little: 0 of its*this target supports nothing*"])


def test_the_ci_profile_is_a_budget_per_run_as_in_the_command_line(pytester, tmp_path):
    import xml.etree.ElementTree as ElementTree

    from topkspec.fuzz import SETTINGS, split_budget

    junit = tmp_path / "junit.xml"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--pyargs", "topkspec.suite",
                                           "--hypothesis-profile", "ci", "--topk-target", "reference",
                                           f"--junitxml={junit}")
    result.assert_outcomes(passed=6)
    budgets = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        group = case.get("name").split("[")[1].rstrip("]")
        props = {p.get("name"): int(p.get("value")) for p in case.iter("property")}
        budgets[group] = props["topkspec_budget"]
        assert props["topkspec_examples"] >= props["topkspec_budget"], f"{group}: {props}"
    expected = split_budget(SETTINGS["ci"]["max_examples"], ["valid", "nan", "metamorphic", "invalid", "deterministic",
                                                             "self"])
    assert budgets == expected, f"per-group budgets: expected {expected}, got {budgets}"
    assert sum(budgets.values()) == 200, f"a ci run is 200 examples, got {sum(budgets.values())}"


@slow
def test_the_plugin_reports_each_failure_of_a_group_and_prints_the_verdicts(pytester):
    # one_based_indices breaks several rules in the valid group, each on examples of its own
    # (an index past the end, a value gathered from the next place): every one is shown, and
    # the verdicts at the end say what the fuzz summary says.
    result = run_suite(pytester, "--topk-target", f"{PLANTED}:one_based_indices", "-k", "valid and not invalid")
    text = result.stdout.str()
    reported = re.findall(r"^\[wrong result\] (\S+) \((?:documents|our reading)\):", text, re.M)
    assert {"out.values.gather", "out.indices.range_distinct"} <= set(reported), text[-4000:]
    result.stdout.fnmatch_lines(["*topkspec verdicts: one_based_indices at dml:5.0*",
                                 "out.shape*documents*holds (*"])
    for rule in reported:
        assert re.search(rf"^{re.escape(rule)} +\S.*broken[^\n]*\(wrong result\)", text, re.M), rule


def test_a_known_deviation_passes_in_the_plugin_and_is_named(pytester, tmp_path):
    known = tmp_path / "known.toml"
    known.write_text('[[known]]\nrule = "out.values.select"\nreason = "planted: direction ignored"\n\n'
                     '[[known]]\nrule = "out.order"\nreason = "planted: direction ignored"\n\n'
                     '[[known]]\nrule = "out.nan.unspecified"\nreason = "planted: direction ignored"\n')
    result = run_suite(pytester, "--topk-target", f"{PLANTED}:ignores_direction", f"--topk-known={known}",
                       "-k", "valid and not invalid")
    result.assert_outcomes(passed=1, deselected=5)
    result.stdout.fnmatch_lines(["out.values.select*known (*): planted: direction ignored*"])


@slow
def test_a_failure_no_fresh_process_reproduces_passes_and_says_why(pytester, tmp_path, monkeypatch):
    monkeypatch.setenv("TOPKSPEC_TEST_FIRST_PROCESS", str(tmp_path / "first"))
    stateful = os.path.join(REPO, "tests", "stateful_targets.py")
    result = run_suite(pytester, "--topk-target", f"{stateful}:fails_in_first_process", "--topk-spec", "onnx:24",
                       "--topk-report-dir", str(tmp_path / "reports"), "-rA")
    outcomes = result.parseoutcomes()
    assert not outcomes.get("failed") and outcomes.get("passed"), f"outcomes: {outcomes}\n{result.stdout.str()}"
    result.stdout.fnmatch_lines(["*not filed: [[]wrong result[]] out.*failed in the run but in no fresh process*"])
    assert all(p.name.startswith("not-reproduced-") for p in (tmp_path / "reports").iterdir())


@slow
def test_what_was_found_names_a_deviation_known_upstream_as_the_command_line_does(pytester):
    pytest.importorskip("onnxruntime")
    # the valid group meets a value type ONNX Runtime's CPU provider has no kernel for (known upstream)
    result = run_suite(pytester, "--topk-target", "onnxruntime", "-k", "valid", profile="wide")
    # (upstream's link, or the finding of topkspec's register that it is, whichever type came first)
    result.stdout.re_match_lines([r"\[rejects a valid descriptor\] out\.valid_accepted \(our reading\): TopK .*"
                                  r"\((known upstream: https://|known to topkspec: findings/)\S+\)$"])

# A target of the user's own that notes each input it is given, in the file TOPKSPEC_TEST_LOG names.
LOGGING_TARGET = """
import json
import os
from topkspec.spec.reference import reference_topk

def topk(x, *, axis, k, largest):
    with open(os.environ["TOPKSPEC_TEST_LOG"], "a") as log:
        log.write(f"{x.dtype}{list(x.shape)} {axis} {k} {largest} {hash(x.tobytes())}\\n")
    return reference_topk(x, axis=axis, k=k, largest=largest)
"""


def _logged_calls(pytester, monkeypatch, tmp_path, name, *args):
    log = tmp_path / f"{name}.log"
    monkeypatch.setenv("TOPKSPEC_TEST_LOG", str(log))
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # the log names inputs by hash
    pytester.makepyfile(logging_target=LOGGING_TARGET)
    junit = tmp_path / f"{name}.xml"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "--pyargs", "topkspec.suite",
                                           "--hypothesis-profile", "ci", "--topk-target",
                                           f"{pytester.path / 'logging_target.py'}:topk", "--topk-spec", "onnx:11",
                                           "--topk-max-examples", "120", f"--junitxml={junit}", *args)
    return result, log.read_text().splitlines(), junit


def test_shards_split_each_groups_budget_and_search_apart(pytester, monkeypatch, tmp_path):
    import xml.etree.ElementTree as ElementTree

    result, calls, junit = _logged_calls(pytester, monkeypatch, tmp_path, "two", "--topk-shards", "2", "-k",
                                         "valid and not invalid")
    result.assert_outcomes(passed=2)
    names = sorted(case.get("name") for case in ElementTree.parse(junit).iter("testcase"))
    assert names == ["test_valid[shard0-valid]", "test_valid[shard1-valid]"], names
    _, whole, _ = _logged_calls(pytester, monkeypatch, tmp_path, "one", "-k", "valid and not invalid")
    # each shard asks for its half of the group's share, and draws cases of its own: shards that
    # searched alike would give each input twice as often as one test does
    assert 0.6 * len(whole) < len(calls) < 1.6 * len(whole), f"two shards made {len(calls)} calls, one {len(whole)}"
    distinct, distinct_whole = len(set(calls)) / len(calls), len(set(whole)) / len(whole)
    assert distinct > 0.8 * distinct_whole, f"distinct inputs: {distinct:.2f} of the calls in two shards, " \
                                            f"{distinct_whole:.2f} in one test"


def test_a_seed_repeats_sharded_searches_and_another_seed_changes_them(pytester, monkeypatch, tmp_path):
    runs = {}
    for name, seed in (("first", "3"), ("again", "3"), ("other", "4")):
        result, runs[name], _ = _logged_calls(pytester, monkeypatch, tmp_path, name, "--topk-shards", "2",
                                              "--topk-seed", seed, "-k", "valid and not invalid")
        result.assert_outcomes(passed=2)
    assert runs["first"] == runs["again"], "--topk-seed 3 drew other cases the second time"
    assert runs["first"] != runs["other"], "--topk-seed 4 drew the cases of --topk-seed 3"


def _examples_run(pytester, name) -> int:
    """The examples Hypothesis ran of the valid group's test, from its observability lines."""
    lines = (line for path in (pytester.path / ".hypothesis" / "observed").glob("*testcases.jsonl")
             for line in path.read_text().splitlines())
    return sum(1 for line in lines if json.loads(line).get("property", "").endswith("test_valid[valid]"))


def test_a_test_that_checked_its_share_ends_its_search(pytester, monkeypatch, tmp_path):
    # Asked for enough lists to hold its share (it cannot ask again, as a fuzz run's next search
    # does), a test that checked its share ends there instead of drawing lists it would not check;
    # with --hypothesis-show-statistics it draws them all, for the statistics to count
    monkeypatch.setenv("HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY", "1")  # Hypothesis's own record of each example
    ran, calls = {}, {}
    for name, args in (("ends", ()), ("draws_all", ("--hypothesis-show-statistics",))):
        result, calls[name], _ = _logged_calls(pytester, monkeypatch, tmp_path, name, "-k", "valid and not invalid",
                                               *args)
        result.assert_outcomes(passed=1)
        ran[name] = _examples_run(pytester, name)
        shutil.rmtree(pytester.path / ".hypothesis" / "observed")
    assert abs(len(calls["ends"]) - len(calls["draws_all"])) <= 16, {k: len(v) for k, v in calls.items()}
    assert 0 < ran["ends"] < 0.8 * ran["draws_all"], ran
