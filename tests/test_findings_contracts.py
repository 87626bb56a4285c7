"""findings/README.md under one bar: each finding's contract cell is what its target's declared
contract says of the rule it is filed under, and a finding is withdrawn exactly where that
contract leaves the point open. Runs nothing; reads the register and the targets' contracts."""
import pathlib
import re

import pytest

from topkspec.targets.listing import contract_cell, finding_left_open
from topkspec.targets.registry import get_target, known_names

REGISTER = pathlib.Path(__file__).resolve().parent.parent / "findings" / "README.md"

# Findings whose rule is not the point that decides them: a gather failure that is only the sign
# of a zero is decided by what the runtime promises about signed zeros.
DECIDING_POINT = {"tinygrad-signed-zeros-collapse": "signed_zeros"}


def rows():
    found = []
    for line in REGISTER.read_text().splitlines():
        match = re.match(r"\| \[([\w-]+)\]\([^)]*\) \| [^|]* \| [^|]* \| `([\w.]+)` \| (.*) \| (.*) \|$", line)
        if match:
            found.append(match.groups())
    return found


def target_of(finding: str) -> str:
    names = [name for name in known_names() if finding.startswith(name + "-")]
    assert names, f"{finding}: no target's name starts it"
    return max(names, key=len)


def test_the_register_has_rows():
    assert len(rows()) >= 10


@pytest.mark.parametrize("finding, rule, cell, status", rows(), ids=lambda v: v if isinstance(v, str) else "")
def test_contract_cell_and_status_follow_the_targets_contract(finding, rule, cell, status):
    contract = get_target(target_of(finding)).contract
    point = DECIDING_POINT.get(finding)
    expected = contract_cell(contract, rule, point)
    assert cell.startswith(expected), f"{finding}: the contract cell must start with: {expected}"
    left_open = finding_left_open(contract, rule, point)
    assert status.startswith("withdrawn") == left_open, (
        f"{finding}: {contract.name} {'leaves it open: withdraw it' if left_open else 'promises it: not withdrawn'}")
