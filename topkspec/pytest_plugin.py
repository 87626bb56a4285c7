"""pytest plugin (entry point pytest11): --topk-target, --topk-spec, --topk-report-dir, the
Hypothesis settings profiles ci, dev and nightly, and the `topk_target` fixture.

It is loaded in every pytest run, so it imports nothing heavy at import time and does nothing
unless a test asks for its fixtures. The suite's own tests run with

    pytest --pyargs topkspec.suite --topk-target onnxruntime --hypothesis-profile ci
"""
from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("topkspec", "TopK conformance (topkspec)")
    group.addoption("--topk-target", default=None,
                    help="target the topkspec suite runs on: a built-in name, package.module:attr "
                         "or path/file.py:attr (default onnxruntime)")
    group.addoption("--topk-spec", default=None,
                    help="spec profile to judge by (dml:3.1, onnx:11, ...); default: the target's own")
    group.addoption("--topk-report-dir", default=None,
                    help="write a bug report folder for each failure here")
    group.addoption("--topk-timeout", type=float, default=None,
                    help="seconds a call may take before it counts as a hang (isolated targets)")
    group.addoption("--topk-strict-doc", action="store_true", default=False,
                    help="apply the literal DirectML text: K must be less than the axis size")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # Registered (not loaded) before Hypothesis's own plugin loads --hypothesis-profile.
    from topkspec.runner import register_profiles

    register_profiles()
    _check_options(config)


def _check_options(config) -> None:
    """A bad --topk-target or --topk-spec stops the run at once with one message."""
    name, profile = config.getoption("--topk-target"), config.getoption("--topk-spec")
    if name is None and profile is None:
        return
    try:
        if name is not None:
            from topkspec.targets.registry import get_target
            get_target(name).close()
        if profile is not None:
            from topkspec import spec
            spec.parse_profile(profile)
    except ValueError as exc:
        raise pytest.UsageError(f"topkspec: {exc}") from None


class TopKSession:
    """The configured target, profile and report folder, shared by the suite's tests."""

    def __init__(self, config):
        from topkspec import spec
        from topkspec.isolation import DEFAULT_TIMEOUT
        from topkspec.runner import resolve_target

        self.target_spec = config.getoption("--topk-target") or "onnxruntime"
        self.timeout = config.getoption("--topk-timeout") or DEFAULT_TIMEOUT
        self.report_dir = config.getoption("--topk-report-dir")
        self.strict_doc = config.getoption("--topk-strict-doc")
        self.target = resolve_target(self.target_spec, isolate=None, timeout=self.timeout)
        self.profile = spec.parse_profile(config.getoption("--topk-spec") or self.target.default_profile).name
        self.reports = 0
        self.reported = set()  # (target, rule, failure class) already written

    def run_group(self, group: str):
        """Check one property group under the loaded Hypothesis settings, whose max_examples
        is the budget of the whole suite run, shared among the groups as `topkspec fuzz`
        shares it; on failure write its report (when asked) and fail the test. Returns the
        group's RunResult."""
        from hypothesis import settings

        from topkspec.reports import write_report
        from topkspec.runner import KeyedDatabase, RunResult, group_test, plan_groups, split_budget

        groups = plan_groups(self.target, self.profile, strict_doc=self.strict_doc)
        if group not in groups:
            pytest.skip(f"{group} does not apply to {self.target.name} at {self.profile}")
        budget = settings.default.max_examples
        share = split_budget(budget, list(groups))[group]
        result = RunResult(target=self.target.name, version=self.target.version(), profile=self.profile,
                           settings_profile=None, seed=None, max_examples=budget)
        result.budgets[group] = share
        strategy, body = groups[group]
        test, ctx = group_test(self.target, result, group, strategy, body, strict_doc=self.strict_doc)
        database = None
        if settings.default.database is not None:
            key = f"{self.target.name}|{self.profile}|{group}"
            database = KeyedDatabase(settings.default.database, key)
        test = settings(settings.default, max_examples=share, database=database)(test)
        try:
            test()
        except Exception:
            if self.report_dir and ctx.last is not None and ctx.last.key not in self.reported:
                self.reported.add(ctx.last.key)
                self.reports += 1
                write_report(ctx.last, result, self.report_dir, target_spec=self.target_spec,
                             index=self.reports, timeout=self.timeout)
            raise
        for _, judged, ran in result.thin_groups():  # a pass that judged (almost) nothing is no pass
            reasons = "; ".join(f"{count} x {reason}" for reason, count in result.unsupported.most_common(3))
            pytest.fail(f"topkspec: {group} judged too little: {judged} of its {ran} examples "
                        f"(unsupported, refused as allowed or not runnable){': ' + reasons if reasons else ''}",
                        pytrace=False)
        return result

    def close(self) -> None:
        self.target.close()


@pytest.fixture(scope="session")
def topk_session(request):
    """The suite's shared state: the target built from --topk-target, isolated when native."""
    try:
        session = TopKSession(request.config)
    except ValueError as exc:
        raise pytest.UsageError(f"topkspec: {exc}") from None
    yield session
    session.close()


@pytest.fixture(scope="session")
def topk_target(topk_session):
    """The Target named by --topk-target (a worker-process proxy for native targets)."""
    return topk_session.target
