"""The property suite as pytest tests, run against the target given by --topk-target:

    pytest --pyargs topkspec.suite --topk-target onnxruntime --hypothesis-profile ci

Each test is one property group (see topkspec.runner); the Hypothesis settings profile decides
the budget. With --topk-report-dir, a failing group writes its bug report folder there.
"""
import pytest

GROUPS = ("valid", "nan", "metamorphic", "invalid", "deterministic")


@pytest.mark.parametrize("group", GROUPS)
def test_property_group(topk_session, group):
    topk_session.run_group(group)
