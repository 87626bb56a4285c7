"""Ctrl-C: the run stops cleanly, prints its summary so far, writes reports for what it found,
and shows no traceback (of the run or of its worker) and no Hypothesis "@seed(...)" line."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

PLUGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugins")
FOUND = re.compile(r"\b[1-9][0-9]* failure")  # a progress line once something was found


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT to a process group (POSIX)")
def test_ctrl_c_after_a_failure_keeps_the_summary_and_the_report(tmp_path):
    reports = tmp_path / "reports"
    process = subprocess.Popen(
        [sys.executable, "-m", "topkspec", "fuzz", "--target", f"{PLUGINS}/slow_bugs.py:slow_and_ignores_direction",
         "--max-examples", "100000", "--database", str(tmp_path / "db"), "--report-dir", str(reports)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, start_new_session=True,
        preexec_fn=_ctrl_c_on)
    seen = []
    deadline = time.monotonic() + 300
    try:
        for line in process.stderr:  # progress: wait until a failure was found
            seen.append(line)
            if FOUND.search(line) or time.monotonic() > deadline:
                break
        time.sleep(1.0)
        os.killpg(process.pid, signal.SIGINT)  # as Ctrl-C does: the run and its worker
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    err = "".join(seen) + err
    assert any(FOUND.search(line) for line in seen), f"no failure was found before the interrupt:\n{err}"
    assert process.returncode == 130, f"exit code: expected 130, got {process.returncode}\n{out}\n{err}"
    assert "interrupted (Ctrl-C)" in out and "[wrong result]" in out, f"summary:\n{out}"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, f"stderr has a traceback:\n{err}"
    assert "@seed(" not in out + err, f"Hypothesis's seed line was printed:\n{out}\n{err}"
    folders = list(reports.iterdir()) if reports.is_dir() else []
    assert folders and (folders[0] / "report.md").is_file(), f"no report written: {folders}"


def _ctrl_c_on():
    """Ctrl-C as a terminal gives it, even where the tests run as a background job (whose
    processes start with SIGINT ignored, and a run then keeps it off)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _PressesCtrlCWhenCollected:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)


@pytest.mark.skipif(sys.platform == "win32", reason="raises SIGINT in the process itself (POSIX)")
def test_a_ctrl_c_python_drops_in_a_finalizer_still_stops_the_run_at_the_next_example(capfd):
    # A Ctrl-C that lands in a finalizer or a garbage-collector callback (Hypothesis has one) is
    # dropped by Python: before, the run went on to the end of the group and printed a traceback.
    from topkspec.fuzz import RunConfig, run_fuzz
    from topkspec.spec.reference import reference_topk
    from topkspec.targets.base import CallableTarget

    calls = []

    def presses_ctrl_c_in_a_finalizer(x, *, axis, k, largest):
        calls.append(None)
        if len(calls) == 5:
            _PressesCtrlCWhenCollected()  # collected at once: the interrupt lands in __del__
        return reference_topk(x, axis=axis, k=k, largest=largest)

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # on, as in _ctrl_c_on
    try:
        result = run_fuzz(RunConfig(target=CallableTarget(presses_ctrl_c_in_a_finalizer), max_examples=400,
                                    seed=0, settings="ci", groups=("valid",)))
        left = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, before)
    err = capfd.readouterr().err
    assert result.interrupted, f"the run went on after the Ctrl-C: {result.total_examples} examples"
    assert result.total_examples <= 6, f"expected the run to stop at the next example, ran {result.total_examples}"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, f"stderr:\n{err}"
    assert left is signal.default_int_handler, "the run's handler was left installed"


def test_a_ctrl_c_before_the_run_begins_stops_the_worker_started_for_it(monkeypatch):
    """The command line starts the target's worker before it loads the engine; an interrupt in
    between (here: as the run is called) must not leave the worker or its shared memory behind."""
    import multiprocessing

    from topkspec.cli import main

    def interrupted(config, *, target=None):
        raise KeyboardInterrupt

    monkeypatch.setattr("topkspec.fuzz.run.run_fuzz", interrupted)
    code = main(["fuzz", "--target", "reference", "--isolate", "always", "--max-examples", "5", "--quiet"])
    assert code == 130, f"exit code: expected 130, got {code}"
    workers = [p for p in multiprocessing.active_children() if p.name == "topkspec-worker"]
    assert workers == [], f"workers left running after the interrupt: {workers}"
