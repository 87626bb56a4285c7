"""The findings register (findings/): every finding has its report, case and repro, and every
finding marked new still reproduces where its runtime runs (else the register must say it was
fixed)."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "findings")
REQUIRED = {"DirectML": os.environ.get("TOPKSPEC_REQUIRE_DIRECTML") == "1"}
ROW = re.compile(r"^\| \[(?P<folder>[^\]]+)\]\([^)]+\) \| (?P<runtime>[^|]+) \| (?P<version>[^|]+) \| "
                 r"`(?P<rule>[^`]+)` \| (?P<status>[^|]+) \|$")


def findings():
    with open(os.path.join(ROOT, "README.md")) as handle:
        return [m.groupdict() for m in map(ROW.match, handle.read().splitlines()) if m]


def test_the_register_lists_every_folder_and_each_has_its_report_and_repro():
    from topkspec import spec

    listed = {f["folder"] for f in findings()}
    folders = {name for name in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, name))}
    assert listed == folders, f"listed {sorted(listed)}, folders {sorted(folders)}"
    for finding in findings():
        folder = os.path.join(ROOT, finding["folder"])
        for name in ("report.md", "repro.py"):
            assert os.path.isfile(os.path.join(folder, name)), f"{finding['folder']} has no {name}"
        assert finding["rule"] in spec.RULES, finding
        status = finding["status"].strip()
        assert status.startswith(("new", "known upstream: https://", "fixed in ")), status


@pytest.mark.parametrize("finding", [f for f in findings() if f["status"].startswith("new")],
                         ids=lambda f: f["folder"])
def test_a_new_finding_still_reproduces(finding):
    repro = os.path.join(ROOT, finding["folder"], "repro.py")
    done = subprocess.run([sys.executable, repro], capture_output=True, text=True, timeout=600)
    if done.returncode == 2:
        runtime = finding["runtime"].strip()
        if REQUIRED.get(runtime):
            pytest.fail(f"{runtime} is required here but the repro cannot run it:\n{done.stdout}{done.stderr}")
        pytest.skip(f"{runtime} cannot run here: {(done.stdout + done.stderr).strip().splitlines()[-1:]}")
    assert done.returncode == 1, (
        f"{finding['folder']} no longer reproduces (exit {done.returncode}): if the runtime fixed it, "
        f"say 'fixed in version X' in findings/README.md\n{done.stdout}{done.stderr}")
