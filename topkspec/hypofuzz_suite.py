"""The suite's property groups as tests HypoFuzz can fuzz, configured by the environment:

    TOPKSPEC_TARGET=reference hypothesis fuzz -n 2 --no-dashboard -- --pyargs topkspec.hypofuzz_suite

(`topkspec fuzz --engine hypofuzz` runs that command line.) The tests are topkspec.suite's,
checked by the same session, but they take no fixture and no parameter: HypoFuzz 25.11.1 sets
a test's fixtures up again when a worker comes back to it, after tearing them down, and pytest
then hands it the torn-down values (`The fixture value for "topk_session" is not available`);
a parameter of @pytest.mark.parametrize is such a fixture too. So each process builds one
session on first use, from the variables in ENVIRONMENT, and keeps it while it lives.

Run them with plain pytest only to try them: `pytest --pyargs topkspec.suite` is the suite's
pytest form (verdicts, reports); these five share one source, so outside HypoFuzz, which gives
each test its own database key, they share a key in the example database.
"""
from __future__ import annotations

import atexit
import os

from hypothesis import given
from hypothesis import strategies as st

from topkspec.pytest_plugin import SuiteOptions, TopKSession
from topkspec.suite import group_settings

# variable -> (option of SuiteOptions, what it holds)
ENVIRONMENT = {
    "TOPKSPEC_TARGET": ("target", "the target (default onnxruntime)"),
    "TOPKSPEC_SPEC": ("spec", "the spec profile (default: the target's own)"),
    "TOPKSPEC_TIMEOUT": ("timeout", "seconds a call may take before it counts as a hang"),
    "TOPKSPEC_KNOWN": ("known", "a file of known deviations; empty: the target's shipped list"),
    "TOPKSPEC_STRICT_DOC": ("strict_doc", "1: the literal DirectML text (K less than the axis size)"),
    "TOPKSPEC_DOCUMENTS_ONLY": ("documents_only", "1: judge by the documents alone"),
    "TOPKSPEC_MAX_AXIS_SIZE": ("max_axis_size", "the longest axis an input has"),
    "TOPKSPEC_MAX_ELEMENTS": ("max_elements", "the most elements an input has"),
}
_KINDS = {"timeout": float, "max_axis_size": int, "max_elements": int, "strict_doc": bool, "documents_only": bool}


def options_from(environ) -> SuiteOptions:
    """The session's options from `environ`; ValueError names a variable that does not parse."""
    options = {}
    for variable, (option, _what) in ENVIRONMENT.items():
        if variable not in environ:
            continue
        text, kind = environ[variable], _KINDS.get(option, str)
        if kind is bool:
            if text not in ("", "0", "1"):
                raise ValueError(f"{variable} must be 0 or 1, got {text!r}")
            options[option] = text == "1"
            continue
        try:
            options[option] = kind(text)
        except ValueError:
            raise ValueError(f"{variable} must be a number, got {text!r}") from None
    return SuiteOptions(**options)


_SESSIONS: list = []  # this process's session, once built


def campaign_session() -> TopKSession:
    """This process's session, built from the environment on first use."""
    if not _SESSIONS:
        session = TopKSession(options_from(os.environ))
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
