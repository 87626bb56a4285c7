"""The property suite as pytest tests, run against the target given by --topk-target:

    pytest --pyargs topkspec.suite --topk-target onnxruntime --hypothesis-profile ci

Each test is one property group (see topkspec.fuzz.groups). The Hypothesis settings profile's
max_examples is the budget of the whole suite run, shared among the groups as `topkspec fuzz`
shares it (ci: 200 a run). Each test draws its examples through `st.data()`, so
--hypothesis-show-statistics shows the coverage events of the strategies (operator, type, rank,
axis and K position, ties). A group's examples are lists of cases where the command line's
are (fuzz.batches), each case counted in its share of the budget. A failing group shows what
it found; with --topk-report-dir it writes its bug report folder. A group that judged too
little (every case unsupported, say) fails too.
"""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GROUPS = ("valid", "nan", "metamorphic", "invalid", "deterministic", "self")


def group_budgets() -> dict:
    """{group: its share of the loaded profile's max_examples}, as `topkspec fuzz` splits a run's
    budget. Shared among all six groups: a group that does not apply to the target is skipped
    and its share is not spent."""
    from topkspec.fuzz import split_budget

    return split_budget(settings.default.max_examples, GROUPS)


def group_settings(group: str) -> settings:
    """The Hypothesis settings of a group's test: examples enough for its share of the budget
    (a batched group's example is a list of cases: fuzz.batches), every distinct failure
    reported, and no health check that slow targets or large inputs would trip."""
    from topkspec.fuzz.batches import searches_for

    examples = searches_for(group, group_budgets()[group], topped_up=False)
    return settings(max_examples=examples, report_multiple_bugs=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much, HealthCheck.large_base_example])


def pytest_generate_tests(metafunc):
    """--topk-shards N: each group's test N times, for pytest-xdist to spread over its workers.
    Hypothesis's pytest plugin keys a parametrized test's search by its node id, so each shard
    searches from a seed of its own (from --topk-seed, which its id names, where one is given)."""
    shards, seed = metafunc.config.getoption("--topk-shards"), metafunc.config.getoption("--topk-seed")
    if "topk_shard" in metafunc.fixturenames and (shards > 1 or seed is not None):
        prefix = "" if seed is None else f"seed{seed}-"
        metafunc.parametrize("topk_shard", range(shards), ids=[f"{prefix}shard{n}" for n in range(shards)],
                             scope="session")  # not reset per example: Hypothesis would refuse it


def _group_test(group: str):
    @pytest.mark.parametrize("group", [group])
    @group_settings(group)
    @given(data=st.data())
    def test_property_group(topk_session, group, topk_shard, data):
        topk_session.check(group, data, topk_shard)
    return test_property_group


test_valid = _group_test("valid")
test_nan = _group_test("nan")
test_metamorphic = _group_test("metamorphic")
test_invalid = _group_test("invalid")
test_deterministic = _group_test("deterministic")
test_self = _group_test("self")
