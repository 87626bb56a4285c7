"""The CI workflows users copy parse, and name only commands and options the project has.
Our own CI (.ci/run) runs the README's test command."""
import functools
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest
from slow import slow

yaml = pytest.importorskip("yaml")

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / "ci" / "github").glob("*.yml"))
KNOWN_ACTIONS = {"actions/checkout", "actions/setup-python", "actions/upload-artifact",
                 "actions/cache/restore", "actions/cache/save"}


def load(path):
    data = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the key `on` as True.
    data["on"] = data.pop(True, data.get("on"))
    return data


def steps(workflow):
    for job in workflow["jobs"].values():
        yield from job["steps"]


def commands(script):
    """Each shell command line of a `run:` script, expressions replaced by a placeholder."""
    script = re.sub(r"\$\{\{[^}]*\}\}", "VALUE", script).replace("\\\n", " ")
    for line in script.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield shlex.split(line)


def option_names(tokens):
    return [t.split("=", 1)[0] for t in tokens if t.startswith("-") and t != "-"]


@functools.lru_cache(maxsize=None)
def help_text(*command):
    out = subprocess.run([sys.executable, *command, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def check_command(tokens):
    if tokens[:1] == ["topkspec"]:
        sub = next(t for t in tokens[1:] if not t.startswith("-"))
        text = help_text("-m", "topkspec", sub)
        for option in option_names(tokens[1:]):
            assert re.search(rf"(^|[\s\[,]){re.escape(option)}\b", text), f"topkspec {sub} has no option {option}"
        return True
    if tokens[:3] == ["python", "-m", "pytest"] or tokens[:1] == ["pytest"]:
        text = help_text("-m", "pytest")
        for option in option_names(tokens[1:]):
            if option in ("-m", "-q", "-x"):
                continue
            assert option in text, f"pytest has no option {option} (is the topkspec plugin installed?)"
        if "--pyargs" in tokens:
            module = tokens[tokens.index("--pyargs") + 1]
            __import__(module)
        return True
    return False


def test_there_are_three_workflows():
    names = {p.stem for p in WORKFLOWS}
    assert names == {"topkspec-pr", "topkspec-directml", "topkspec-nightly"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_parses_and_uses_known_actions(path):
    workflow = load(path)
    assert workflow["name"] and workflow["on"] and workflow["jobs"]
    for step in steps(workflow):
        assert ("uses" in step) != ("run" in step), step
        if "uses" in step:
            action = step["uses"].split("@", 1)[0]
            assert action in KNOWN_ACTIONS, action


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_commands_and_options_exist(path):
    checked = 0
    for step in steps(load(path)):
        for tokens in commands(step.get("run", "")):
            checked += check_command(tokens)
    assert checked >= 2, "a workflow must run topkspec or its pytest suite"


def test_pull_request_workflow_covers_the_cpu_targets_with_the_ci_profile():
    workflow = load(ROOT / "ci" / "github" / "topkspec-pr.yml")
    job = workflow["jobs"]["topk"]
    assert job["runs-on"] == "ubuntu-latest"
    assert set(job["strategy"]["matrix"]["target"]) == {"reference", "onnx-reference", "onnxruntime", "torch", "jax"}
    runs = " ".join(s.get("run", "") for s in job["steps"])
    assert "--hypothesis-profile ci" in runs and "--topk-report-dir" in runs
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["if"] == "failure()"


def test_directml_workflow_needs_a_self_hosted_gpu_runner():
    job = load(ROOT / "ci" / "github" / "topkspec-directml.yml")["jobs"]["directml"]
    assert {"self-hosted", "windows", "gpu"} <= set(job["runs-on"])
    assert "--target onnxruntime-directml" in " ".join(s.get("run", "") for s in job["steps"])


def test_nightly_workflow_shares_an_example_database():
    workflow = load(ROOT / "ci" / "github" / "topkspec-nightly.yml")
    assert "schedule" in workflow["on"]
    runs = " ".join(s.get("run", "") for s in steps(workflow))
    assert "--settings nightly" in runs and "--database" in runs and "TOPKSPEC_REDIS_URL" in runs


def readme_test_command():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- test-command -->\s*```(?:sh|bash)?\n(.+?)\n```", text, re.S)
    assert block, "README.md must mark its test command with <!-- test-command -->"
    return block.group(1).strip()


def test_ci_runs_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text()
    lines = script.splitlines()
    assert readme_test_command() in lines
    # in a virtual environment of its own, made before the install: CI must resolve what a new
    # user's install resolves, not what the machine already has
    made = next((i for i, line in enumerate(lines) if "-m venv" in line), None)
    assert made is not None and made < lines.index(readme_test_command()), ".ci/run must make a fresh venv first"


# -- the shipped workflows run as written ------------------------------------------------------
# Each matrix job's steps run here as GitHub runs them (bash -e, the job's env, the step's
# command with its ${{ }} expressions filled in), in a fresh working directory, with this
# interpreter's environment standing for the job's install step (which needs the network):
# .ci/run installs that environment fresh with `pip install -e '.[all,test]'`, and
# test_install_step_installs_each_matrix_target checks the step's own requirement. Green on
# today's runtimes with their known deviations; red with a planted bug
# (tests/planted_runtimes.py, each runtime with one-based indices) named as the matrix target.

SLOW = os.environ.get("TOPKSPEC_SLOW_TESTS") == "1"  # .ci/run sets it
# The nightly job's budget, through the variable the workflow reads (20000 when unset).
NIGHTLY_EXAMPLES = "300"
MATRIX_JOBS = [("topkspec-pr.yml", "topk"), ("topkspec-nightly.yml", "campaign")]


def _expression(match, env, target):
    name = match.group(1).strip()
    if name == "matrix.target":
        return target
    if name.startswith("env."):
        return env.get(name[4:], "")
    if name.startswith(("secrets.", "vars.")):
        return ""  # not set in a repository that has not set it
    raise AssertionError(f"a workflow expression the test cannot fill in: {name}")


def fill(text, env, target):
    return re.sub(r"\$\{\{([^}]*)\}\}", lambda m: _expression(m, env, target), str(text))


def runnable_steps(workflow_name, job_name, with_listing):
    """(name, script) of the job's `run:` steps, the install step left out."""
    job = load(ROOT / "ci" / "github" / workflow_name)["jobs"][job_name]
    for step in job["steps"]:
        script = step.get("run")
        if script is None or "pip install" in script:
            continue
        if "topkspec targets" in script and not with_listing:
            continue
        yield step.get("name", script), script, step.get("shell")


def run_job(workflow_name, job_name, target, cwd, *, with_listing=False):
    """Run the job's steps in order as GitHub does, stopping at the first that fails; the
    name and the completed process of each step run."""
    workflow = load(ROOT / "ci" / "github" / workflow_name)
    job = workflow["jobs"][job_name]
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    for scope in (workflow.get("env") or {}, job.get("env") or {}):
        env.update({k: fill(v, env, target) for k, v in scope.items()})
    env["TOPKSPEC_NIGHTLY_EXAMPLES"] = NIGHTLY_EXAMPLES
    ran = []
    for name, script, shell in runnable_steps(workflow_name, job_name, with_listing):
        options = ["--noprofile", "--norc", "-eo", "pipefail"] if shell == "bash" else ["-e"]
        script = fill(script, env, target)
        out = subprocess.run(["bash", *options, "-c", script], cwd=cwd, env=env, capture_output=True,
                             text=True, timeout=600)
        ran.append((name, out))
        if out.returncode != 0:
            break
    return ran


def matrix_targets(workflow_name, job_name):
    job = load(ROOT / "ci" / "github" / workflow_name)["jobs"][job_name]
    return job["strategy"]["matrix"]["target"]


def usable_here(target):
    from topkspec.targets.base import availability
    from topkspec.targets.registry import get_target
    made = get_target(target)
    try:
        return availability(made)[0]
    finally:
        made.close()


# A job green and red is two campaigns (25 to 100 s on CI's two cores, more for jax): .ci/run
# runs them (slow).
JOB_CASES = [pytest.param(w, j, t, id=f"{w.split('.')[0]}-{t}")
             for w, j in MATRIX_JOBS for t in matrix_targets(w, j)]


def _failure_text(ran):
    name, out = ran[-1]
    return f"step {name!r} exit {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"


@slow
@pytest.mark.parametrize("workflow_name, job_name, target", JOB_CASES)
def test_matrix_job_is_green_on_todays_runtime_and_red_on_a_planted_bug(workflow_name, job_name, target,
                                                                      tmp_path):
    if not usable_here(target):
        pytest.skip(f"{target} does not run on this machine")
    green = tmp_path / "green"
    green.mkdir()
    ran = run_job(workflow_name, job_name, target, green)
    assert ran and ran[-1][1].returncode == 0, _failure_text(ran)
    assert not (green / "topk-reports").exists(), "a green job leaves no report to upload"

    red = tmp_path / "red"
    red.mkdir()
    planted = f"{ROOT / 'tests' / 'planted_runtimes.py'}:{target.replace('-', '_')}"
    ran = run_job(workflow_name, job_name, planted, red)
    name, out = ran[-1]
    assert out.returncode == 1, _failure_text(ran)
    reports = sorted(p.name for p in (red / "topk-reports").iterdir())
    # the planted bug is what fails it (reports are of new failures only: a known deviation has none)
    assert any("indices" in r or "gather" in r for r in reports), reports


@pytest.mark.skipif(not SLOW, reason="slow (about 70 s): .ci/run runs it (TOPKSPEC_SLOW_TESTS=1)")
def test_the_listing_step_runs(tmp_path):
    for name, script, _shell in runnable_steps("topkspec-pr.yml", "topk", True):
        if "topkspec targets" in script:
            env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
            out = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                                 text=True, timeout=600)
            assert out.returncode == 0, out.stderr[-3000:]
            return
    raise AssertionError("the pull-request workflow shows the target")


# Which distribution each matrix target imports, and the extra of pyproject.toml that installs it
# (None: a dependency of topkspec itself).
TARGET_DISTRIBUTIONS = {"reference": None, "onnx-reference": None, "onnxruntime": None,
                        "torch": "torch", "jax": "jax"}


@pytest.mark.parametrize("workflow_name, job_name", MATRIX_JOBS)
def test_install_step_installs_each_matrix_target(workflow_name, job_name):
    tomllib = pytest.importorskip("tomllib")
    workflow = load(ROOT / "ci" / "github" / workflow_name)
    requirement = workflow["env"]["TOPKSPEC"]
    extras = set(re.search(r"\[([^\]]*)\]", requirement).group(1).split(",")) if "[" in requirement else set()
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras <= set(declared), extras - set(declared)
    installed = set().union(*(set(declared[e]) for e in extras)) if extras else set()
    for target in matrix_targets(workflow_name, job_name):
        extra = TARGET_DISTRIBUTIONS[target]
        if extra is not None:
            assert extra in extras or any(r.startswith(f"{extra}") for r in installed), (target, requirement)
