"""Runs read the contract: a point the runtime leaves open fails no target, a promised point is
checked and its report quotes the runtime's own sentence; every rule a run could break gets a verdict."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "plugins"))
import values_only  # noqa: E402

from topkspec.fuzz import run_fuzz  # noqa: E402
from topkspec.fuzz.config import RunConfig  # noqa: E402
from topkspec.fuzz.verdicts import rule_verdicts  # noqa: E402
from slow import slow


def _verdicts(result) -> dict:
    return {v.rule: v for v in rule_verdicts(result)}


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@slow
def test_a_correct_values_only_largest_only_unsorted_function_runs_clean(seed):
    result = run_fuzz(RunConfig(target=values_only.good, max_examples=250, seed=seed, settings="ci", isolate=False))
    assert result.failures == []
    verdicts = _verdicts(result)
    assert verdicts["out.order"].kind == "not promised"
    assert verdicts["out.indices.range_distinct"].kind == "not promised"
    assert verdicts["out.values.select"].kind == "holds"
    assert verdicts["dml.k.max"].kind == "holds"  # promised: refused, and it refuses
    assert "dml.axis.range" not in verdicts and "dml.k.positive" not in verdicts  # left open
    assert result.unsupported["its contract offers no smallest K"] > 0


@slow
def test_a_broken_promise_is_reported_quoting_the_declared_source(tmp_path):
    result = run_fuzz(RunConfig(target=values_only.clamping, max_examples=250, seed=1, settings="ci", isolate=False,
                                report_dir=str(tmp_path)))
    assert [f.rule for f in result.failures] == ["dml.k.max"]
    report = open(os.path.join(result.failures[0].report_dir, "report.md")).read()
    assert "> Raises ValueError when k is larger than the axis." in report
    assert "(https://example.org/partition-topk), K above the axis size: refused." in report
    assert report.splitlines()[0].endswith("— the documents decide it")


def test_the_same_function_without_its_contract_is_held_to_directml():
    from topkspec.targets.base import CallableTarget

    plain = CallableTarget(lambda x, *, axis, k, largest: (values_only.partition_topk(x, axis=axis, k=k,
                                                                                      largest=largest), None),
                           name="undeclared")
    result = run_fuzz(RunConfig(target=plain, max_examples=60, seed=1, settings="ci", isolate=False))
    assert result.failures  # no indices, unsorted, largest only: DirectML's text is broken


def test_descriptor_rules_that_held_get_a_verdict():
    result = run_fuzz(RunConfig(target="reference", profile="onnx:11", max_examples=150, seed=2, settings="ci", isolate=False))
    verdicts = _verdicts(result)
    for rule in ("onnx.axis.range", "onnx.k.positive", "onnx.k.max"):
        assert verdicts[rule].kind == "holds", verdicts[rule].text()


def _nan_failures(fn, order, seed=3):
    from topkspec.targets.base import CallableTarget

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "plugins"))
    result = run_fuzz(RunConfig(target=CallableTarget(fn, name=fn.__name__), max_examples=300, seed=seed, settings="ci",
                                isolate=False, groups=("nan",), nan_order=order))
    return [f.rule for f in result.failures], result


def test_nan_order_largest_catches_nan_last_and_the_default_does_not():
    import nan_placement

    assert _nan_failures(nan_placement.nan_last, "largest")[0] == ["out.nan.order"]
    rules, result = _nan_failures(nan_placement.nan_last, None)
    assert rules == [] and _verdicts(result)["out.nan.order"].kind == "not promised"
    assert _nan_failures(nan_placement.nan_first, "largest")[0] == []


@slow
def test_nan_order_totalorder_catches_negative_nan_first_and_the_default_does_not():
    import nan_placement

    assert _nan_failures(nan_placement.nan_first, "totalorder")[0] == ["out.nan.order"]
    assert _nan_failures(nan_placement.nan_first, None)[0] == []
    assert _nan_failures(nan_placement.total_order, "totalorder")[0] == []


def _page_block(after: str, lang: str) -> str:
    """The first `lang` block of docs/targets.md after the text `after`."""
    text = open(os.path.join(os.path.dirname(__file__), "..", "docs", "targets.md")).read()
    fence = text.index(f"```{lang}\n", text.index(after)) + len(f"```{lang}\n")
    return text[fence:text.index("```", fence)]


@slow
def test_the_docs_contract_file_runs_as_the_page_shows(tmp_path):
    """docs/targets.md: my_framework.py run with --contract myfw.toml, as the page shows (exit 0),
    its CallableTarget and its plain function alike; with K = 0 let through, the report on the
    promise declared as an interpretation says our reading decides it, and why."""
    import subprocess

    source = _page_block("### A framework with an API of its own", "python")
    (tmp_path / "my_framework.py").write_text(source)
    (tmp_path / "myfw.toml").write_text(_page_block("The same contract as a file", "toml"))
    commands = _page_block("k_above_axis = { value", "sh").strip().splitlines()
    assert [c.split()[3] for c in commands] == ["./my_framework.py:target", "./my_framework.py:topk"], commands

    def fuzz(command, *more):
        assert command.startswith("topkspec fuzz ") and "--contract myfw.toml" in command, command
        return subprocess.run([sys.executable, "-m", "topkspec", *command.split()[1:], *more], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)

    for command in commands:
        done = fuzz(command)
        assert done.returncode == 0, command + "\n" + done.stdout[-3000:] + done.stderr[-3000:]
        assert "not promised" in done.stdout
    head = "def topk(x, *, axis, k, largest):\n"
    assert head in source
    (tmp_path / "my_framework.py").write_text(source.replace(head, head + "    if k == 0:  # let through\n"
                                                             "        return np.take(x, [], axis=axis)\n"))
    done = fuzz(commands[1], "--report-dir", "reports")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    reports = [p for p in (tmp_path / "reports").iterdir() if "k-positive" in p.name]
    assert reports, f"no report on K = 0: {sorted(p.name for p in (tmp_path / 'reports').iterdir())}"
    report = (reports[0] / "report.md").read_text()
    assert report.splitlines()[0].endswith("— our reading decides it"), report.splitlines()[0]
    assert "we read it as refusing K = 0" in report, report
    repro = (reports[0] / "repro.py").read_text()
    assert "we read it as refusing K = 0" in repro, repro


@slow
def test_workers_and_the_pytest_plugin_hold_the_target_to_the_run_contract(tmp_path):
    """--workers runs the pytest plugin on xdist: --contract and --nan-order reach every worker
    (--topk-contract, --topk-nan-order), as they reach a run in one process."""
    import subprocess

    pytest.importorskip("xdist")
    (tmp_path / "nan-largest.toml").write_text('name = "onnx-nan-largest"\nimplements = "onnx"\n'
                                                'profiles = ["onnx:24"]\n[promises]\nnan = "largest"\n')
    target = os.path.join(os.path.dirname(__file__), "plugins", "nan_placement.py") + ":nan_last"

    def fuzz(*args):
        return subprocess.run([sys.executable, "-m", "topkspec", "fuzz", "--workers", "2", "--seed", "3",
                               "--max-examples", "300", "--target", target, *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)

    for args in (("--contract", "nan-largest.toml"), ("--nan-order", "largest")):
        done = fuzz(*args)
        assert done.returncode == 1 and "out.nan.order" in done.stdout, (
            f"{args}: exit {done.returncode}\n" + done.stdout[-3000:] + done.stderr[-3000:])
    done = fuzz()  # its own contract leaves NaN order open
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
