"""The suite's property groups as tests HypoFuzz can fuzz, configured by the environment:

    TOPKSPEC_TARGET=reference hypothesis fuzz -n 2 --no-dashboard -- --pyargs topkspec.hypofuzz_suite

(`topkspec fuzz --engine hypofuzz` runs that command line.) The tests are topkspec.suite's,
checked by the same session, but they take no fixture and no parameter: HypoFuzz 25.11.1 sets
a test's fixtures up again when a worker comes back to it, after tearing them down, and pytest
then hands it the torn-down values (`The fixture value for "topk_session" is not available`);
a parameter of @pytest.mark.parametrize is such a fixture too. So each process builds one
session on first use, from the variables in topkspec.fuzz.suite_options.ENVIRONMENT, and keeps it while it lives.

Run them with plain pytest only to try them: `pytest --pyargs topkspec.suite` is the suite's
pytest form (verdicts, reports); these six share one source, so outside HypoFuzz, which gives
each test its own database key, they share a key in the example database.
"""
from __future__ import annotations

import atexit
import os

from hypothesis import given
from hypothesis import strategies as st

from topkspec.fuzz.suite_options import SuiteOptions
from topkspec.pytest_plugin import TopKSession
from topkspec.suite import group_settings

_SESSIONS: list = []  # this process's session, once built


def campaign_session() -> TopKSession:
    """This process's session, built from the environment on first use."""
    if not _SESSIONS:
        session = TopKSession(SuiteOptions.from_environment(os.environ))
        atexit.register(session.close)
        _SESSIONS.append(session)
    return _SESSIONS[0]


def _fuzz_test(group: str):
    @group_settings(group)
    @given(data=st.data())
    def test(data):
        campaign_session().check(group, data)
    return test


test_valid = _fuzz_test("valid")
test_nan = _fuzz_test("nan")
test_metamorphic = _fuzz_test("metamorphic")
test_invalid = _fuzz_test("invalid")
test_deterministic = _fuzz_test("deterministic")
test_self = _fuzz_test("self")
