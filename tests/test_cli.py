"""The topkspec command line: fuzz, targets, matrix, bench; exit codes 0, 1 and 2."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from slow import slow

from topkspec.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLANTED = os.path.join(REPO, "tests", "planted_bugs.py")


def fuzz(capsys, *args):
    code = main(["fuzz", "--settings", "ci", "--quiet", *args])
    out, err = capsys.readouterr()
    return code, out, err


def run_repro(path):
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)


def test_the_reference_holds_every_property(capsys):
    code, out, err = fuzz(capsys, "--target", "reference", "--max-examples", "60", "--seed", "0")
    assert code == 0, f"exit code: expected 0, got {code}\n{out}{err}"
    assert "every property held" in out, f"summary: {out}"
    for heading in ("verdict per rule", "out.values.select            documents   holds (", "coverage per type and rank:",
                    "rank 1"):
        assert heading in out, f"summary lacks {heading!r}: {out}"


def test_a_planted_bug_is_found_reported_and_reproduced(capsys, tmp_path):
    reports = tmp_path / "reports"
    code, out, err = fuzz(capsys, "--target", f"{PLANTED}:one_based_indices", "--max-examples", "60",
                          "--seed", "0", "--report-dir", str(reports))
    assert code == 1, f"exit code: expected 1, got {code}\n{out}{err}"
    assert "failures by class:" in out and "wrong result" in out, f"summary: {out}"
    folders = sorted(p for p in reports.iterdir())
    assert folders, "no report folder written"
    folder = folders[0]
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["case.json", "inputs.npz", "report.md", "repro.py"], f"report folder {folder.name}: {names}"
    report = (folder / "report.md").read_text()
    for part in ("# one_based_indices (planted_bugs.py) returns indices counted from 1", "## The rule",
                 "## The case", "## Expected and actual", "**≠**", "## Reproduce", "## Environment"):
        assert part in report, f"report.md lacks {part!r}:\n{report}"
    case = json.loads((folder / "case.json").read_text())
    assert case["violation"]["failure_class"] == "wrong result", f"case.json: {case['violation']}"
    assert "x0" in np.load(folder / "inputs.npz").files, "inputs.npz has no x0"

    done = run_repro(folder / "repro.py")
    assert done.returncode == 1, f"repro.py against the bug: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    fixed = folder / "repro_fixed.py"
    fixed.write_text((folder / "repro.py").read_text().replace("module.one_based_indices", "module.CORRECT"))
    done = run_repro(fixed)
    assert done.returncode == 0, f"repro.py against the fix: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


def test_a_correct_function_holds_under_the_dev_profile_with_a_seed(capsys, tmp_path):
    # dev keeps a database: a seeded run first replays it, and an empty one must not end the run;
    # a plain function is held to refusing impossible input only, not to the profile's type tables.
    code = main(["fuzz", "--quiet", "--target", f"{PLANTED}:CORRECT", "--max-examples", "80", "--seed", "0",
                 "--database", str(tmp_path / "db")])
    out, err = capsys.readouterr()
    assert code == 0, f"exit code: expected 0, got {code}\n{out}{err}"
    assert "every property held" in out and "error in group" not in out, out
    assert " 0 examples in " not in out and re.search(r"out.invalid_rejected .* holds \(\d+\)", out), out


@slow
def test_the_same_seed_repeats_the_run(capsys, tmp_path):
    # a database of its own: what other runs in this folder saved would replay first. Hypothesis
    # also draws constants from the local modules loaded, so the runs compared follow one that
    # loads every module a run with failures uses.
    runs = [fuzz(capsys, "--target", f"{PLANTED}:ignores_direction", "--max-examples", "40", "--seed", "7",
                 "--database", str(tmp_path / "db")) for _ in range(3)][1:]
    # wall times differ from run to run: the lines that report them are left out of the comparison
    timed = re.compile(r" examples in |: \d+(\.\d+)?s \(")
    first, second = ([line for line in out.splitlines() if not timed.search(line)] for _, out, _ in runs)
    assert runs[0][0] == runs[1][0] == 1, f"exit codes: {runs[0][0]}, {runs[1][0]}"
    assert first == second, f"two runs with seed 7 differ:\n{runs[0][1]}\n---\n{runs[1][1]}"


def test_the_example_database_replays_a_failure(capsys, tmp_path):
    database = tmp_path / "db"
    args = ["--target", f"{PLANTED}:one_based_indices", "--max-examples", "60", "--database", str(database)]
    code, out, _ = fuzz(capsys, *args)  # unseeded: Hypothesis saves the failure
    assert code == 1, f"first run: expected exit 1, got {code}\n{out}"
    assert any(database.rglob("*")), "nothing saved in the example database"
    code, again, _ = fuzz(capsys, *args, "--seed", "2")
    assert code == 1, f"replay run: expected exit 1, got {code}\n{again}"
    # each rule the first run filed is replayed first (the second run may then file the same bug
    # under its own head: one bug's reports merge, and either rule may lead)
    filed = set(re.findall(r"^  \[[^\]]+\] (\S+) ", out, flags=re.M))
    replayed = re.search(r"^note: replayed first from the example database: (.*)$", again, flags=re.M)
    assert filed and replayed, f"first run filed {filed}; second run:\n{again}"
    missing = [rule for rule in filed if rule not in replayed.group(1)]
    assert not missing, f"failures saved by the first run did not replay first: {missing}\nsecond run:\n{again}"


@pytest.mark.parametrize("args, message", [
    (["fuzz", "--target", "no-such-target"], "unknown target"),
    (["fuzz", "--target", "no_such_module_xyz:topk"], "cannot import"),
    (["fuzz", "--target", f"{PLANTED}:no_such_function"], "no attribute"),
    (["fuzz", "--target", "reference", "--spec", "cuda:1"], "unknown profile"),
    (["fuzz", "--max-examples", "many"], "--max-examples"),
    (["fuzz", "--max-examples", "0"], "--max-examples"),
    (["fuzz", "--settings", "weekly"], "--settings"),
    (["fuzz", "--timeout", "-1"], "--timeout"),
    (["fuzz", "--no-such-option"], "unrecognized arguments"),
    (["matrix"], "--targets"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_usage_exits_2_with_one_line(capsys, args, message):
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 2, f"{args}: expected exit 2, got {code}\n{out}{err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("topkspec: error:"), f"{args}: stderr {err!r}"
    assert message in lines[0], f"{args}: expected {message!r} in {lines[0]!r}"


def test_the_installed_command_exits_2_without_a_traceback():
    done = subprocess.run([sys.executable, "-m", "topkspec", "fuzz", "--target", "nope"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2, f"exit code: expected 2, got {done.returncode}\n{done.stderr}"
    assert "Traceback" not in done.stderr, f"stderr has a traceback: {done.stderr}"


def test_progress_goes_to_stderr_with_time_and_rate(capsys):
    code = main(["fuzz", "--settings", "ci", "--target", "reference", "--max-examples", "20", "--seed", "0"])
    out, err = capsys.readouterr()
    assert code == 0, f"exit code: expected 0, got {code}"
    line = err.strip().splitlines()[-1]
    assert re.fullmatch(r"topkspec: reference \[\w+\] \d+/20 examples, 0 failures, [\d.]+ s, [\d.]+ examples/s", line), \
        f"progress line: expected examples, failures, elapsed time and rate, got {line!r}"
    assert "examples/s" not in out, "progress leaked onto stdout"


def test_the_summary_shows_each_failure_without_a_report_folder(capsys):
    code, out, err = fuzz(capsys, "--target", f"{PLANTED}:one_based_indices", "--max-examples", "60", "--seed", "0")
    assert code == 1, f"exit code: expected 1, got {code}\n{out}{err}"
    for label in ("what:     ", "input:    float32", "expected: values", "actual:   values", "rule:     \""):
        assert f"      {label}" in out, f"summary lacks the {label.strip()!r} line:\n{out}"
    assert "np.float32" not in out and "@0" not in out, f"plain numbers, sides named:\n{out}"


def test_the_summary_explains_a_budget_not_used_as_given(capsys):
    code, out, err = fuzz(capsys, "--target", f"{PLANTED}:one_based_indices", "--max-examples", "60", "--seed", "0")
    header = next(line for line in out.splitlines() if line.startswith("examples by group"))
    assert "budget of 60" in header and "valid " in header, f"per-group budget line: {header!r}"
    assert re.search(r"\n  valid: \d+ of \d+: shrinking its failures runs further examples", out), \
        f"why valid differs:\n{out}"


def test_a_profile_past_the_known_tables_says_which_it_used(capsys):
    code, out, err = fuzz(capsys, "--target", "reference", "--spec", "dml:9.9", "--max-examples", "20", "--seed", "0")
    assert code == 0, f"exit code: expected 0, got {code}\n{out}{err}"
    first = out.splitlines()[0]
    assert "DML_FEATURE_LEVEL_5_0 table" in first and "9_9 is no feature level this spec knows" in first, first
    code, out, err = fuzz(capsys, "--target", "reference", "--spec", "onnx:30", "--max-examples", "10", "--seed", "0")
    assert "ONNX TopK-24 (the newest TopK version at or below opset 30)" in out.splitlines()[0], out.splitlines()[0]


def test_version(capsys):
    import topkspec

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    out = capsys.readouterr().out
    assert exited.value.code == 0 and out.strip() == f"topkspec {topkspec.__version__}", f"--version printed {out!r}"


@pytest.mark.parametrize("args", [["fuzz", "--target", "onnxruntme"], ["matrix", "--targets", "reference,torhc"],
                                  ["bench", "--targets", "refernce"],
                                  ["validate", "-", "--against", "onnxruntim"]])
def test_a_misspelled_target_gets_a_suggestion(capsys, monkeypatch, args):
    import io
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'{"op": "TopK"}')))
    code = main(args)
    err = capsys.readouterr().err
    wanted = {"onnxruntme": "onnxruntime", "torhc": "torch", "refernce": "reference",
              "onnxruntim": "onnxruntime"}[args[-1].split(",")[-1]]
    assert code == 2 and f"(did you mean {wanted!r}?)" in err, f"{args}: exit {code}, stderr {err!r}"


def test_matrix_and_bench_show_progress(capsys, tmp_path):
    main(["matrix", "--targets", "reference", "--max-examples", "10", "--seed", "0", "--out", str(tmp_path / "m.md"),
          "--report-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert "matrix target 1 of 1: reference" in err and "examples/s" in err, f"matrix progress: {err!r}"
    main(["bench", "--targets", "reference", "--max-examples", "10", "--seed", "0", "--repeat", "1"])
    err = capsys.readouterr().err
    assert "bench target 1 of 1: reference" in err and "examples/s" in err, f"bench progress: {err!r}"


def test_targets_json_lists_the_targets_asked_for(capsys):
    """--only: the listing of those targets (the whole one, every runtime started and asked
    about every type, runs in the docs' blocks: tests/docs_checks_commands.py)."""
    assert main(["targets", "--json", "--only", "reference,onnxruntime"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == ["reference", "onnxruntime"], f"targets --json --only: {rows!r}"
    reference, onnxruntime = rows
    assert reference["available"] and "float32" in reference["support"]["onnx:24"]["supported"], reference
    assert "uint32" in onnxruntime["support"]["onnx:24"]["unsupported"], onnxruntime["support"]["onnx:24"]


def test_targets_only_names_known_targets(capsys):
    assert main(["targets", "--only", "refrence"]) == 2
    assert "refrence" in capsys.readouterr().err


def test_matrix_marks_holds_and_broken_and_links_reports(capsys, tmp_path):
    out_file = tmp_path / "matrix.md"
    code = main(["matrix", "--targets", f"reference,{PLANTED}:one_based_indices", "--max-examples", "40",
                 "--seed", "0", "--out", str(out_file), "--report-dir", str(tmp_path / "reports")])
    capsys.readouterr()
    assert code == 1, f"matrix exit code: expected 1 (a target broke a rule), got {code}"
    text = out_file.read_text()
    assert "| `out.exact` |" in text and "holds (" in text, f"matrix:\n{text}"
    assert "[**broken (wrong result)**](reports/" in text, f"matrix has no linked broken cell:\n{text}"
    row = next(line for line in text.splitlines() if line.startswith("| `out.values.gather` |"))
    assert row.startswith("| `out.values.gather` | documents | holds ("), f"the columns disagree:\n{row}"


def test_bench_prints_json_lines_with_the_floor(capsys):
    assert main(["bench", "--targets", "reference", "--max-examples", "30", "--seed", "0", "--repeat", "2"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["target"] for line in lines if "target" in line] == ["hypothesis-floor", "reference"], (
        f"bench lines: {lines}")
    coverage = [line for line in lines if "coverage" in line]
    assert {line["coverage"] for line in coverage} == {"valid", "nan", "metamorphic", "deterministic"}, coverage
    assert all(line["examples"] == 30 and "K = 1" in line["shape"] for line in coverage), coverage
    nan_rows = {line["coverage"]: "NaN" in line["values"] for line in coverage}
    assert nan_rows == {"valid": False, "nan": True, "metamorphic": True, "deterministic": True}, (
        f"a NaN row only for the groups that may draw NaN (valid is NaN-free on purpose): {nan_rows}")
    for key in ("examples_per_s", "generation_s", "target_s", "checks_s"):
        assert lines[1][key] >= 0, f"bench {key}: {lines[1]}"
    assert lines[1]["start_s"] > 0, f"bench start_s (the time before the first example): {lines[1]}"
    assert lines[0]["examples_per_s"] > 0 and lines[0]["samples"] == 3, f"floor: one before and after each run: {lines[0]}"
    runs = lines[1]["of_floor_runs"]
    assert len(runs) == 2 and lines[1]["of_floor"] == runs[1] > 0, f"of_floor: the median of the runs' shares: {lines[1]}"
    assert lines[1]["in_worker"] is False, f"the reference runs in this process: {lines[1]}"


def test_bench_runs_a_native_target_in_a_worker_unless_told_not_to(capsys):
    """--isolate never shows what the worker process costs: the same target, in this process."""
    by_choice = {}
    for choice in ("auto", "never"):
        assert main(["bench", "--targets", "onnxruntime", "--max-examples", "20", "--repeat", "1",
                     "--isolate", choice, "--quiet"]) == 0
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        by_choice[choice] = next(line for line in lines if line.get("target") == "onnxruntime")["in_worker"]
    assert by_choice == {"auto": True, "never": False}, f"in_worker by --isolate: {by_choice}"


def test_a_report_or_database_folder_that_cannot_be_written_is_bad_usage_before_the_run(capsys, tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    code, out, err = fuzz(capsys, "--target", f"{PLANTED}:one_based_indices", "--max-examples", "60", "--seed", "0",
                          "--report-dir", str(a_file))
    assert code == 2, f"fuzz exit code: expected 2, got {code}\n{out}{err}"
    assert "cannot write reports to" in err and out == "", f"expected one line and no run, got {out!r} {err!r}"
    code = main(["matrix", "--targets", "reference", "--max-examples", "5", "--quiet", "--out", str(a_file / "m.md")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot write a file in" in err, f"matrix --out: expected exit 2, got {code}: {err!r}"
    # An example database folder the user names, likewise (Hypothesis would drop every save).
    code, out, err = fuzz(capsys, "--target", "reference", "--max-examples", "5", "--database", str(a_file))
    assert code == 2 and "--database" in err and "not a folder" in err, f"--database: got {code}: {err!r}"


def test_a_run_that_writes_no_report_leaves_no_folder_it_made(capsys, tmp_path):
    reports = tmp_path / "new" / "reports"
    code, out, err = fuzz(capsys, "--target", "reference", "--max-examples", "10", "--seed", "0",
                          "--report-dir", str(reports))
    assert code == 0 and not (tmp_path / "new").exists(), f"exit {code}; left: {list(tmp_path.rglob('*'))}"
    code = main(["matrix", "--targets", "reference", "--max-examples", "5", "--quiet", "--report-dir", str(reports),
                 "--out", str(tmp_path / "m.md")])
    assert code == 0 and not (tmp_path / "new").exists(), f"matrix exit {code}; left: {list(tmp_path.rglob('*'))}"
    reports.mkdir(parents=True)  # a folder the user made stays, empty or not
    code, out, err = fuzz(capsys, "--target", "reference", "--max-examples", "10", "--seed", "0",
                          "--report-dir", str(reports))
    assert code == 0 and reports.is_dir(), f"exit {code}: the user's own folder was taken away"


@pytest.mark.parametrize("how, says", [("raise", "cannot build target"), ("exit", "exited with code 3 while starting")])
def test_a_target_whose_worker_cannot_start_is_one_line_and_exit_code_2(capsys, monkeypatch, tmp_path, how, says):
    monkeypatch.setenv("TOPKSPEC_TEST_WORKER_START", how)
    target = os.path.join(REPO, "tests", "plugins", "worker_start.py") + ":topk"
    code, out, err = fuzz(capsys, "--target", target, "--max-examples", "5")
    assert code == 2, f"exit code: expected 2, got {code}\n{out}{err}"
    assert says in err and len(err.strip().splitlines()) == 1, f"expected one line saying {says!r}, got {err!r}"
    # In a matrix it is a column of its own that says why, and the other targets still run.
    code = main(["matrix", "--targets", f"reference,{target}", "--max-examples", "5", "--quiet",
                 "--report-dir", str(tmp_path / "reports")])
    out = capsys.readouterr().out
    assert code == 0 and f"`{target}`: not run here: " in out and says in out, f"matrix ({code}):\n{out}"
    row = next(line for line in out.splitlines() if line.startswith("| `out.shape` |"))
    assert row.endswith("| not run |") and "unsupported" not in row, row


def test_fuzz_strict_doc_applies_the_literal_k_bound(capsys):
    args = ["--target", f"{PLANTED}:CORRECT", "--spec", "dml:5.0", "--max-examples", "80", "--seed", "0"]
    code, out, err = fuzz(capsys, *args)
    assert code == 0, f"without --strict-doc: expected exit 0, got {code}\n{out}{err}"
    code, out, err = fuzz(capsys, *args, "--strict-doc")
    assert code == 1, f"with --strict-doc: expected exit 1, got {code}\n{out}{err}"
    assert "dml.k.max_strict" in out and "(strict doc" in out, out


def test_a_run_that_judged_nothing_exits_3(capsys):
    broken = os.path.join(REPO, "tests", "plugins", "broken_adapters.py")
    code, out, err = fuzz(capsys, "--target", f"{broken}:NothingSupported", "--max-examples", "20", "--seed", "0")
    assert code == 3, f"exit code: expected 3 (judged nothing), got {code}\n{out}{err}"
    assert "judged too little" in out, out


def test_a_profile_without_any_topk_is_bad_usage(capsys):
    code = main(["fuzz", "--target", "reference", "--spec", "dml:1.0", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2 and "no TopK operator exists at dml:1.0" in err, f"exit {code}: {err}"


def test_matrix_says_when_an_adapter_broke(capsys, tmp_path):
    broken = os.path.join(REPO, "tests", "plugins", "broken_adapters.py")
    code = main(["matrix", "--targets", f"{broken}:attribute_error", "--max-examples", "20", "--seed", "0",
                 "--out", str(tmp_path / "matrix.md"), "--report-dir", str(tmp_path / "reports")])
    capsys.readouterr()
    text = (tmp_path / "matrix.md").read_text()
    assert code == 1, f"matrix exit code: expected 1, got {code}\n{text}"
    assert "its adapter broke (no verdict on the runtime)" in text and "no_such_attribute" in text, text


def test_every_usage_error_is_one_type_and_a_bug_is_not_called_bad_usage(monkeypatch):
    from topkspec import cli
    from topkspec.errors import UsageError
    from topkspec.fuzz.config import RunError
    from topkspec.cli.spec_commands import InputError
    from topkspec.spec.descriptors import DescriptorError
    from topkspec.spec.profiles import ProfileError
    from topkspec.targets.registry import TargetError

    for error in (RunError, InputError, DescriptorError, ProfileError, TargetError):
        assert issubclass(error, UsageError), f"{error.__name__}: expected a UsageError subclass"

    def broken(args):
        raise ValueError("a fault of the suite")

    monkeypatch.setattr(cli, "cmd_targets", broken)
    with pytest.raises(ValueError, match="a fault of the suite"):
        cli.main(["targets"])


def test_each_bench_run_is_set_against_the_floor_around_it():
    from types import SimpleNamespace

    from topkspec.fuzz.bench import _share_of_floor, _target_line

    def run(examples, seconds):
        return SimpleNamespace(total_examples=examples, cases=examples, seconds=seconds, start_seconds=0.5, profile="onnx:24",
                               failures=[], in_worker=False, timing={"group_s": seconds, "body_s": seconds / 2, "target_s": 0.1,
                                                    "checks_s": 0.1})

    # 300 examples in 1 s, the floor's 300 in 0.2 s before and 0.3 s after: 300/s against 1200/s
    assert _share_of_floor(run(300, 1.0), (300, 0.2), (300, 0.3)) == 0.25
    slow, middle, fast = run(300, 2.0), run(300, 1.0), run(300, 0.5)
    line = _target_line("t", [(0.5, fast), (0.1, slow), (0.25, middle)])
    assert (line["of_floor"], line["examples_per_s"], line["of_floor_runs"]) == (0.25, 300.0, [0.1, 0.25, 0.5]), line


def test_bench_spec_prints_validate_and_import_times(capsys):
    assert main(["bench", "spec", "--repeat", "1", "--number", "10", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["validate_us"]) == set(result["findings"]) and result["validate_us"], result
    assert all(us > 0 for us in result["validate_us"].values()), result["validate_us"]
    assert "import topkspec.spec" in result["import_ms"], result["import_ms"]


def test_bench_times_each_planted_bug_to_its_first_failure(capsys):
    """--bugs: one line per bug with the seconds and examples to its first failure, median and
    max over the seeds; a bug no budget can find (the correct implementation) has none."""
    assert main(["bench", "--targets", "reference", "--max-examples", "60", "--repeat", "1", "--quiet",
                 "--bugs", f"{PLANTED}:one_based_indices,ignores_direction", "--seeds", "2"]) == 0
    bugs = [line for line in map(json.loads, capsys.readouterr().out.splitlines()) if "bug" in line]
    assert [line["bug"] for line in bugs] == ["one_based_indices", "ignores_direction"], bugs
    for line in bugs:
        assert line["found"] == "2 of 2", line
        assert 0 < line["seconds_median"] <= line["seconds_max"], line
        assert 1 <= line["examples_median"] <= line["examples_max"] <= 60, line
    from topkspec.fuzz.bench import bug_line

    assert bug_line(PLANTED, "CORRECT", seeds=1, max_examples=20) == {
        "bug": "CORRECT", "found": "0 of 1", "max_examples": 20}


@pytest.mark.parametrize("bugs", ["no/such/file.py", f"{PLANTED}:no_such_bug"])
def test_bench_with_bad_planted_bugs_is_bad_usage(capsys, bugs):
    assert main(["bench", "--targets", "reference", "--bugs", bugs]) == 2
    err = capsys.readouterr().err
    assert err.startswith("topkspec: error: --bugs") and "Traceback" not in err, err


def test_bench_lists_the_planted_bugs_of_a_file():
    from topkspec.fuzz.bench import planted_bugs

    path, names = planted_bugs(PLANTED)
    assert path == PLANTED and "heap_path_above_64" in names and "CORRECT" not in names, names
    assert not any(name.startswith("_") for name in names), names


@pytest.mark.parametrize("option", ["--max-axis-size", "--max-elements"])
def test_shape_limits_must_be_positive(capsys, option):
    assert main(["fuzz", "--target", "reference", option, "0"]) == 2
    assert "expected at least 1" in capsys.readouterr().err


def test_fuzz_draws_axes_as_long_as_asked(capsys, monkeypatch):
    """--max-axis-size reaches the strategies: a run with axes to 2**17 draws some longer than
    the default room, and judges them."""
    from topkspec.fuzz import groups

    seen = []
    real = groups._result_body

    def watching(ctx, data):
        seen.append(data[0].axis_size)
        return real(ctx, data)

    monkeypatch.setattr(groups, "_result_body", watching)
    code = main(["fuzz", "--target", "reference", "--max-axis-size", str(1 << 17), "--max-examples", "120",
                 "--seed", "0", "--quiet", "--settings", "ci"])
    assert code == 0, capsys.readouterr()
    assert max(seen) > 4096, f"longest axis drawn: {max(seen)} (4096 is the default room)"


def test_matrix_with_a_file_as_report_dir_fails_before_any_target_starts(capsys, tmp_path):
    taken = tmp_path / "reports.txt"
    taken.write_text("not a folder")
    code = main(["matrix", "--targets", f"reference,{PLANTED}:CORRECT", "--max-examples", "5",
                 "--report-dir", str(taken)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", f"exit {code}\n{out}{err}"
    assert err.strip().splitlines() == [f"topkspec: error: cannot write reports to {taken}: it is a file, not a folder"], err


def test_matrix_passes_the_shape_limits_to_each_run(tmp_path, monkeypatch):
    from topkspec.fuzz import run as fuzz_run

    seen = []
    real = fuzz_run.run_fuzz

    def watching(config):
        seen.append((config.target, config.max_axis_size, config.max_elements))
        return real(config)

    monkeypatch.setattr(fuzz_run, "run_fuzz", watching)
    code = main(["matrix", "--targets", "reference", "--max-examples", "5", "--max-axis-size", "8192",
                 "--max-elements", "16384", "--out", str(tmp_path / "matrix.md"),
                 "--report-dir", str(tmp_path / "reports"), "--quiet"])
    assert code in (0, 3), code
    assert seen == [("reference", 8192, 16384)], seen


def test_a_file_named_without_its_function_says_to_add_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good_topk.py").write_text("def topk(x, *, axis, k, largest=True):\n    raise ValueError\n")
    assert main(["fuzz", "--target", "./good_topk.py"]) == 2
    err = capsys.readouterr().err
    assert "names a file but not what to fuzz in it: give ./good_topk.py:function" in err, err
    assert "unknown target" not in err and len(err.strip().splitlines()) == 1, err


def test_a_module_beside_the_command_but_off_the_import_path_says_how_to_reach_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    (tmp_path / "good_topk.py").write_text("def topk(x, *, axis, k, largest=True):\n    raise ValueError\n")
    assert main(["fuzz", "--target", "good_topk:topk"]) == 2
    err = capsys.readouterr().err
    assert "run with PYTHONPATH=." in err and "./good_topk.py:topk" in err and "Traceback" not in err, err
