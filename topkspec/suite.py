"""The property suite as pytest tests, run against the target given by --topk-target:

    pytest --pyargs topkspec.suite --topk-target onnxruntime --hypothesis-profile ci

Each test is one property group (see topkspec.runner); the Hypothesis settings profile's
max_examples is the budget of the whole suite run, shared among the groups as `topkspec fuzz`
shares it. With --topk-report-dir, a failing group writes its bug report folder there.
"""
import pytest

GROUPS = ("valid", "nan", "metamorphic", "invalid", "deterministic")


@pytest.mark.parametrize("group", GROUPS)
def test_property_group(topk_session, group, record_property):
    result = topk_session.run_group(group)
    record_property("topkspec_examples", result.examples[group])
    record_property("topkspec_budget", result.budgets[group])
