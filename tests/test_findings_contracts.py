"""findings/README.md under one bar: each finding's contract cell is what its target's declared
contract says of the rule it is filed under, and a finding of the register stands on a point the
contract leaves open only when it shows the runtime contradicting itself there (kind
contradicts-itself: two calls, two answers, which needs no promise); any other finding on an open
point is not filed (it is listed under "Not filed", kind open). Runs nothing; reads the register
and the targets' contracts."""
import pathlib
import re

import pytest

from topkspec.targets.listing import contract_cell, finding_left_open
from topkspec.targets.registry import get_target, known_names

REGISTER = pathlib.Path(__file__).resolve().parent.parent / "findings" / "README.md"

# Findings whose rule is not the point that decides them (none in the register today: the one
# there was, a gather failure that was only the sign of a zero, is not filed).
DECIDING_POINT: dict = {}


def rows():
    found = []
    for line in REGISTER.read_text().splitlines():
        match = re.match(r"\| \[([\w-]+)\]\([^)]*\) \| [^|]* \| [^|]* \| `([\w.]+)` \| ([a-z-]+) \| (.*) \| (.*) \|$",
                         line)
        if match:
            found.append(match.groups())
    return found


def target_of(finding: str) -> str:
    names = [name for name in known_names() if finding.startswith(name + "-")]
    assert names, f"{finding}: no target's name starts it"
    return max(names, key=len)


def test_the_register_has_rows():
    assert len(rows()) >= 10


def standing_problem(finding: str, kind: str, status: str, left_open: bool) -> str | None:
    """Why a register row cannot stand on its contract: on a point the contract leaves open only a
    contradiction of the runtime with itself is a bug; on a promised point nothing is withdrawn."""
    if left_open and kind != "contradicts-itself":
        return f"{finding}: the contract leaves it open: not a bug unless the runtime contradicts itself; list it under 'Not filed'"
    if status.startswith("withdrawn"):
        return f"{finding}: withdrawn findings are listed under 'Not filed', not in the register"
    return None


def test_the_standing_check_lets_only_a_contradiction_stand_on_an_open_point():
    assert "list it under 'Not filed'" in standing_problem("f", "standard", "new", left_open=True)
    assert standing_problem("f", "contradicts-itself", "new", left_open=True) is None
    assert standing_problem("f", "standard", "new", left_open=False) is None
    assert "withdrawn" in standing_problem("f", "standard", "withdrawn: x", left_open=False)


@pytest.mark.parametrize("finding, rule, kind, cell, status", rows(), ids=lambda v: v if isinstance(v, str) else "")
def test_contract_cell_and_status_follow_the_targets_contract(finding, rule, kind, cell, status):
    contract = get_target(target_of(finding)).contract
    point = DECIDING_POINT.get(finding)
    expected = contract_cell(contract, rule, point)
    assert cell.startswith(expected), f"{finding}: the contract cell must start with: {expected}"
    assert standing_problem(finding, kind, status, finding_left_open(contract, rule, point)) is None
