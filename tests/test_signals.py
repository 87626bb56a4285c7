"""The run's own process keeps its signal handlers whatever a target's runtime installs there
(targets.base.signals_kept): a runtime whose import ends the process on any child's death
would otherwise end the run, with no summary, the first time a worker crashed."""
import os
import signal
import subprocess
import sys

from topkspec.targets.base import availability, signals_kept, version_text
from slow import slow

PLUGIN = os.path.join(os.path.dirname(__file__), "plugins", "sigchld_runtime.py")


def test_signals_kept_restores_what_a_runtime_installs():
    before = signal.getsignal(signal.SIGCHLD)
    with signals_kept():
        signal.signal(signal.SIGCHLD, lambda *_: None)
    assert signal.getsignal(signal.SIGCHLD) is before


def test_availability_and_version_keep_the_handlers():
    sys.path.insert(0, os.path.dirname(PLUGIN))
    import sigchld_runtime

    before = signal.getsignal(signal.SIGCHLD)
    assert availability(sigchld_runtime.target) == (True, "")
    assert version_text(sigchld_runtime.target) == "sigchld-runtime 1.0"
    assert signal.getsignal(signal.SIGCHLD) is before


@slow
def test_a_worker_crash_does_not_end_a_run_whose_runtime_set_a_sigchld_handler(tmp_path):
    run = subprocess.run([sys.executable, "-m", "topkspec", "fuzz", "--target", f"{PLUGIN}:target",
                          "--max-examples", "60", "--seed", "1", "--isolate", "always", "--quiet",
                          "--report-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr[-2000:]  # the crash is a finding; the run went on to its summary
    assert "crash" in run.stdout
    assert any(name.startswith("01-") for name in os.listdir(tmp_path))
