"""The campaign re-finds the findings register (tests/refind.py). By default only the targets
in CHEAP run (one 1000-example campaign each); TOPKSPEC_REFIND=all runs every target of the
register whose runtime is here, as `python tests/refind.py` does."""
import os

import pytest

import refind
from slow import slow

CHEAP = ("tract",)


def test_the_register_names_a_target_and_a_rule_for_each_finding():
    from topkspec import spec

    findings = refind.register()
    assert findings
    for finding in findings:
        assert finding.folder.startswith(finding.target + "-")
        assert finding.rule in spec.RULES, finding
        assert os.path.isfile(os.path.join(refind.ROOT, "findings", finding.folder, "repro.py")), finding


def by_target():
    found = {}
    for finding in refind.register():
        found.setdefault(finding.target, []).append(finding)
    return found


@slow
@pytest.mark.parametrize("target", sorted(by_target()))
def test_each_finding_is_refound_by_its_targets_campaign(target):
    if os.environ.get("TOPKSPEC_REFIND") != "all" and target not in CHEAP:
        pytest.skip(f"a {refind.EXAMPLES}-example campaign on {target}: TOPKSPEC_REFIND=all runs it")
    ok, why = refind.available(target)
    if not ok:
        pytest.skip(why)
    outcome = refind.refind(target, by_target()[target])
    assert not outcome["missed"], f"{target}: not re-found: {outcome['missed']} (re-found: {outcome['found']})"
