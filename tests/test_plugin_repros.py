"""Every documented form of a user's own target gets reports whose repro.py, run in a fresh
process, exits 1 with the wrong answer printed while the planted bug stands and 0 once it is
fixed: a plain function by file path or module path, a CallableTarget, a Target subclass, each
with and without --contract FILE, a validator (a function or a ValidatorTarget), a Target whose
bug needs an earlier call on the same instance, and a crash on an invalid descriptor.

The runtime is tests/plugins/planted_forms.py, copied into a project folder: its bugs stand
while TOPKSPEC_TEST_FIXED is unset, and are gone when it is set."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from slow import slow

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONTRACT = "planted_forms.toml"


def _env(*paths, **more) -> dict:
    """A fresh environment: no TOPKSPEC_TEST_FIXED, PYTHONPATH the folders given."""
    env = {key: value for key, value in os.environ.items() if key not in ("TOPKSPEC_TEST_FIXED", "PYTHONPATH")}
    return dict(env, PYTHONPATH=os.pathsep.join(str(p) for p in paths), **more)


_DONE: dict = {}  # (target, options, examples) -> the project folder of its campaign, run once


def campaign(tmp_path, target, *options, examples=40) -> list[Path]:
    """Fuzz `target` from a project folder holding planted_forms.py; its report folders, in a copy
    of that folder under tmp_path (a campaign several tests read is run once)."""
    key = (target, options, examples)
    if key not in _DONE:
        _DONE[key] = _campaign(tmp_path / "campaign", target, *options, examples=examples)
    project = tmp_path / "project"
    if _DONE[key] != project:
        shutil.copytree(_DONE[key], project)
    return sorted((project / "reports").iterdir())


def _campaign(folder, target, *options, examples) -> Path:
    project = folder / "project"
    project.mkdir(parents=True)
    for name in ("planted_forms.py", CONTRACT):
        shutil.copy(HERE / "plugins" / name, project / name)
    done = subprocess.run([sys.executable, "-m", "topkspec", "fuzz", "--target", target, "--seed", "0",
                           "--max-examples", str(examples), "--settings", "ci", "--report-dir", "reports", "--quiet",
                           *options], cwd=project, env=_env(ROOT, project), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 1, f"{target}: expected exit 1 (a bug found)\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    assert list((project / "reports").iterdir()), f"{target}: no report written"
    return project


def repro(report: Path, fixed: bool) -> subprocess.CompletedProcess:
    """repro.py in a fresh process from its own folder, topkspec importable, the project not."""
    env = _env(ROOT, **({"TOPKSPEC_TEST_FIXED": "1"} if fixed else {}))
    return subprocess.run([sys.executable, "repro.py"], cwd=report, env=env, capture_output=True, text=True,
                          timeout=300)


def line_limit(source: str) -> int:
    """The length docs/fuzzing.md promises a repro.py: 60 lines, 75 for a user's own target or
    for a crash or hang, 90 for both, plus 12 and 2 per earlier call."""
    own = "_cannot_run(" in source
    crash = "subprocess" in source
    earlier = source.count("X_EARLIER_") // 2  # each defined, then listed
    return 60 + 15 * own + 15 * crash + (12 + 2 * earlier if earlier else 0)


def replays(report: Path) -> str:
    """Exit 1 with the wrong answer printed against the bug, 0 against the fix; the source."""
    bug = repro(report, fixed=False)
    assert bug.returncode == 1, f"{report.name}: expected exit 1 while the bug stands, got {bug.returncode}\n" \
                                f"{bug.stdout}{bug.stderr}"
    said = bug.stdout + bug.stderr
    assert ("actual" in said or "the process died" in said) and "Traceback" not in said, f"{report.name}: {said}"
    fix = repro(report, fixed=True)
    assert fix.returncode == 0, f"{report.name}: expected exit 0 once fixed, got {fix.returncode}\n" \
                                f"{fix.stdout}{fix.stderr}"
    assert "fixed" in fix.stdout, f"{report.name}: {fix.stdout}"
    source = (report / "repro.py").read_text()
    lines = len(source.splitlines())
    assert lines < line_limit(source), f"{report.name}: repro.py has {lines} lines, over {line_limit(source)}"
    return source


# (the target as the user names it, with --contract FILE, the title's runtime, its version)
FORMS = [
    ("./planted_forms.py:topk", False, "topk (planted_forms.py)", None),
    ("planted_forms:topk", False, "planted_forms:topk", None),
    ("./planted_forms.py:target", False, "planted-fn", "2.1-planted"),
    ("./planted_forms.py:PlantedTarget", False, "planted-class", "1.0-planted"),
    ("./planted_forms.py:values_topk", True, "values_topk (planted_forms.py)", None),
    ("planted_forms:values_topk", True, "planted_forms:values_topk", None),
    ("./planted_forms.py:values_wrong_end", True, "values_wrong_end (planted_forms.py)", None),
    ("./planted_forms.py:values_target", True, "planted-values", "2.1-planted"),
    ("./planted_forms.py:ValuesTarget", True, "planted-class-values", "1.0-planted"),
    ("./planted_forms.py:validate", False, "validate (planted_forms.py)", None),
    ("./planted_forms.py:validator", False, "planted-validator", None),
    ("./planted_forms.py:CheckingTarget", False, "planted-checking", "1.0-planted"),
]


@pytest.mark.parametrize("target, contract, runtime, version", FORMS, ids=[f"{t}{'+contract' if c else ''}"
                                                                           for t, c, _, _ in FORMS])
@slow
def test_each_form_of_target_gets_a_repro_that_fails_until_fixed(tmp_path, target, contract, runtime, version):
    reports = campaign(tmp_path, target, *(["--contract", CONTRACT] if contract else []))
    for report in reports:
        source = replays(report)
        assert ("get_target(" in source) == ("Target" in target), \
            f"{report.name}: only a Target subclass runs through topkspec's adapter"
        text = (report / "report.md").read_text()
        assert text.splitlines()[0].startswith(f"# {runtime} "), f"{report.name}: title {text.splitlines()[0]!r}"
        if version:
            assert version in text, f"{report.name}: the runtime's version {version} is not in report.md"
        if contract and "k-max" in report.name:  # a promise of the file: its sentence is quoted
            assert "planted values_topk" in text, f"{report.name}: the contract file's source is not quoted"


@slow
def test_a_state_dependent_repro_keeps_one_target_for_all_its_calls(tmp_path):
    """The bug needs an earlier float16 call on the same instance: a repro that made a target
    per call would pass."""
    reports = campaign(tmp_path, "./planted_forms.py:PoisonedTarget", "--spec", "onnx:24", examples=100)
    for report in reports:
        source = replays(report)
        assert "earlier_calls()" in source and source.count("get_target(") == 1, source
        alone = report / "alone.py"  # without its earlier calls, the case passes
        alone.write_text(source.replace("\nearlier_calls()\n", "\n"))
        done = subprocess.run([sys.executable, "alone.py"], cwd=report, env=_env(ROOT), capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr


@slow
def test_a_crash_on_an_invalid_descriptor_names_the_rule_and_is_fixed_by_a_refusal(tmp_path):
    reports = campaign(tmp_path, "./planted_forms.py:aborts_on_bad_axis")
    for report in reports:
        text = (report / "report.md").read_text()
        title = text.splitlines()[0]
        assert "crashes the process on axis" in title and "axis.range" in title, title
        assert "**Expected** (the spec): a refusal" in text, text
        source = replays(report)
        assert "DimensionCount" in source.split('"""')[1], "the repro quotes the axis rule"


@slow
def test_the_pytest_plugin_holds_a_plain_function_to_its_contract_file(tmp_path):
    """--topk-contract reaches a plain function returning values only, as --contract does: no
    adapter error, and the report of the clamped K replays until fixed."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("planted_forms.py", CONTRACT):
        shutil.copy(HERE / "plugins" / name, project / name)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
                           "--pyargs", "topkspec.suite", "--hypothesis-profile", "ci",
                           "--topk-target", "./planted_forms.py:values_topk", "--topk-contract", CONTRACT,
                           "--topk-report-dir", "reports", "--topk-max-examples", "40"],
                          cwd=project, env=_env(ROOT), capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and "adapter error" not in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    reports = sorted((project / "reports").iterdir())
    assert [r for r in reports if "k-max" in r.name], [r.name for r in reports]
    for report in reports:
        replays(report)


@pytest.mark.parametrize("target, breaks, said", [
    # the function no longer takes what the program passes: the program's own call breaks
    ("./planted_forms.py:target", ("def topk(x, *, axis, k, largest):", "def topk(x, *, axis, k):"),
     "cannot run: the call broke: TypeError"),
    # the module fails to import
    ("./planted_forms.py:target", ("import numpy as np\n", "import numpy as np\nraise ImportError('gone')\n"),
     "cannot run: importing planted_forms.py failed"),
    # a Target subclass whose own code breaks (not a refusal): the adapter broke
    ("./planted_forms.py:PlantedTarget", ("case.lowered_axis", "case.no_such_field"),
     "cannot run: the adapter broke: AttributeError"),
])
def test_a_repro_whose_own_call_breaks_exits_2_not_as_the_runtimes_answer(tmp_path, target, breaks, said):
    reports = campaign(tmp_path, target)
    module = tmp_path / "project" / "planted_forms.py"
    text = module.read_text()
    assert breaks[0] in text
    module.write_text(text.replace(breaks[0], breaks[1]))
    for report in reports:
        for fixed in (False, True):
            done = repro(report, fixed=fixed)
            assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, \
                f"{report.name}: expected exit 2 with {said!r}, got {done.returncode}\n{done.stdout}{done.stderr}"


def test_a_plain_function_is_judged_as_a_set_where_a_case_asks_sorted_0():
    """docs/targets.md: a plain function is not told `sorted`; at sorted=0 any order passes. One
    that returns its K in reverse order fails sorted cases only, and unsorted ones were judged."""
    from topkspec.fuzz import RunConfig, run_fuzz
    from topkspec.targets.base import CallableTarget

    import numpy as np

    sys.path.insert(0, str(HERE / "plugins"))
    import planted_forms

    def reversed_order(x, *, axis, k, largest):
        values, indices = planted_forms._correct(x, axis, k, largest)
        return np.flip(values, axis), np.flip(indices, axis)

    result = run_fuzz(RunConfig(target=CallableTarget(reversed_order, name="reversed"), profile="onnx:11",
                                max_examples=150, seed=1, isolate=False, groups=("valid",), shrink=False,
                                confirm=False))
    assert result.failures, "the reversed order is found"
    assert all(f.case.sorted for f in result.failures), [f.case for f in result.failures]
    assert result.checks["unsorted_set"] > 0, f"no sorted=0 case judged: {dict(result.checks)}"
