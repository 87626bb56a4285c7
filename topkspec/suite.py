"""The property suite as pytest tests, run against the target given by --topk-target:

    pytest --pyargs topkspec.suite --topk-target onnxruntime --hypothesis-profile ci

Each test is one property group (see topkspec.runner); the Hypothesis settings profile decides
the budget. Each test draws its examples through `st.data()`, so --hypothesis-show-statistics
shows the coverage events of the strategies (operator, type, rank, axis and K position, ties).
A failing group shows what it found; with --topk-report-dir it writes its bug report folder.
"""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GROUPS = ("valid", "nan", "metamorphic", "invalid", "deterministic")


@pytest.mark.parametrize("group", GROUPS)
@settings(report_multiple_bugs=False, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                              HealthCheck.filter_too_much, HealthCheck.large_base_example])
@given(data=st.data())
def test_property_group(topk_session, group, data):
    topk_session.check(group, data)
