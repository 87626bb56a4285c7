"""No command deletes or overwrites a file it did not write: `corpus`, `fuzz --report-dir`,
`matrix` and `directml bundle --keep` (its path logic, without building a bundle, which needs
Wine). Each test puts the user's files where the command writes, runs it twice, and compares."""
import os
from pathlib import Path

import pytest
from slow import slow

from topkspec.cli import main
from topkspec.errors import MANIFEST, UsageError

HERE = os.path.dirname(__file__)
PLANTED = os.path.join(HERE, "planted_bugs.py")


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def kept(before: dict, folder: Path) -> None:
    after = snapshot(folder)
    for name, data in before.items():
        assert name in after, f"{name} was deleted"
        assert after[name] == data, f"{name} was overwritten"


def mine(folder: Path) -> dict:
    """The user's files in and beside where a command writes."""
    for name in ("mine.txt", "onnx/mine.txt", "dml/mine.json", "01-notes/mine.txt", "README.txt"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"the user's {name}\n")
    return snapshot(folder)


def test_corpus_refuses_a_folder_of_the_users(tmp_path, capsys):
    folder = tmp_path / "mydir"
    folder.mkdir()
    before = mine(folder)
    assert main(["corpus", str(folder), "--spec", "onnx:1"]) == 2
    err = capsys.readouterr().err
    assert "did not write" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert snapshot(folder) == before


def test_corpus_replaces_only_the_corpus_its_manifest_lists(tmp_path, capsys):
    folder = tmp_path / "topk-corpus"
    assert main(["corpus", str(folder), "--spec", "onnx:1"]) == 0
    first = set((folder / "onnx").iterdir())
    listed = (folder / MANIFEST).read_text().splitlines()
    assert "README.md" in listed and all((folder / name).is_file() for name in listed)
    (folder / "onnx" / "mine.txt").write_text("mine\n")
    (folder / "notes.md").write_text("mine\n")
    before = {name: data for name, data in snapshot(folder).items() if name in ("onnx/mine.txt", "notes.md")}
    assert main(["corpus", str(folder), "--spec", "onnx:10"]) == 0
    kept(before, folder)
    now = set((folder / "onnx").iterdir())
    assert not first & now - {folder / "onnx" / "mine.txt"}, "the earlier corpus is replaced"
    assert all(p.name.startswith("test_topk10_") for p in now if p.name != "mine.txt")
    # a file of the user's where a case goes: refused, nothing changed
    case = sorted(p for p in now if p.name != "mine.txt")[0]
    (folder / MANIFEST).write_text("\n".join(n for n in (folder / MANIFEST).read_text().splitlines()
                                             if not n.startswith(f"onnx/{case.name}/")) + "\n")
    before = snapshot(folder)
    capsys.readouterr()
    assert main(["corpus", str(folder), "--spec", "onnx:10"]) == 2
    assert "did not write" in capsys.readouterr().err
    assert snapshot(folder) == before
    assert not [p for p in folder.iterdir() if p.name.startswith(".topkspec-staging")]


def _fuzz(report_dir, bug="ignores_direction"):
    return main(["fuzz", "--target", f"{PLANTED}:{bug}", "--max-examples", "60", "--seed", "0", "--settings", "ci",
                 "--report-dir", str(report_dir), "--quiet"])


@slow
def test_report_dir_keeps_every_file_and_numbers_after_the_highest(tmp_path, capsys):
    reports = tmp_path / "topk-reports"
    reports.mkdir()
    before = mine(reports)
    assert _fuzz(reports) == 1
    first = snapshot(reports)
    kept(before, reports)
    assert _fuzz(reports) == 1
    kept(first, reports)
    folders = sorted(p.name for p in reports.iterdir() if p.is_dir() and p.name[:2].isdigit())
    numbers = [name.split("-", 1)[0] for name in folders]
    assert len(numbers) == len(set(numbers)), folders
    added = [n for n in folders if n != "01-notes"]
    assert added and min(added) > "01-notes", f"a re-run's reports come after those there: {folders}"
    capsys.readouterr()


@slow
def test_matrix_keeps_every_file_in_its_report_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = f"{PLANTED}:ignores_direction"
    reports = tmp_path / "matrix-reports"
    reports.mkdir()
    before = mine(reports)
    args = ["matrix", "--targets", target, "--max-examples", "60", "--seed", "0", "--report-dir", str(reports),
            "--quiet", "--out", str(tmp_path / "matrix.md")]
    assert main(args) == 1
    first = snapshot(reports)
    kept(before, reports)
    assert main(args) == 1
    kept(first, reports)
    capsys.readouterr()


def test_bundle_keep_refuses_a_folder_of_the_users_and_replaces_only_its_own(tmp_path):
    from topkspec.directml_tools.bundle import make as bundle

    users = tmp_path / "users"
    users.mkdir()
    before = mine(users)
    with pytest.raises(UsageError, match="did not write"):
        bundle.build(str(tmp_path / "b.tar.xz"), lambda folder: {}, keep=str(users))  # before any work
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "worker.exe").write_text("one\n")
    (root / "lib.so").write_text("one\n")
    os.symlink("lib.so", root / "lib.so.1")
    with pytest.raises(UsageError, match="did not write"):
        bundle.keep_copy(root, str(users))
    assert snapshot(users) == before and not [n for n in os.listdir(users) if n.startswith(".topkspec-staging")]
    keep = tmp_path / "kept"
    bundle.keep_copy(root, str(keep))
    assert os.path.islink(keep / "lib.so.1") and (keep / "bin" / "worker.exe").read_text() == "one\n"
    (keep / "notes.txt").write_text("mine\n")
    (root / "bin" / "worker.exe").write_text("two\n")
    (root / "lib.so").unlink()
    bundle.keep_copy(root, str(keep))
    assert (keep / "notes.txt").read_text() == "mine\n" and (keep / "bin" / "worker.exe").read_text() == "two\n"
    assert not (keep / "lib.so").exists(), "what the earlier --keep wrote and this one did not is gone"


def test_bundle_file_is_written_under_a_name_of_its_own_first(tmp_path):
    from topkspec.directml_tools.bundle import make as bundle

    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (tmp_path / "b.tar.xz.tmp").write_text("the user's\n")
    bundle._write_tarball(root, str(tmp_path / "b.tar.xz"))
    assert (tmp_path / "b.tar.xz.tmp").read_text() == "the user's\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.tar.xz", "b.tar.xz.tmp", "root"]


def test_a_manifest_never_reaches_outside_its_folder(tmp_path, capsys):
    outside = tmp_path / "important.txt"
    outside.write_text("the user's\n")
    folder = tmp_path / "topk-corpus"
    assert main(["corpus", str(folder), "--spec", "onnx:1"]) == 0
    with open(folder / MANIFEST, "a") as handle:
        handle.write(f"../important.txt\n{outside}\n")
    assert main(["corpus", str(folder), "--spec", "onnx:1"]) == 0
    assert outside.read_text() == "the user's\n"
    capsys.readouterr()
