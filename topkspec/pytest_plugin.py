"""pytest plugin (entry point pytest11): --topk-target, --topk-spec, --topk-report-dir, the
Hypothesis settings profiles ci, dev and nightly, and the `topk_target` fixture.

It is loaded in every pytest run, so it imports nothing heavy at import time and does nothing
unless a test asks for its fixtures. The suite's own tests run with

    pytest --pyargs topkspec.suite --topk-target onnxruntime --hypothesis-profile ci

A failing suite test shows what was found (input, expected, actual, the rule's sentence) and,
with --topk-report-dir, the folder its bug report went to.
"""
from __future__ import annotations

import pytest

from topkspec.fuzz.suite_options import SuiteOptions
from topkspec.fuzz.suite_share import end_if_checked, passed_at_share


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
    group.addoption("--topk-known", nargs="?", const="", default=None, metavar="FILE",
                    help="known deviations (TOML) pass and are counted; without FILE, the target's shipped list")
    group.addoption("--topk-report-known", action="store_true", default=False,
                    help="shrink and report known deviations too (they still pass)")
    group.addoption("--topk-documents-only", action="store_true", default=False,
                    help="judge by the documents alone: our readings broken are notes, not failures")
    group.addoption("--topk-contract", default=None, metavar="FILE",
                    help="hold the target to this contract (TOML) instead of its own (topkspec fuzz --contract)")
    group.addoption("--topk-nan-order", choices=("largest", "totalorder", "smallest"), default=None,
                    help="check this NaN order (topkspec fuzz --nan-order); default: as the contract")
    group.addoption("--topk-fail-on", default=None, metavar="KINDS",
                    help="comma-separated kinds whose failures fail a test (topkspec fuzz --fail-on); "
                         "default: every bug kind (all but open)")
    group.addoption("--topk-max-examples", type=int, default=None, metavar="N",
                    help="the budget of the suite run (default: the Hypothesis profile's max_examples)")
    group.addoption("--topk-database", default=None, metavar="DIR",
                    help="example database for the suite's tests (a directory or redis://host:port/db), shared "
                         "by every process that names it (pytest-xdist workers too)")
    group.addoption("--topk-shards", type=int, default=1, metavar="N",
                    help="split each group's search into N tests, each with its share of the budget and a "
                         "search of its own, for pytest-xdist to spread (topkspec fuzz --workers N)")
    group.addoption("--topk-seed", type=int, default=None, metavar="S",
                    help="derandomize the suite's searches from S (each shard its own): the run repeats, and "
                         "Hypothesis neither saves to nor replays from the example database")
    group.addoption("--topk-max-axis-size", type=int, default=None, metavar="N",
                    help="the longest axis an input has (default 4096)")
    group.addoption("--topk-max-elements", type=int, default=None, metavar="N",
                    help="the most elements an input has (default 65536, or the longest axis)")


# The report folders made when the options were checked: taken away at the end if nothing failed.
_MADE_FOLDERS = pytest.StashKey[list]()
# The session the suite's tests ran, for the verdicts at the end.
_SESSION = pytest.StashKey[object]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # Registered (not loaded) before Hypothesis's own plugin loads --hypothesis-profile.
    from topkspec.fuzz import register_settings

    register_settings()
    _check_options(config)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    """--topk-max-examples, --topk-database, --topk-shards, --topk-seed: the loaded Hypothesis
    profile with the run's budget (each shard's share of it) and database, or derandomized,
    loaded after Hypothesis's own plugin loaded --hypothesis-profile (and before the suite is
    collected, whose tests read the budget)."""
    config = session.config
    budget, database = config.getoption("--topk-max-examples"), config.getoption("--topk-database")
    shards, seed = config.getoption("--topk-shards"), config.getoption("--topk-seed")
    if budget is None and database is None and shards == 1 and seed is None:
        return
    from hypothesis import settings

    changes = {}
    if budget is not None or shards > 1:
        changes["max_examples"] = -(-(budget or settings.default.max_examples) // shards)
    if database is not None:
        from topkspec.fuzz.database import open_database
        changes["database"] = open_database(database, named=True)
        changes["derandomize"] = False  # a database and derandomize exclude each other
    if seed is not None:  # the seed names each test (suite.pytest_generate_tests): derandomized, it repeats
        changes["database"], changes["derandomize"] = None, True
    settings.register_profile("topkspec-run", parent=settings.default, **changes)
    settings.load_profile("topkspec-run")


def pytest_unconfigure(config):
    made = config.stash.get(_MADE_FOLDERS, [])
    if made:
        from topkspec.errors import remove_if_empty
        remove_if_empty(made)


def _check_options(config) -> None:
    """A bad option stops the run at once with one message (suite_options.check_options)."""
    from topkspec.fuzz.suite_options import check_options

    try:
        config.stash[_MADE_FOLDERS] = check_options(config.getoption)
    except ValueError as exc:  # an unknown target's line has its suggestion (registry.unknown_target)
        raise pytest.UsageError(f"topkspec: {exc}") from None


class TopKSession:
    """The configured target, profile and report folder, shared by the suite's tests."""

    def __init__(self, options: SuiteOptions):
        from topkspec import spec
        from topkspec.targets.isolation import DEFAULT_TIMEOUT
        from topkspec.fuzz import resolve_target

        self.target_spec = options.target
        self.timeout = options.timeout or DEFAULT_TIMEOUT
        self.report_dir = options.report_dir
        self.strict_doc, self.at_share = options.strict_doc, options.at_share
        self.shapes = {"max_axis_size": options.max_axis_size, "max_elements": options.max_elements}
        self.target = resolve_target(self.target_spec, isolate=None, timeout=self.timeout)
        try:  # a worker that does not start says so at its first use, here
            self.profile = spec.parse_profile(options.spec or self.target.default_profile).name
            self.result = self._result(options)  # the whole session's, shared by its groups as in a fuzz run
            self.groups = self._plan()  # group -> (strategy, example, ctx) for the groups that apply
            self.shards = {}  # (group, shard) -> (strategy, example, ctx), shard 0's being self.groups
            self.started = set()  # the (group, shard) tests that checked an example
        except BaseException:
            self.target.close()
            raise
        self.reported: dict = {}  # failure key -> report folder
        from topkspec.fuzz.confirm import Keeper, replayer_for
        replayer, _ = replayer_for(self.target, self.target_spec, timeout=self.timeout, profile=self.profile,
                                   strict_doc=self.strict_doc, contract=self.result.contract)
        self.keeper = Keeper(self.result, replayer, self.report_dir)  # confirms each failure before it is kept

    def _result(self, options: SuiteOptions):
        from hypothesis import settings

        from topkspec.fuzz import RunResult
        from topkspec.spec.contracts import held_to
        from topkspec.spec.kinds import parse_fail_on

        known = options.known
        if known is not None:
            from topkspec.known import load_known
            known = load_known(known or None, self.target.name)
        return RunResult(target=self.target.name, version=self.target.version(), profile=self.profile,
                         settings=None, seed=None, max_examples=settings.default.max_examples,
                         strict_doc=self.strict_doc, known=known,
                         report_known=options.report_known, documents_only=options.documents_only,
                         computes=self.target.computes,
                         contract=held_to(self.target.contract, options.contract, options.nan_order),
                         fail_on=parse_fail_on(options.fail_on))

    def _plan(self) -> dict:
        """{group: (strategy, example, ctx)}: the example draws nothing, so the session may be
        built inside a test (the HypoFuzz form builds it in its first)."""
        from topkspec.fuzz import plan_groups
        from topkspec.fuzz.batches import example_strategy
        from topkspec.fuzz.config import shape_limits
        from topkspec.suite import group_budgets

        groups = {}
        self.bodies, self.reduced = {}, set()  # each group's checks, for the reducer; keys reduced
        self.shares = {}  # group -> the cases each of its tests checks
        budgets = group_budgets()
        shapes = shape_limits(None, self.shapes["max_axis_size"], self.shapes["max_elements"])
        for group, (strategy, body) in plan_groups(self.target, self.profile, strict_doc=self.strict_doc,
                                                   contract=self.result.contract, **shapes).items():
            self.result.budgets[group] = self.shares[group] = budgets[group]
            self.bodies[group] = body
            groups[group] = (example_strategy(group, strategy), *self._example(group))
        return groups

    def _example(self, group: str) -> tuple:
        """(example, ctx) of one test of `group`: lists of cases, as the command line draws them
        (fuzz.batches); the test asks for examples enough to hold its share of cases, and stops
        checking at that share (check sets it at the test's first example)."""
        from topkspec.fuzz import group_example

        return group_example(self.target, self.result, group, self.bodies[group], strict_doc=self.strict_doc)

    def planned(self, group: str, shard: int = 0):
        """(strategy, example, ctx) of the group's test `shard` (--topk-shards), or None where the
        group does not apply. Each shard searches on its own, with a share of the budget (the
        loaded profile's: pytest_sessionstart divides it), and its failures are kept in the
        session's one result, as the groups' are."""
        first = self.groups.get(group)
        if first is None or shard == 0:
            return first
        if (group, shard) not in self.shards:
            self.result.budgets[group] += self.shares[group]
            self.shards[(group, shard)] = (first[0], *self._example(group))
        return self.shards[(group, shard)]

    def too_little(self, group: str) -> str | None:
        """Why a group that passed is no pass: it judged too little (see RunResult.thin_groups)."""
        result = self.result
        for thin, judged, ran in result.thin_groups():
            if thin != group:
                continue
            reasons = "; ".join(f"{count} x {reason}" for reason, count in result.unsupported.most_common(3))
            return (f"topkspec: {group} judged too little: {judged} of its {ran} examples (unsupported, refused "
                    f"as allowed or not runnable){': ' + reasons if reasons else ''}")
        return None

    def check(self, group: str, data, shard: int = 0) -> None:
        """One example of a property group: draw it from `data` (the suite test's
        `st.data()`, so --hypothesis-show-statistics shows the strategies' coverage events)
        and check it; each new failure raises an exception of its own (see fuzz.context)."""
        planned = self.planned(group, shard)
        if planned is None:
            pytest.skip(f"{group} does not apply to {self.target.name} at {self.profile}")
        strategy, example, ctx = planned
        if (group, shard) in self.started:
            drawn = data.draw(strategy, label=group)
            if self.at_share == "end":
                end_if_checked(ctx)  # after a whole draw: see fuzz.suite_share
            return example(drawn)
        # The test's first example is checked whole (a failure saved in the database replays
        # there, however small the share); its share counts from the group's cases before it,
        # whichever of the group's tests ran first in this process (the HypoFuzz form has none).
        self.started.add((group, shard))
        limit = None if self.at_share is None else self.result.examples[group] + self.shares[group]
        ctx.case_limit = None
        try:
            example(data.draw(strategy, label=group))
        finally:
            ctx.case_limit = limit

    def failures_of(self, group: str, shard: int | None = None) -> list:
        """The failures of the group's test `shard` (None: of every shard run here), each shrunk
        and reduced, then confirmed in a fresh process (see fuzz.confirm) and kept in the
        session's result as a fuzz run keeps them."""
        from topkspec.fuzz.minimal import reduce_failure, reducible

        if shard is None:
            shards = [0] + [number for named, number in self.shards if named == group]
            return [failure for number in shards for failure in self.failures_of(group, number)]
        planned = self.planned(group, shard)
        if not planned:
            return []
        kept = planned[2].failures
        for key, failure in list(kept.items()):  # as small as the bug allows, once per failure
            if key not in self.reduced and reducible(failure):
                kept[key] = reduce_failure(self.target, self.result, failure, self.bodies[group],
                                           strict_doc=self.strict_doc)
            self.reduced.add(key)
        self.keeper(planned[2])
        unreproduced = {id(failure) for failure, _ in self.result.unreproduced}
        return [failure for failure in kept.values() if id(failure) not in unreproduced]

    def unreproduced_of(self, group: str) -> list:
        """[(failure, folder)]: the group's failures that failed in no fresh process (not filed)."""
        return [(failure, saved) for failure, saved in self.result.unreproduced if failure.group == group]

    def write_report(self, failure) -> str | None:
        """Write a failure's bug report (once per distinct failure) when a folder was asked for."""
        from topkspec.report import write_report

        if not self.report_dir:
            return None
        if failure.key not in self.reported:
            self.reported[failure.key] = write_report(failure, self.result, self.report_dir,
                                                      target_spec=self.target_spec,
                                                      timeout=max(self.timeout, getattr(self.target, "timeout", 0),
                                                                  getattr(self.target, "min_timeout", 0) or 0))
        return self.reported[failure.key]

    def close(self) -> None:
        if self.keeper.replayer is not None:
            self.keeper.replayer.close()
        self.target.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed suite test shows what was found and names its report folder."""
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or "topk_session" not in getattr(item, "funcargs", {}):
        return
    passed_at_share(report, call)
    params = getattr(getattr(item, "callspec", None), "params", {})
    group, shard = params.get("group"), params.get("topk_shard", 0)
    session = item.funcargs["topk_session"]
    if group in session.groups:  # recorded as record_property does (junitxml reads them at teardown)
        item.user_properties += [("topkspec_examples", session.result.examples[group]),
                                 ("topkspec_budget", session.result.budgets[group])]
    if report.passed and group:
        why = session.too_little(group)
        if why:  # a pass that judged (almost) nothing is no pass
            report.outcome, report.longrepr = "failed", why
        return
    if not report.failed or not group:
        return
    from topkspec.fuzz.confirm import not_filed_line
    from topkspec.fuzz.summary import failure_heading, kind_line
    from topkspec.report.summary import failure_lines
    from topkspec.spec.kinds import fails_run

    found = session.failures_of(group, shard)
    lines = [not_filed_line(failure, saved) for failure, saved in session.unreproduced_of(group)]
    result = session.result
    failing = [failure for failure in found if fails_run(result.kind(failure).id, result.fail_on)]
    only_found = call.excinfo is not None and _only_found(call.excinfo.value)
    if (lines and not found) or (found and not failing and only_found):
        # reproduced in no fresh process, or only failures of kinds --topk-fail-on leaves out
        report.outcome, report.longrepr = "passed", None
    for failure in found:
        lines.append(failure_heading(failure, session.result))
        lines += failure_lines(failure, indent="    ")
        lines.append(f"    {kind_line(failure, session.result)}")
        folder = session.write_report(failure)
        lines.append(f"bug report: {folder}" if folder else "bug report: none written (give --topk-report-dir DIR)")
    if lines:
        report.sections.append(("topkspec: what was found", "\n".join(lines)))
    if failing and only_found:
        # What the target did is all in the section above: the traceback would show the suite's
        # own code, and Hypothesis's advice to decorate a test function the user does not own.
        report.longrepr = (f"topkspec found {len(found)} distinct failure{'s' if len(found) > 1 else ''} in the "
                           f"{group} group: see 'topkspec: what was found' below")


def _only_found(exc) -> bool:
    """Whether `exc` is the failures a group found (one, or Hypothesis's group of several), and
    nothing else: a fault of the suite keeps its traceback."""
    from topkspec.fuzz.context import Found

    if isinstance(exc, BaseExceptionGroup):
        return all(_only_found(inner) for inner in exc.exceptions)
    return isinstance(exc, Found)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The verdict per rule the session reached, as `topkspec fuzz` prints it."""
    session = config.stash.get(_SESSION, None)
    if session is None:
        return
    from topkspec.fuzz.summary import kind_counts
    from topkspec.fuzz.verdicts import known_lines, verdict_lines

    for group in session.groups:
        session.failures_of(group)
    terminalreporter.section(f"topkspec verdicts: {session.target.name} at {session.profile}")
    for line in (verdict_lines(session.result, indent="") + known_lines(session.result, indent="  ")
                 + kind_counts(session.result)):
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def topk_session(request):
    """The suite's shared state: the target built from --topk-target, isolated when native."""
    from topkspec.targets.isolation import TargetCrashed, TargetHung

    try:
        session = TopKSession(SuiteOptions.from_pytest(request.config.getoption))
    except (ValueError, TargetCrashed, TargetHung) as exc:  # bad usage, or a target that cannot start
        raise pytest.UsageError(f"topkspec: {exc}") from None
    request.config.stash[_SESSION] = session
    yield session
    session.close()


@pytest.fixture(scope="session")
def topk_shard():
    """The suite test's shard where --topk-shards does not split it (suite.pytest_generate_tests)."""
    return 0


@pytest.fixture(scope="session")
def topk_target(topk_session):
    """The Target named by --topk-target (a worker-process proxy for native targets)."""
    return topk_session.target
