"""Isolation: a target that crashes or hangs runs in a worker process; the run carries on."""
import ctypes
import multiprocessing
import os
import pickle
import signal
import sys
import time

import numpy as np
import pytest

from topkspec.properties import failures
from topkspec.targets.isolation import IsolatedTarget, TargetCrashed, TargetHung, describe_exit
from topkspec.spec.reference import reference_topk
from topkspec.fuzz import RunConfig, resolve_target, run_fuzz
from topkspec.spec import Case
from topkspec.targets.base import CallableTarget, Rejected, Target
from slow import slow

HERE = os.path.abspath(__file__)
CASE = Case("dml:5.0", "TOP_K1", "float32", (4,), 0, 1)
X = np.array([3, 1, 4, 1], dtype=np.float32)


# -- targets the worker imports from this file ------------------------------------------------

def segfault_when_k_above_1(x, *, axis, k, largest=True):
    if k >= 2:
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return reference_topk(x, axis=axis, k=k, largest=largest)


def sigsegv_when_k_above_1(x, *, axis, k, largest=True):
    if k >= 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    return reference_topk(x, axis=axis, k=k, largest=largest)


def hang_when_k_above_1(x, *, axis, k, largest=True):
    if k >= 2:
        while True:
            pass
    return reference_topk(x, axis=axis, k=k, largest=largest)


def noisy(x, *, axis, k, largest=True):
    print("a target that prints to stdout")  # must not corrupt the worker's replies
    sys.stdout.flush()
    if k > np.shape(x)[axis]:
        raise ValueError(f"k={k} too large")
    return reference_topk(x, axis=axis, k=k, largest=largest)


def exits_when_k_above_1(x, *, axis, k, largest=True):
    if k >= 2:
        os._exit(k - 2)  # k=2: exit code 0, k=5: exit code 3, as a native library's exit() would
    return reference_topk(x, axis=axis, k=k, largest=largest)


STARTED_IN_THIS_PROCESS = False  # set by the tests; a worker that forked from us would see it


def reports_inherited_state(x, *, axis, k, largest=True):
    values, indices = reference_topk(x, axis=axis, k=k, largest=largest)
    return values + (1 if STARTED_IN_THIS_PROCESS else 0), indices


def interrupts_itself(x, *, axis, k, largest=True):
    os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C in the terminal reaches every process
    time.sleep(0.2)
    return reference_topk(x, axis=axis, k=k, largest=largest)


def built_when_let_through():
    """A target whose worker does not finish starting until the file $TOPKSPEC_TEST_GATE
    exists (in this process it is built at once)."""
    if multiprocessing.parent_process() is not None:  # in a worker
        while not os.path.exists(os.environ["TOPKSPEC_TEST_GATE"]):
            time.sleep(0.01)
    return CallableTarget(reference_topk, name="gated")


class AsksPerType(Target):
    """supports() answers with how often it was asked, and depends on the value type only."""
    name = "asks-per-type"
    support_fields = ("dtype",)
    asked = 0

    def supports(self, case):
        AsksPerType.asked += 1
        return f"asked {AsksPerType.asked} time(s)"


class RefusesPerType(AsksPerType):
    """supports() refuses (Rejected) with how often it was asked."""
    name = "refuses-per-type"

    def supports(self, case):
        raise Rejected(super().supports(case))


def _target(name, timeout=5.0):
    return IsolatedTarget(f"{HERE}:{name}", timeout=timeout)


@pytest.mark.parametrize("name", ["segfault_when_k_above_1", "sigsegv_when_k_above_1"])
def test_a_crash_raises_and_the_worker_restarts(name):
    target = _target(name)
    try:
        values, indices = target.run(CASE, X)
        assert values.tolist() == [4.0], f"values: expected [4.0], got {values.tolist()}"
        with pytest.raises(TargetCrashed, match="SIGSEGV"):
            target.run(CASE.with_(k=2), X)
        values, indices = target.run(CASE, X)
        assert indices.tolist() == [2], f"indices after restart: expected [2], got {indices.tolist()}"
        assert target.restarts == 1, f"restarts: expected 1, got {target.restarts}"
    finally:
        target.close()


def test_a_hang_is_killed_after_the_timeout_and_the_worker_restarts():
    target = _target("hang_when_k_above_1", timeout=0.5)
    try:
        with pytest.raises(TargetHung, match="no answer within 0.5s"):
            target.run(CASE.with_(k=2), X)
        values, _ = target.run(CASE, X)
        assert values.tolist() == [4.0], f"values after restart: expected [4.0], got {values.tolist()}"
        assert target.restarts == 1, f"restarts: expected 1, got {target.restarts}"
    finally:
        target.close()


def test_rejections_and_printing_pass_through_the_worker():
    target = _target("noisy")
    try:
        assert target.name == "noisy" and target.validates, f"worker info: {target.name}, {target.validates}"
        with pytest.raises(Rejected, match="too large"):
            target.run(CASE.with_(k=9), X)
        values, indices = target.run(CASE.with_(k=2), X)
        assert values.tolist() == [4.0, 3.0], f"values: expected [4.0, 3.0], got {values.tolist()}"
        assert indices.dtype == np.uint32, f"index type: expected uint32, got {indices.dtype}"
    finally:
        target.close()


def test_a_target_that_cannot_be_built_is_bad_usage():
    with pytest.raises(ValueError, match="no attribute"):
        IsolatedTarget(f"{HERE}:no_such_function")


def test_without_waiting_the_worker_starts_meanwhile_and_its_first_use_waits(tmp_path, monkeypatch):
    gate = tmp_path / "go"
    monkeypatch.setenv("TOPKSPEC_TEST_GATE", str(gate))
    # The worker cannot finish starting before the gate opens, so returning at all means no wait
    # (waiting would end in TargetHung after START_TIMEOUT).
    target = resolve_target(f"{HERE}:built_when_let_through", isolate=True, timeout=5.0)
    try:
        assert isinstance(target, IsolatedTarget), f"resolved to {type(target).__name__}, not a worker"
        gate.touch()
        assert target.name == "gated", f"name reported by the worker: expected 'gated', got {target.name!r}"
        values, indices = target.run(CASE.with_(k=2), X)
        assert values.tolist() == [4.0, 3.0], f"values: expected [4.0, 3.0], got {values.tolist()}"
    finally:
        target.close()


def test_a_worker_closed_while_it_starts_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPKSPEC_TEST_GATE", str(tmp_path / "never"))
    target = IsolatedTarget(f"{HERE}:built_when_let_through", wait=False)
    target.close()
    workers = [p for p in multiprocessing.active_children() if p.name == "topkspec-worker"]
    assert workers == [], f"workers still running after close(): {workers}"


def test_a_target_the_worker_cannot_build_fails_at_its_first_use_without_waiting():
    target = IsolatedTarget(f"{HERE}:no_such_function", wait=False)
    try:
        with pytest.raises(ValueError, match="no attribute"):
            target.version()
    finally:
        target.close()


@pytest.mark.parametrize("name, failure_class", [("sigsegv_when_k_above_1", failures.CRASH),
                                                 ("hang_when_k_above_1", failures.HANG)])
@slow
def test_the_run_reports_the_crash_or_hang_with_its_case_and_carries_on(name, failure_class, tmp_path):
    result = run_fuzz(RunConfig(target=f"{HERE}:{name}", isolate=True, timeout=0.5, max_examples=40, seed=0,
                                settings="ci", groups=("valid", "deterministic"),
                                report_dir=str(tmp_path)))
    classes = [f.failure_class for f in result.failures]
    assert classes == [failure_class], f"failure classes: expected [{failure_class!r}], got {classes}"
    failure = result.failures[0]
    # How far a crash shrinks depends on the Hypothesis version (the planted-bug benchmark
    # measures it); what must hold is that the reported case triggers the crash or hang.
    assert failure.case.k >= 2, f"the failing case's K: expected 2 or more, got {failure.case.describe()}"
    assert result.examples["deterministic"] > 0, f"examples after the {failure_class}: {dict(result.examples)}"
    assert (tmp_path / os.path.basename(failure.report_dir) / "repro.py").is_file(), "repro.py missing"


@pytest.mark.parametrize("k, status", [(2, "exited with code 0"), (5, "exited with code 3")])
def test_a_worker_that_exits_during_a_call_crashed_whatever_its_exit_code(k, status):
    target = _target("exits_when_k_above_1")
    try:
        with pytest.raises(TargetCrashed, match=status):
            target.run(CASE.with_(k=k), X)
        values, _ = target.run(CASE, X)
        assert values.tolist() == [4.0], f"values after restart: expected [4.0], got {values.tolist()}"
    finally:
        target.close()


@pytest.mark.parametrize("code, words", [
    (-11, "killed by signal SIGSEGV"), (0xC0000005, "status 0xC0000005 (STATUS_ACCESS_VIOLATION)"),
    (0xC00000FD, "STATUS_STACK_OVERFLOW"), (0xC0000135, "status 0xC0000135"), (3, "exited with code 3"),
])
def test_exit_statuses_are_described_on_posix_and_windows(code, words):
    assert words in describe_exit(code), f"describe_exit({code}): expected {words!r} in {describe_exit(code)!r}"


def test_the_worker_is_spawned_not_forked_as_on_windows():
    # Windows can only spawn; the worker starts the same way here, so this path is the one tested.
    global STARTED_IN_THIS_PROCESS
    STARTED_IN_THIS_PROCESS = True
    target = _target("reports_inherited_state")
    try:
        values, _ = target.run(CASE, X)
        assert values.tolist() == [4.0], \
            f"values: expected [4.0] from a fresh interpreter, got {values.tolist()} (the worker saw our state: forked)"
    finally:
        STARTED_IN_THIS_PROCESS = False
        target.close()


def test_the_worker_ignores_ctrl_c():
    # Ctrl-C reaches every process of the terminal; the run decides when its worker stops.
    target = _target("interrupts_itself")
    try:
        values, _ = target.run(CASE, X)
        assert values.tolist() == [4.0], f"values: expected [4.0], got {values.tolist()}"
        assert target.restarts == 0, f"restarts: expected 0, got {target.restarts}"
    finally:
        target.close()


@slow
def test_a_plain_function_that_segfaults_is_reported_with_default_options(tmp_path):
    # `auto` isolation runs plain functions in a worker: users plug in wrappers of native code.
    import subprocess

    done = subprocess.run([sys.executable, "-m", "topkspec", "fuzz", "--target", f"{HERE}:sigsegv_when_k_above_1",
                           "--settings", "ci", "--max-examples", "30", "--seed", "0", "--quiet",
                           "--report-dir", str(tmp_path / "reports")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 1, f"exit code: expected 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    assert "[crash]" in done.stdout, f"no crash in the summary:\n{done.stdout}"
    assert any((tmp_path / "reports").iterdir()), "no report written for the crash"


def test_a_callable_object_that_cannot_reach_a_worker_runs_here_and_says_so():
    from topkspec.targets.base import CallableTarget

    target = CallableTarget(lambda x, *, axis, k, largest: reference_topk(x, axis=axis, k=k, largest=largest),
                            name="lambda")
    with pytest.raises(Exception) as pickling:
        pickle.dumps(target)
    result = run_fuzz(RunConfig(target=target, max_examples=10, seed=0, settings="ci", groups=("valid",)))
    assert result.ok, result.failures
    reason = f"({pickling.type.__name__})"  # what pickle said, not an error of the worker's cleanup
    assert any("not isolated" in note and reason in note for note in result.notes), (
        f"notes: expected one saying {reason}, got {result.notes}")


def test_a_worker_is_asked_supports_once_per_value_of_the_targets_support_fields():
    target = _target("AsksPerType")
    try:
        first = target.supports(CASE)
        again = target.supports(CASE.with_(shape=(9,), k=3))
        other = target.supports(CASE.with_(dtype="int32"))
    finally:
        target.close()
    assert (first, again) == ("asked 1 time(s)", "asked 1 time(s)"), f"same type: expected one question, got {first!r}, {again!r}"
    assert other == "asked 2 time(s)", f"another type: expected a second question, got {other!r}"


def test_a_worker_is_asked_supports_once_per_value_of_the_support_fields_when_it_refuses():
    target = _target("RefusesPerType")
    refusals = []
    try:
        for case in (CASE, CASE.with_(shape=(9,), k=3), CASE.with_(dtype="int32")):
            with pytest.raises(Rejected) as refused:
                target.supports(case)
            refusals.append(str(refused.value))
    finally:
        target.close()
    assert refusals == ["asked 1 time(s)", "asked 1 time(s)", "asked 2 time(s)"], (
        f"a refusal answers for its type as a reason does: expected one question per type, got {refusals}")



def says_it_started(x, *, axis, k, largest=True):
    """Writes the file named by TOPKSPEC_TEST_STARTED as the call starts."""
    with open(os.environ["TOPKSPEC_TEST_STARTED"], "a") as marker:
        marker.write("started\n")
    return reference_topk(x, axis=axis, k=k, largest=largest)


def _started_within(path, seconds=10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def marker(tmp_path, monkeypatch):
    path = str(tmp_path / "started")
    monkeypatch.setenv("TOPKSPEC_TEST_STARTED", path)  # the worker inherits it when spawned
    return path


def test_a_submitted_call_runs_in_the_worker_before_anyone_waits_for_it(marker):
    target = _target("says_it_started")
    try:
        wait = target.submit(CASE, X)
        assert _started_within(marker), "the worker did not start the call before it was waited for"
        values, _ = wait()
    finally:
        target.close()
    assert values.tolist() == [4.0], f"values: expected [4.0], got {values.tolist()}"


def test_an_answer_nobody_waited_for_does_not_answer_the_next_call():
    target = _target("noisy")
    try:
        forgotten = target.submit(CASE.with_(k=1), X)
        values, _ = target.run(CASE.with_(k=3), X)
        assert values.tolist() == [4.0, 3.0, 1.0], f"values of the second call: got {values.tolist()}"
        with pytest.raises(RuntimeError, match="waited for once"):
            forgotten()
    finally:
        target.close()


def sleeps_when_k_is_1(x, *, axis, k, largest=True):
    if k == 1:
        time.sleep(0.5)
    return reference_topk(x, axis=axis, k=k, largest=largest)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX interval timers")
def test_an_interrupted_wait_leaves_its_answer_to_be_taken_off_before_the_next_call():
    target = _target("sleeps_when_k_is_1")
    previous = signal.signal(signal.SIGALRM, _interrupt)
    try:
        wait = target.submit(CASE.with_(k=1), X)
        signal.setitimer(signal.ITIMER_REAL, 0.1)  # as Ctrl-C would, while the worker sleeps
        with pytest.raises(KeyboardInterrupt):
            wait()
        values, _ = target.run(CASE.with_(k=3), X)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        target.close()
    assert values.tolist() == [4.0, 3.0, 1.0], f"the next call got another call's answer: {values.tolist()}"


def test_the_run_works_on_while_the_worker_runs_the_target(marker):
    from topkspec.fuzz.context import GroupContext
    from topkspec.fuzz.results import RunResult

    target = _target("says_it_started")
    seen = []
    try:
        ctx = GroupContext(target, RunResult(target="t", version="v", profile="dml:5.0", settings=None,
                                             seed=None, max_examples=1), "valid")
        values, _ = ctx.run(CASE, X, meanwhile=lambda: seen.append(_started_within(marker)))
    finally:
        target.close()
    assert seen == [True], "meanwhile ran before the worker had the call"
    assert values.tolist() == [4.0], f"values: expected [4.0], got {values.tolist()}"
