"""The CI workflows users copy parse, and name only commands and options the project has.
Our own CI (.ci/run) runs the README's test command."""
import functools
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

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
