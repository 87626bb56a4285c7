"""A report of a target named by module path or file path replays from its report folder, in
the tree the run was in, with no absolute path of the machine that wrote it; moved where its
target cannot be found, it exits 2 with one line saying what must be importable (never 1, which
reads as "the bug is still there")."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from slow import slow

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _run(args, cwd, pythonpath):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in pythonpath))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _reports(tmp_path, target, files, pythonpath=()):
    """Copy `files` (name under tests/ -> path under tmp_path/project), fuzz `target` there with
    a report folder; the project folder and its first report folder."""
    project = tmp_path / "project"
    for source, name in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(HERE / source, project / name)
    done = _run(["-m", "topkspec", "fuzz", "--target", target, "--max-examples", "60", "--seed", "0",
                 "--settings", "ci", "--report-dir", "topk-reports", "--quiet"], project,
                [ROOT, *[project / p for p in pythonpath]])
    assert done.returncode == 1, done.stderr[-2000:]
    return project, sorted((project / "topk-reports").iterdir())[0]


def _replays(report, project, moved):
    source = (report / "repro.py").read_text()
    assert str(project) not in source and str(HERE) not in source, "an absolute path of this machine"
    here = _run(["repro.py"], report, [ROOT])  # topkspec importable, the user's folder not
    assert here.returncode == 1, here.stdout + here.stderr
    assert "Traceback" not in here.stderr
    away = project.parent / "away"
    away.mkdir()
    shutil.move(str(project / moved), str(away / Path(moved).name))
    gone = _run(["repro.py"], report, [ROOT])
    assert gone.returncode == 2, gone.stdout + gone.stderr
    lines = gone.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cannot run: ") and "Traceback" not in gone.stderr, gone.stderr
    return lines[0]


def test_a_module_path_targets_repro_finds_its_module_or_says_it_must_be_importable(tmp_path):
    project, report = _reports(tmp_path, "my_topk:ignores_direction", {"planted_bugs.py": "my_topk.py"},
                               pythonpath=["."])
    line = _replays(report, project, "my_topk.py")
    assert "my_topk must be importable" in line and "PYTHONPATH" in line, line


def test_a_file_path_targets_repro_finds_its_file_from_the_report_folder(tmp_path):
    project, report = _reports(tmp_path, "sub/mine.py:ignores_direction", {"planted_bugs.py": "sub/mine.py"})
    line = _replays(report, project, "sub/mine.py")
    assert "mine.py, the file the run named" in line, line


@pytest.mark.parametrize("spec", ["lib/user_targets.py:WidensValues", "user_targets:WidensValues"])
@slow
def test_a_target_class_repro_through_the_adapter_finds_its_file_too(tmp_path, spec):
    files = {"user_targets.py": "lib/user_targets.py", "planted_bugs.py": "lib/planted_bugs.py"}
    project, report = _reports(tmp_path, spec, files, pythonpath=["lib"] if ":" in spec and "/" not in spec else ())
    assert "get_target(" in (report / "repro.py").read_text()
    line = _replays(report, project, "lib/user_targets.py")
    assert "user_targets" in line, line
