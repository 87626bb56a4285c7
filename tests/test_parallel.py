"""`topkspec fuzz --workers N`: one campaign over N processes on pytest-xdist, the run's
options passed on to the suite, the example database shared by the workers."""
import os

import pytest

from topkspec.cli import build_parser, main
from slow import slow

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLANTED = os.path.join(REPO, "tests", "planted_bugs.py")


def args_of(*argv):
    return build_parser().parse_args(["fuzz", *argv])


def test_the_runs_options_become_the_suites():
    from topkspec.cli.parallel import pytest_args

    line = pytest_args(args_of("--target", "torch", "--workers", "2", "--max-examples", "500", "--seed", "3",
                               "--settings", "gpu", "--spec", "onnx:11", "--report-dir", "r", "--known"))
    text = " ".join(line)
    for part in ("-n 2", "--pyargs topkspec.suite", "--topk-target torch", "--topk-max-examples 500",
                 "--topk-seed 3", "--topk-shards 2", "--hypothesis-profile topkspec-gpu", "--topk-spec onnx:11",
                 "--topk-report-dir r", "--topk-database .topkspec/examples", "--topk-max-axis-size 2097152",
                 "--topk-max-elements 4194304"):
        assert part in text, f"{part!r} not in {text}"
    assert line[line.index("--topk-known") + 1:][:1] != [""], "--known without a file names the shipped list"
    ci = " ".join(pytest_args(args_of("--target", "reference", "--workers", "1", "--settings", "ci")))
    assert "--topk-database" not in ci and "--topk-max-examples 200" in ci, ci


def test_isolate_cannot_be_chosen_with_workers(capsys):
    assert main(["fuzz", "--target", "reference", "--workers", "2", "--isolate", "never"]) == 2
    assert "--workers" in capsys.readouterr().err


@slow
def test_two_workers_find_a_planted_bug_and_share_the_database(tmp_path, monkeypatch, capfd):
    pytest.importorskip("xdist")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = main(["fuzz", "--target", f"{PLANTED}:ignores_direction", "--workers", "2", "--max-examples", "40",
                 "--database", str(tmp_path / "db"), "--quiet"])  # no seed: Hypothesis saves nothing under one
    out = capfd.readouterr().out
    assert code == 1, out[-3000:]
    assert "FAILED ::test_" in out and "topkspec found " in out and "[wrong result] out." in out, out[-3000:]
    saved = [path for path in (tmp_path / "db").rglob("*") if path.is_file()]
    assert saved, "the workers saved nothing in the shared database"
