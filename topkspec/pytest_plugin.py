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
        self.target = resolve_target(self.target_spec, isolate=None, timeout=self.timeout)
        self.profile = spec.parse_profile(config.getoption("--topk-spec") or self.target.default_profile).name
        self.reports = 0
        self.reported = set()  # (target, rule, failure class) already written

    def run_group(self, group: str) -> None:
        """Check one property group under the loaded Hypothesis settings; on failure write
        its report (when asked) and fail the test."""
        from hypothesis import settings

        from topkspec.report import write_report
        from topkspec.runner import KeyedDatabase, RunResult, group_test, plan_groups

        groups = plan_groups(self.target, self.profile)
        if group not in groups:
            pytest.skip(f"{group} does not apply to {self.target.name} at {self.profile}")
        result = RunResult(target=self.target.name, version=self.target.version(), profile=self.profile,
                           settings_profile=None, seed=None, max_examples=settings.default.max_examples)
        strategy, body = groups[group]
        test, ctx = group_test(self.target, result, group, strategy, body)
        if settings.default.database is not None:
            key = f"{self.target.name}|{self.profile}|{group}"
            test = settings(database=KeyedDatabase(settings.default.database, key))(test)
        try:
            test()
        except Exception:
            if self.report_dir and ctx.last is not None and ctx.last.key not in self.reported:
                self.reported.add(ctx.last.key)
                self.reports += 1
                write_report(ctx.last, result, self.report_dir, target_spec=self.target_spec,
                             index=self.reports, timeout=self.timeout)
            raise

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
