"""`--target onnx-backend:MODULE`: a runtime behind ONNX's Backend API, driven with no adapter code.
ONNX Runtime's own backend module gives the verdicts the built-in onnxruntime target gives; a
planted Backend's bug is reported, and its repro.py, in the Backend API, exits 1 in a fresh
process while the bug stands and 0 once it is gone, keeping one backend for earlier calls; a
module that is no backend stops the command with one line and exit 2."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from slow import slow

from topkspec.fuzz import RunConfig, run_fuzz
from topkspec.spec import Case

pytest.importorskip("onnx")
HERE = os.path.dirname(os.path.abspath(__file__))
PLANTED = os.path.join(HERE, "planted_backend.py")
BUG = "PLANTED_BACKEND_BUG"


def verdicts(result) -> tuple:
    """What a run found: its failures (rule, class, value type) and its examples per rule held."""
    return sorted((f.rule, f.failure_class, f.case.dtype) for f in result.failures), dict(result.held)


def repro(folder: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """repro.py run in a fresh process, with `env` added (the planted bug's switch) and without
    the variable when `env` leaves it out; held to being standalone and under 75 lines."""
    path = os.path.join(folder, "repro.py")
    source = open(path).read()
    assert not re.search(r"^\s*(import|from) topkspec", source, re.MULTILINE), f"{path} imports topkspec"
    environment = {k: v for k, v in os.environ.items() if k not in (BUG, "PYTHONPATH")}
    return subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120,
                          env={**environment, **(env or {})})


def page_command() -> dict:
    """The RunConfig of docs/targets.md's `topkspec fuzz --target onnx-backend:onnxruntime.backend`
    command: its profile, budget and seed."""
    from docs_run import BLOCKS

    (command,) = [c for b in BLOCKS if b.page == "docs/targets.md" for c in b.commands()
                  if "--target onnx-backend:onnxruntime.backend" in c]
    options = dict(re.findall(r"--(spec|max-examples|seed) (\S+)", command))
    return dict(profile=options["spec"], max_examples=int(options["max-examples"]), seed=int(options["seed"]))


@slow
def test_onnxruntime_backend_gives_the_verdicts_of_the_builtin_onnxruntime_target():
    """docs/targets.md's command: at its seed, budget and profile, ONNX Runtime's backend module finds
    what the built-in onnxruntime target finds, each in onnxruntime's known list, with the same
    examples held per rule. The search's verdicts are compared (replaying each failure in a fresh
    process is tested below)."""
    pytest.importorskip("onnxruntime")
    from topkspec.known import load_known, shipped_path
    from topkspec.targets.registry import get_target

    target = get_target("onnx-backend:onnxruntime.backend")
    assert target.default_profile == "onnx:24", f"default profile: expected onnx:24, got {target.default_profile}"
    page = " ".join(open(os.path.join(HERE, "..", "docs", "targets.md")).read().split())
    said = re.search(r"\(`(onnxruntime [\d.]+ \(ONNX backend onnxruntime\.backend on CPU\))`\)", page).group(1)
    assert re.sub(r"[\d.]+", "N", target.version()) == re.sub(r"[\d.]+", "N", said), \
        f"version: docs/targets.md says {said!r}, the target {target.version()!r}"
    assert target.contract.implements == "onnx", f"contract: {target.contract}"
    config = dict(page_command(), settings="ci", confirm=False)
    builtin = run_fuzz(RunConfig(target="onnxruntime", **config))
    backend = run_fuzz(RunConfig(target="onnx-backend:onnxruntime.backend", **config))
    found, held = verdicts(backend)
    assert (found, held) == verdicts(builtin), f"onnx-backend:onnxruntime.backend {verdicts(backend)}\n" \
                                               f"onnxruntime {verdicts(builtin)}"
    expected = [("onnx.k.positive", "accepts an invalid one", "float32")] + [
        ("out.valid_accepted", "rejects a valid descriptor", dtype) for dtype in ("bfloat16", "uint16", "uint32", "uint64")]
    assert found == expected, f"expected ONNX Runtime's known deviations {expected}, found {found}"
    shipped = load_known(None, "onnxruntime")  # `--known FILE` with topkspec's list for onnxruntime declares them
    undeclared = [f.rule for f in backend.failures if not shipped.match(
        f.rule, f.failure_class, f.case.dtype, backend.profile, backend.version, f.case.k)]
    assert not undeclared, f"not in onnxruntime's known list ({shipped_path('onnxruntime')}): {undeclared}"


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """The planted backend copied beside the reports (so its repro can lose it); returns its path."""
    path = tmp_path / "planted_backend.py"
    shutil.copy(PLANTED, path)
    monkeypatch.delenv(BUG, raising=False)
    return str(path)


@slow
def test_a_planted_backend_bug_is_reported_and_its_repro_in_the_backend_api_exits_1_then_0(planted, tmp_path,
                                                                                           monkeypatch):
    clean = run_fuzz(RunConfig(target=f"onnx-backend:{planted}", max_examples=100, seed=0, settings="ci"))
    assert not clean.failures, f"the planted backend is right without its bug: {verdicts(clean)[0]}"
    monkeypatch.setenv(BUG, "ties")
    result = run_fuzz(RunConfig(target=f"onnx-backend:{planted}:PlantedBackend", max_examples=100, seed=0,
                                settings="ci", report_dir=str(tmp_path / "reports")))
    found = [f for f in result.failures if f.rule.startswith("out.ties")]
    assert found and len(found) == len(result.failures), f"expected the tie bug alone, found {verdicts(result)[0]}"
    assert result.version.startswith("planted_backend.py:PlantedBackend 0.3"), result.version
    folder = found[0].report_dir
    source = open(os.path.join(folder, "repro.py")).read()
    assert "module.PlantedBackend.prepare" in source and 'function(model, "CPU")' in source, source
    assert len(source.splitlines()) < 75, f"repro.py has {len(source.splitlines())} lines"
    assert "planted_backend.py:PlantedBackend (ONNX backend) TopK-24 (CPU)" in \
        open(os.path.join(folder, "report.md")).readline(), "the report's title names the backend"
    done = repro(folder, {BUG: "ties"})
    assert done.returncode == 1, f"with the bug: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    printed = re.search(r"expected: values (.*) indices (.*)\nactual:\s+values (.*) indices (.*)", done.stdout)
    assert printed, f"repro.py prints the expected and the wrong result:\n{done.stdout}"
    assert printed.group(1) == printed.group(3) and printed.group(2) != printed.group(4), \
        f"the same values with their indices out of order: {printed.group(0)}"
    done = repro(folder)
    assert done.returncode == 0, f"bug gone: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"
    os.remove(planted)
    done = repro(folder, {BUG: "ties"})
    assert done.returncode == 2 and "cannot run" in done.stderr and "Traceback" not in done.stderr, \
        f"backend gone: expected exit 2 with one line, got {done.returncode}\n{done.stderr}"


def test_a_state_dependent_repro_keeps_one_backend_for_its_earlier_calls(planted, tmp_path):
    """A bug the backend shows only after a float16 model ran in the process: the repro makes the
    float16 call first, through the same backend module, so the bug shows (exit 1), and exits 0
    once the bug is off."""
    from topkspec.fuzz import Failure, RunResult
    from topkspec.properties import failures
    from topkspec.properties.failures import Violation
    from topkspec.report import write_report
    from topkspec.targets.registry import get_target

    spec = f"onnx-backend:{planted}"
    case = Case("onnx:24", "TopK", "float32", (2,), 0, 1, index_dtype="int64")
    x = np.array([5, 5], dtype=np.float32)
    earlier = (Case("onnx:24", "TopK", "float16", (3,), -1, 2, index_dtype="int64"),
               np.array([1, 2, 3], dtype=np.float16))
    violation = Violation("out.ties.kth_place", "out.ties.kth_place: recorded", failure_class=failures.WRONG_RESULT,
                          expected="index 0", actual="index 1")
    failure = Failure(target=get_target(spec).name, group="valid", violation=violation, case=case, x=x,
                      calls=[(case, x)], outputs=[None], prior=[earlier])
    result = RunResult(target=failure.target, version="test", profile="onnx:24", settings="ci", seed=0,
                       max_examples=1)
    folder = write_report(failure, result, str(tmp_path / "report"), target_spec=spec)
    done = repro(folder, {BUG: "after-float16"})
    assert done.returncode == 1, f"after the float16 call: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    assert "actual:   values [5.0] indices [1]" in done.stdout, done.stdout
    done = repro(folder)
    assert done.returncode == 0, f"bug off: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("spec, said", [
    ("onnx-backend:no_such_backend_module", "cannot import no_such_backend_module"),
    ("onnx-backend:json", "json has no prepare(model, device)"),
    ("onnx-backend:", "names no backend"),
    ("onnx-backend:./missing_backend.py", "no file"),
])
def test_a_module_that_is_no_backend_stops_with_one_line_and_exit_2(tmp_path, spec, said):
    done = subprocess.run([sys.executable, "-m", "topkspec", "fuzz", "--target", spec, "--max-examples", "5"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, f"{spec}: expected exit 2, got {done.returncode}\n{done.stderr}"
    assert said in done.stderr and "Traceback" not in done.stderr, f"{spec}: {done.stderr}"


pytest_plugins = ["pytester"]


def test_the_pytest_plugin_takes_an_onnx_backend_target(pytester, planted):
    """--topk-target onnx-backend:FILE runs the suite's valid group on the planted backend (right
    without its bug: it passes, every example run through the Backend API)."""
    pytester.makepyfile(tinyprofile='from hypothesis import settings\nsettings.register_profile('
                                    '"tiny", max_examples=50, derandomize=True, database=None, deadline=None)\n')
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess("-p", "tinyprofile", "-p", "no:cacheprovider", "--pyargs", "topkspec.suite",
                                           "--hypothesis-profile", "tiny", "--topk-target", f"onnx-backend:{planted}",
                                           "-k", "test_valid", "-s")
    result.assert_outcomes(passed=1)
    assert "onnx-backend:planted_backend.py" in result.stdout.str(), result.stdout.str()


def test_topkspec_targets_names_the_onnx_backend_form(monkeypatch, capsys):
    """The listing is of names; the form `onnx-backend:MODULE` gets a line of its own after them
    (the built-in targets' rows are left out here: listing them loads every runtime)."""
    from topkspec import cli
    from topkspec.targets import listing

    monkeypatch.setattr(listing, "describe_targets", lambda targets=None: [])
    assert cli.main(["targets"]) == 0
    out = capsys.readouterr().out
    assert "onnx-backend:MODULE" in out and "ONNX's Backend API" in out, f"topkspec targets: {out!r}"
