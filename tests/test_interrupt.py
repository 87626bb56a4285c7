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
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, start_new_session=True)
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
