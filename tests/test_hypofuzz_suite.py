"""The suite's HypoFuzz form (topkspec.hypofuzz_suite) and `topkspec fuzz --engine hypofuzz`.

HypoFuzz itself needs an environment of its own (the hypofuzz extra pins Hypothesis below
6.157.1), so a real HypoFuzz campaign is run by .ci/hypofuzz; here the form runs under plain
pytest, and the front end's refusals and its reading of a campaign's output are checked."""
import inspect
import os
import subprocess
import sys

import pytest
from slow import slow

from topkspec import hypofuzz_suite
from topkspec.cli import build_parser, main
from topkspec.cli.hypofuzz_engine import _message, command_line, environment
from topkspec.fuzz.suite_options import SuiteOptions
from topkspec.suite import GROUPS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_one_test_per_group_each_taking_only_its_data():
    """HypoFuzz 25.11.1 cannot give a test a fixture (or a parametrize argument, a fixture too)
    after coming back to it, so each test's only argument is the data Hypothesis draws."""
    for group in GROUPS:
        test = getattr(hypofuzz_suite, f"test_{group}")
        assert list(inspect.signature(test.hypothesis.inner_test).parameters) == ["data"]


def test_options_from_the_environment():
    options = SuiteOptions.from_environment({"TOPKSPEC_TARGET": "torch", "TOPKSPEC_SPEC": "onnx:11",
                                           "TOPKSPEC_TIMEOUT": "2.5", "TOPKSPEC_KNOWN": "",
                                           "TOPKSPEC_STRICT_DOC": "1", "TOPKSPEC_MAX_AXIS_SIZE": "70000"})
    assert options == SuiteOptions(target="torch", spec="onnx:11", timeout=2.5, known="", strict_doc=True,
                                   max_axis_size=70000)
    assert SuiteOptions.from_environment({}) == SuiteOptions()
    with pytest.raises(ValueError, match="TOPKSPEC_MAX_ELEMENTS must be a number"):
        SuiteOptions.from_environment({"TOPKSPEC_MAX_ELEMENTS": "many"})
    with pytest.raises(ValueError, match="TOPKSPEC_DOCUMENTS_ONLY must be 0 or 1"):
        SuiteOptions.from_environment({"TOPKSPEC_DOCUMENTS_ONLY": "yes"})


def test_the_environment_gives_the_options_back():
    every = SuiteOptions(target="torch", spec="onnx:11", timeout=2.5, known="", strict_doc=True,
                         documents_only=True, max_axis_size=70000, max_elements=1 << 20, contract="c.toml",
                         nan_order="totalorder")
    for options in (every, SuiteOptions(), SuiteOptions(known="k.toml")):
        assert SuiteOptions.from_environment(options.environment()) == options


def test_the_front_end_hands_every_option_to_the_environment():
    args = build_parser().parse_args(
        ["fuzz", "--engine", "hypofuzz", "--target", "reference", "--spec", "dml:3.1", "--known",
         "--documents-only", "--max-elements", "9000", "--nan-order", "smallest", "--contract", "/c.toml"])
    env = environment(args)
    assert SuiteOptions.from_environment(env) == SuiteOptions(
        target="reference", spec="dml:3.1", timeout=args.timeout, known="", documents_only=True,
        max_elements=9000, contract="/c.toml", nan_order="smallest")
    # the database as one word: pytest would take an existing folder for a path to collect
    assert "--topk-database=db" in command_line(2, "db")


def _run_form(target: str, group: str):
    env = {**os.environ, "TOPKSPEC_TARGET": target, "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
                           "topkspec.hypofuzz_suite", "-k", f"test_{group}", "--topk-max-examples", "100",
                           "--hypothesis-profile", "topkspec-ci"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@slow
def test_the_form_finds_a_planted_bug_and_holds_on_the_reference():
    found = _run_form("tests/planted_bugs.py:one_based_indices", "valid")
    assert found.returncode == 1, found.stdout[-2000:]
    assert "out.indices" in found.stdout
    held = _run_form("reference", "valid")
    assert held.returncode == 0, held.stdout[-2000:]


def test_the_form_checks_every_example_it_is_given():
    # HypoFuzz comes back to a test for as long as it runs: the form has no share of a budget
    # to stop checking at, as the pytest suite's tests have
    script = ("from hypothesis import settings\n"  # the session starts in the first example: no deadline
              "settings.register_profile('slow-start', deadline=None, database=None)\n"
              "settings.load_profile('slow-start')\n"
              "import topkspec.hypofuzz_suite as form\n"
              "for _ in range(8):\n"
              "    form.test_valid()\n"
              "session = form.campaign_session()\n"
              "print(session.result.examples['valid'], session.shares['valid'])\n")
    env = {**os.environ, "TOPKSPEC_TARGET": "reference", "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    checked, share = map(int, done.stdout.split())
    assert checked > 4 * share, f"8 runs of the test checked {checked} cases: it stopped at the share, {share}"


@pytest.mark.parametrize("argv, message", [
    (["--engine", "hypofuzz", "--max-examples", "5"], "does not take --max-examples"),
    (["--engine", "hypofuzz", "--isolate", "never"], "leave --isolate out"),
    (["--seconds", "5"], "--seconds and --exitfirst are for --engine hypofuzz"),
])
def test_bad_usage_is_one_line_and_exit_2(argv, message, capsys):
    assert main(["fuzz", "--target", "reference", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_without_hypofuzz_installed_it_says_how_to_get_it(capsys):
    import importlib.util

    if importlib.util.find_spec("hypofuzz") is not None:
        pytest.skip("HypoFuzz is installed here")
    assert main(["fuzz", "--engine", "hypofuzz", "--target", "reference"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'topkspec[hypofuzz]'" in err and len(err.strip().splitlines()) == 1


def test_a_failure_s_message_is_the_rule_s_sentence():
    traceback = ("    raise found_type(...)\nE       topkspec.fuzz.context.Violation_x: out.values.gather: "
                 "position 1 [K=1, axis=0, largest, sorted]\n\ntopkspec/fuzz/context.py:246: Violation_x\n")
    assert _message(traceback) == "out.values.gather: position 1 [K=1, axis=0, largest, sorted]"
    assert _message("out.values.gather: position 1") == "out.values.gather: position 1"  # a rule id stays
    assert _message("ValueError: no") == "ValueError: no"
