"""A failure is replayed in a fresh worker before it is filed (topkspec.fuzz.confirm): one that
fails alone is filed as found; one that fails only after earlier calls of its process is filed
with the fewest of them, named first in its report and made first by its repro.py; one that
fails in no fresh process is not filed, and its calls are saved."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from slow import slow

from topkspec.fuzz import RunConfig, run_fuzz
from topkspec.fuzz.confirm import AFTER_CALLS, ALONE, NOT_CONFIRMED, Replayer, ddmin
from topkspec.fuzz.summary import format_summary
from topkspec.spec import Case
from topkspec.targets.history import CallHistory
from topkspec.targets.isolation import IsolatedTarget

HERE = os.path.dirname(os.path.abspath(__file__))
STATEFUL = os.path.join(HERE, "stateful_targets.py")
PLANTED = os.path.join(HERE, "planted_bugs.py")


def fuzz(tmp_path, name, where=STATEFUL, examples=100, **options):
    return run_fuzz(RunConfig(target=f"{where}:{name}", profile="onnx:24", max_examples=examples, seed=1, settings="ci",
                              groups=("valid",), report_dir=str(tmp_path / "reports"), **options))


def repro_exit(folder) -> subprocess.CompletedProcess:
    """repro.py run by a fresh `python`, from another folder."""
    return subprocess.run([sys.executable, os.path.join(folder, "repro.py")], capture_output=True, text=True,
                          timeout=120, cwd=os.path.dirname(folder))


@pytest.mark.parametrize("name, failure_class, isolate", [
    ("poisoned_by_float16", "wrong result", None),
    ("poisoned_by_float16", "wrong result", False),  # run in this process: the run keeps its calls
    ("aborts_after_float16", "crash", None),
])
@slow
def test_a_failure_after_a_poisoning_call_names_that_call_and_replays_it(tmp_path, name, failure_class, isolate):
    result = fuzz(tmp_path, name, isolate=isolate)
    assert result.failures and result.exit_code == 1, format_summary(result)
    for failure in result.failures:
        assert failure.failure_class == failure_class
        assert failure.confirmation.outcome == AFTER_CALLS, failure.confirmation
        # the one call that poisons the process, and nothing else of the worker's history
        assert [case.dtype for case, _ in failure.prior] == ["float16"], failure.prior
        report = open(os.path.join(failure.report_dir, "report.md")).read()
        title, opening = report.splitlines()[0], report.splitlines()[4]  # after the kind's line
        assert "after TopK on float16[" in title, title
        assert opening.startswith("After TopK on float16["), opening
        document = json.load(open(os.path.join(failure.report_dir, "case.json")))
        assert [call["dtype"] for call in document["earlier_calls"]] == ["float16"]
        done = repro_exit(failure.report_dir)
        assert done.returncode == 1, done.stdout + done.stderr
        # without the poisoning call the case passes: the call is what the report must carry
        source = open(os.path.join(failure.report_dir, "repro.py")).read()
        alone = os.path.join(failure.report_dir, "alone.py")
        open(alone, "w").write(source.replace("\nearlier_calls()\n", "\n").replace("    earlier_calls()\n", ""))
        done = subprocess.run([sys.executable, alone], capture_output=True, text=True, timeout=120,
                              cwd=failure.report_dir)
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_failure_no_fresh_process_reproduces_is_not_filed(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPKSPEC_TEST_FIRST_PROCESS", str(tmp_path / "first"))
    result = fuzz(tmp_path, "fails_in_first_process", examples=60)
    assert not result.failures and result.unreproduced
    assert result.exit_code == 0, format_summary(result)
    summary = format_summary(result)
    assert "failures: none filed" in summary and "not filed: [wrong result]" in summary, summary
    assert "not reproduced: broke in the run's worker only" in summary, summary
    for failure, saved in result.unreproduced:
        assert saved and saved in summary
        calls = json.load(open(os.path.join(saved, "calls.json")))["calls"]
        arrays = np.load(os.path.join(saved, "calls.npz"))
        assert len(calls) == failure.confirmation.history + 1 == len(arrays.files) >= 2
    assert not [name for name in os.listdir(tmp_path / "reports") if not name.startswith("not-reproduced-")]


def test_an_ordinary_failure_fails_alone_and_is_filed_as_before(tmp_path):
    result = fuzz(tmp_path, "one_based_indices", where=PLANTED, examples=60)
    assert result.failures and result.exit_code == 1
    for failure in result.failures:
        assert failure.confirmation.outcome == ALONE and failure.prior == []
        assert failure.confirmation.tests == 1
        assert "earlier_calls" not in open(os.path.join(failure.report_dir, "repro.py")).read()
        assert repro_exit(failure.report_dir).returncode == 1


def test_a_run_asked_not_to_confirm_files_failures_as_found(tmp_path):
    result = fuzz(tmp_path, "poisoned_by_float16", examples=60, confirm=False)
    assert result.failures and all(f.confirmation is None and not f.prior for f in result.failures)


def test_the_predicate_answers_for_another_case_and_prior_calls(tmp_path):
    """fails_alike is the question a reducer asks: the failure's rule and class, on (case, x),
    after the calls given, in a fresh worker."""
    result = fuzz(tmp_path, "poisoned_by_float16", examples=100, confirm=False)
    failure = next(f for f in result.failures if f.rule == "out.values.select")
    replayer = Replayer(f"{STATEFUL}:poisoned_by_float16", timeout=5, profile="onnx:24")
    case = Case(profile="onnx:24", op="TopK", dtype="int8", shape=(3,), axis=0, k=1, largest=True, sorted=True,
                index_dtype="int64")
    x = np.array([1, 5, 2], dtype=np.int8)
    poison = (case.with_(dtype="float16"), np.zeros(3, np.float16))
    still_fails = replayer.still_fails(failure, prior=[poison])
    try:
        assert still_fails(case, x)
        assert not replayer.fails_alike(failure, case, x)
        assert not replayer.fails_alike(failure, case, x, prior=[(case, x)])
        assert not still_fails(case.with_(shape=(1,)), x[:1])  # one element: nothing to get wrong
        assert replayer.started == 4
    finally:
        replayer.close()


def test_a_target_no_worker_can_build_is_filed_unconfirmed():
    replayer = Replayer(f"{STATEFUL}:no_such_function", timeout=5, profile="onnx:24")
    confirmation = replayer.confirm(fuzz_result_stub())
    replayer.close()
    assert confirmation.outcome == NOT_CONFIRMED and "no_such_function" in confirmation.why


def fuzz_result_stub():
    from topkspec.fuzz import Failure
    from topkspec.properties.failures import Violation

    case = Case(profile="onnx:24", op="TopK", dtype="int8", shape=(2,), axis=0, k=1, largest=True, sorted=True,
                index_dtype="int64")
    x = np.array([1, 2], dtype=np.int8)
    return Failure(target="t", group="valid", violation=Violation("out.values.select", "m"), case=case, x=x,
                   calls=[(case, x)], outputs=[None])


def test_ddmin_finds_the_calls_a_failure_needs():
    calls = list(range(100))
    tests = []

    def fails(subset):
        tests.append(len(subset))
        return 17 in subset and 80 in subset
    found, minimal = ddmin(calls, fails)
    assert found == [17, 80] and minimal and len(tests) < 80
    found, minimal = ddmin(calls, lambda subset: 42 in subset, stop=lambda: True)
    assert found == calls and not minimal


def test_the_history_is_bounded_and_a_new_worker_starts_a_new_one():
    history = CallHistory(max_calls=3, max_bytes=10 ** 6)
    for i in range(5):
        history.record(i, np.full(4, i))
    assert [case for case, _ in history.before(10)] == [2, 3, 4] and history.dropped == 2
    assert [case for case, _ in history.before(4)] == [2, 3]
    by_bytes = CallHistory(max_calls=100, max_bytes=3 * 8 * 4)
    for i in range(5):
        by_bytes.record(i, np.zeros(4))
    assert len(by_bytes) == 3
    target = IsolatedTarget(f"{STATEFUL}:aborts_after_float16", timeout=5)
    try:
        case = Case(profile="onnx:24", op="TopK", dtype="float16", shape=(2,), axis=0, k=1, largest=True,
                    sorted=True, index_dtype="int64")
        target.run(case, np.zeros(2, np.float16))
        assert len(target.history) == 1
        with pytest.raises(Exception):
            target.run(case.with_(dtype="float32"), np.zeros(2, np.float32))  # aborts the worker
        assert len(target.history) == 2  # the crashed worker's calls, until the next one starts
        target.run(case.with_(dtype="float32"), np.zeros(2, np.float32))
        assert [c.dtype for c, _ in target.history.before(10)] == ["float32"]
    finally:
        target.close()


@pytest.mark.parametrize("function, exit_code, says", [
    ("raises_on_nan", 1, "got a refusal"),  # refusing the valid case is no fix
    ("CORRECT", 0, "fixed: the call returned a result"),
])
def test_a_crash_repro_counts_a_refusal_as_the_bug_still_there(tmp_path, function, exit_code, says):
    from topkspec.fuzz import Failure, RunResult
    from topkspec.properties import failures
    from topkspec.properties.failures import Violation
    from topkspec.report import write_report

    case = Case(profile="onnx:24", op="TopK", dtype="float32", shape=(2,), axis=0, k=1, largest=True, sorted=True,
                index_dtype="int64")
    x = np.array([np.nan, 1], dtype=np.float32)
    failure = Failure(target="t", group="valid", case=case, x=x, calls=[(case, x)], outputs=[None],
                      violation=Violation("out.valid_accepted", "crashed", failure_class=failures.CRASH))
    result = RunResult(target="t", version="v", profile="onnx:24", settings=None, seed=None, max_examples=1)
    folder = write_report(failure, result, str(tmp_path), target_spec=f"{PLANTED}:{function}", timeout=7)
    assert "timeout=7 if called" in open(os.path.join(folder, "repro.py")).read()
    done = repro_exit(folder)
    assert done.returncode == exit_code and says in done.stdout + done.stderr, done.stdout + done.stderr
