"""A suite test's share of the budget (pytest_plugin). A pytest test cannot ask Hypothesis for
more examples as a fuzz run's next search does, so it asks for enough at once, and most of the
time its share is checked before they are all drawn. The lists drawn after it would go
unchecked: a test that found nothing ends its search there instead (ShareChecked), and passes."""
from __future__ import annotations

import pytest


class ShareChecked(pytest.skip.Exception):
    """A suite test checked its share and found nothing. A skip is the one exception Hypothesis
    lets through a search; pytest_runtest_makereport turns the test's report into a pass."""


def end_if_checked(ctx) -> None:
    """Raise ShareChecked where the test's search checked its share and found no failure (one
    it found is shrunk on every example Hypothesis asks for)."""
    if ctx.share_checked():
        raise ShareChecked(f"topkspec: {ctx.group}: its share of the budget is checked")


def passed_at_share(report, call) -> None:
    """A test that ended at its share (ShareChecked) passed."""
    if call.excinfo is not None and isinstance(call.excinfo.value, ShareChecked):
        report.outcome, report.longrepr = "passed", None
