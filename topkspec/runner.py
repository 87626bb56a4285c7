"""The fuzz run: Hypothesis drives the properties against one target and collects what broke.

A run is a few property groups, each its own Hypothesis test sharing the run's budget:

- valid: valid descriptors with NaN-free input, every result check (exact, order, ties, ...);
- nan: floating-point input with NaN, the policy-free checks;
- metamorphic: prefix, axis moves, TOP_K against TOP_K1;
- deterministic: the same input twice, bit for bit;
- invalid: descriptors that break a rule must be refused (targets that validate).

A group stops at its first failure, shrunk by Hypothesis; the runner keeps the failing example
(the last one that raised: Hypothesis replays the shrunk example last) and moves on.

Failures are kept in the example database (when there is one) and replay first next time. A
seed makes the search repeatable; Hypothesis saves nothing under a seed, so a seeded run
replays what unseeded runs saved, then searches from its seed.

    result = run_fuzz(RunConfig(target="onnxruntime", max_examples=300, seed=0))
"""
from __future__ import annotations

import math
import os
import sys
import time
import unittest
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from topkspec import dtypes, failures
from topkspec.failures import Violation
from topkspec.isolation import DEFAULT_TIMEOUT, IsolatedTarget, TargetCrashed, TargetHung
from topkspec.summary import Progress, format_summary  # noqa: F401  (the run's progress and summary)
from topkspec.targets.base import AdapterError, Rejected, Target, describe_error

DEFAULT_DATABASE = os.path.join(".topkspec", "examples")

# The rule an adapter error is filed under: no rule of the spec, since the runtime was not judged.
ADAPTER_RULE = "adapter"

# Share of the budget each group gets (renormalised over the groups that apply).
GROUP_WEIGHTS = {"valid": 0.40, "nan": 0.20, "metamorphic": 0.15, "invalid": 0.15, "deterministic": 0.10}

# Settings profiles (registered with Hypothesis by register_profiles, never loaded here).
PROFILES = {
    "ci": dict(derandomize=True, max_examples=200, deadline=None, database=None, print_blob=True),
    "dev": dict(max_examples=100, deadline=None),
    "nightly": dict(max_examples=5000, deadline=None),
}
# Profiles that keep failures in the example database unless the user names one.
PROFILES_WITH_DATABASE = ("dev", "nightly")

# A group that judged fewer than this share of its examples (at least one) judged too little to
# be a verdict: every other case was unsupported, refused as allowed, or not runnable.
MIN_JUDGED_SHARE = 0.10
# Exit code of a run that found nothing but judged too little (1 is "found something").
EXIT_VACUOUS = 3
EXIT_INTERRUPTED = 130

# Crashing examples restart the worker, hanging ones cost the time limit: shrink them a little.
MAX_CRASH_REPLAYS = 12
MAX_HANG_REPLAYS = 2


class RunError(ValueError):
    """A run that cannot start: bad profile, bad database, unavailable target."""


def register_profiles() -> None:
    """Register topkspec's Hypothesis settings profiles ci, dev and nightly (not loading any)."""
    for name, values in PROFILES.items():
        settings.register_profile(f"topkspec-{name}", **values)
        settings.register_profile(name, **values)


# -- the example database ---------------------------------------------------------------------

class KeyedDatabase(ExampleDatabase):
    """Another database with every key prefixed, so each (target, profile, group) keeps its own
    examples (every group runs the same inner test function, whose key would be shared)."""

    def __init__(self, inner: ExampleDatabase, prefix: str):
        super().__init__()
        self.inner = inner
        self.prefix = prefix.encode()

    def _key(self, key: bytes) -> bytes:
        return self.prefix + b"\0" + key

    def save(self, key, value):
        self.inner.save(self._key(key), value)

    def fetch(self, key):
        return self.inner.fetch(self._key(key))

    def delete(self, key, value):
        self.inner.delete(self._key(key), value)

    def move(self, src, dest, value):
        self.inner.move(self._key(src), self._key(dest), value)


def open_database(where: str | None):
    """An example database: None for none, a redis:// URL, or a directory."""
    if where is None:
        return None
    if where.startswith(("redis://", "rediss://", "unix://")):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError as exc:
            raise RunError(f"--database {where}: the redis package is needed ({exc})") from None
        try:
            client = redis.Redis.from_url(where)
            client.ping()
        except (ValueError, redis.RedisError) as exc:
            raise RunError(f"--database {where}: {exc}") from None
        return RedisExampleDatabase(client)
    return DirectoryBasedExampleDatabase(where)


# -- what a run produces ----------------------------------------------------------------------

@dataclass
class Failure:
    """One distinct failure: the shrunk example and how it was observed."""

    target: str
    group: str
    violation: Violation
    case: object  # the judged Case of the example
    x: np.ndarray | None
    calls: list  # [(case, x)] every target call of the example, in order
    outputs: list  # [(values, indices) or None] per call
    draw: object = None  # the InvalidDraw for a rejection failure
    report_dir: str | None = None

    @property
    def rule(self) -> str:
        """The rule the failure is filed under: for an accepted invalid descriptor, the
        descriptor rule it breaks; otherwise the first rule the violation names."""
        rules = self.violation.rules
        if self.failure_class == failures.ACCEPTS_INVALID and len(rules) > 1:
            return rules[1]
        return rules[0]

    @property
    def failure_class(self) -> str:
        return self.violation.failure_class

    @property
    def key(self) -> tuple:
        return (self.target, self.rule, self.failure_class)


@dataclass
class RunResult:
    target: str
    version: str
    profile: str
    settings_profile: str | None
    seed: int | None
    max_examples: int
    examples: Counter = field(default_factory=Counter)  # per group
    checks: Counter = field(default_factory=Counter)  # examples per property
    coverage: Counter = field(default_factory=Counter)  # (dtype, rank)
    unsupported: Counter = field(default_factory=Counter)  # reason
    not_runnable: int = 0  # invalid descriptors no Case carries (judged by `topkspec validate`)
    refused_k_at_axis_size: int = 0  # DirectML K equal to the axis size refused: allowed, not judged
    strict_doc: bool = False
    failures: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # (group, message): the suite itself failed
    seconds: float = 0.0
    timing: Counter = field(default_factory=Counter)  # target_s, checks_s, body_s
    notes: list = field(default_factory=list)  # lines about how the run ran (isolation, ...)
    interrupted: bool = False  # stopped by Ctrl-C: what it holds is the run so far
    judged: Counter = field(default_factory=Counter)  # per group: examples whose verdict counts
    budgets: dict = field(default_factory=dict)  # per group: its share of the budget

    @property
    def total_examples(self) -> int:
        return sum(self.examples.values())

    @property
    def ok(self) -> bool:
        return not self.failures and not self.errors

    def thin_groups(self) -> list:
        """[(group, judged, examples)] for the groups that judged too little: fewer than
        MIN_JUDGED_SHARE of the examples they ran (at most their budget), and at least one. A
        group that found a failure or failed itself is not thin: it said something."""
        said = {f.group for f in self.failures} | {group for group, _ in self.errors}
        thin = []
        for group, budget in self.budgets.items():
            if group in said:
                continue
            ran = min(self.examples[group], budget) if budget else self.examples[group]
            if self.judged[group] < max(1, math.ceil(MIN_JUDGED_SHARE * ran)):
                thin.append((group, self.judged[group], ran))
        return thin

    @property
    def vacuous(self) -> bool:
        """True when the run judged nothing, or too little in some group, to be a verdict."""
        return bool(self.thin_groups())

    @property
    def exit_code(self) -> int:
        """0 every property held, 1 something was found, 3 too little was judged to say; 130
        (as for SIGINT) when Ctrl-C stopped the run, whatever it had found."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        if not self.ok:
            return 1
        return EXIT_VACUOUS if self.vacuous else 0

    def failures_by_class(self) -> Counter:
        return Counter(f.failure_class for f in self.failures)


@dataclass
class RunConfig:
    target: object = "onnxruntime"  # a name, import string or Target
    profile: str | None = None  # spec profile; None: the target's default
    max_examples: int | None = None  # budget of the whole run; None: the settings profile's
    seed: int | None = None
    settings_profile: str | None = None  # ci, dev, nightly
    database: str | None = None  # directory or redis:// URL; None: the profile's choice
    report_dir: str | None = None
    isolate: bool | None = None  # None: isolate native targets
    timeout: float = DEFAULT_TIMEOUT
    groups: tuple | None = None  # restrict to these groups
    progress: object = None  # a stream for progress lines, or None
    shrink: bool = True  # False: report failures as found (benchmarks measure the search alone)
    strict_doc: bool = False  # the literal DirectML text: K must be less than the axis size


# -- the run ----------------------------------------------------------------------------------

class _CtrlC:
    """Notes a Ctrl-C as well as raising KeyboardInterrupt: Hypothesis may fold an interrupt
    that lands while it replays a failure into an error of its own (a flaky failure), and the
    run must still stop. Installed in the main thread only (elsewhere it does nothing)."""

    def __init__(self):
        self.pressed = False
        self.previous = None

    def _handler(self, signum, frame):
        self.pressed = True
        raise KeyboardInterrupt

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handler)
            if self.previous is signal.SIG_IGN:  # Ctrl-C is off here (a background job): keep it off
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                self.previous = None
        return self

    def __exit__(self, *exc):
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def _check_names() -> dict:
    from topkspec.properties import CATALOGUE
    return {prop.check: prop.name for prop in CATALOGUE}


def resolve_target(spec, *, isolate: bool | None, timeout: float, notes: list | None = None) -> Target:
    """The target to drive: built from `spec`, in a worker process when it is native (plain
    functions count as native: they may wrap native code) or when asked. Under `auto`
    (isolate=None) a Target object that cannot be sent to a worker (a lambda, a local
    function) runs in this process, and a line saying so goes to `notes`."""
    from topkspec.targets.base import availability
    from topkspec.targets.registry import get_target

    target = get_target(spec)
    usable, why = availability(target)
    if not usable:
        raise RunError(f"target {target.name} cannot run here: {why}")
    auto = isolate is None
    if auto:  # a target that runs its own worker process is not wrapped in another
        isolate = target.native and not getattr(target, "isolates_itself", False)
    if not isolate:
        if hasattr(target, "set_timeout"):
            target.set_timeout(timeout)
        return target
    if isinstance(spec, str):
        target.close()
        return IsolatedTarget(spec, timeout=timeout)
    try:
        isolated = IsolatedTarget(target, timeout=timeout)
    except (TargetCrashed, TargetHung):
        raise
    except Exception as exc:
        if not auto:
            raise RunError(f"target {target.name} cannot run in a worker process: {type(exc).__name__}: "
                           f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}") from None
        if notes is not None:
            notes.append(f"{target.name} runs in this process, not isolated: it cannot be sent to a worker "
                         f"process ({type(exc).__name__}); name it by import string to isolate it")
        return target
    target.close()
    return isolated


class RefusedKAtAxisSize(Exception):
    """A target refused a DirectML K equal to the axis size: allowed (see
    properties.may_refuse), so the example is not judged."""


class _Context:
    """State shared by a group's examples: the target, counters, and the last failure seen."""

    def __init__(self, target: Target, result: RunResult, group: str, strict_doc: bool = False):
        self.target = target
        self.result = result
        self.group = group
        self.strict_doc = strict_doc
        self.calls: list = []
        self.outputs: list = []
        self.last: Failure | None = None
        self.fatal = Counter()  # crash/hang examples seen in this group
        self.halted = False  # a crash or hang an earlier group already reported: stop at once
        self.check_names = _check_names()

    def judged(self, case):
        return case.with_(index_dtype=self.target.index_dtype) if self.target.index_dtype else case

    def _guard(self, fn, case, *, rule: str):
        """fn() with a crash or hang turned into a Violation of `rule`, and an exception that
        is not a refusal (Rejected) into an adapter error."""
        try:
            return fn()
        except Rejected:
            raise
        except Exception as exc:
            if not isinstance(exc, (TargetCrashed, TargetHung)):
                raise self._adapter_error(case, exc) from None
            kind = failures.CRASH if isinstance(exc, TargetCrashed) else failures.HANG
            self.fatal[kind] += 1
            if any(f.key == (self.target.name, rule, kind) for f in self.result.failures):
                self.halted = True
            what = "crashed" if kind == failures.CRASH else "hung"
            raise Violation(rule, f"{case.describe()}: the target {what}: {exc}",
                            failure_class=kind, expected="a result", actual=str(exc)) from None

    def _adapter_error(self, case, exc) -> Violation:
        """The adapter broke (AdapterError, or any other exception but Rejected): reported as
        its own class under the pseudo-rule "adapter", never as a refusal or a runtime fault."""
        text = str(exc) if isinstance(exc, AdapterError) else describe_error(exc)
        return Violation(ADAPTER_RULE, f"{case.describe()}: the adapter broke (not a refusal, and no verdict "
                                       f"on the runtime): {text}",
                         failure_class=failures.ADAPTER_ERROR, expected="a result or a refusal (Rejected)",
                         actual=text)

    def unsupported(self, case) -> str | None:
        start = time.perf_counter()  # asking may build a session: the target's time
        try:
            return self._guard(lambda: self.target.supports(case), case, rule="out.valid_accepted")
        except Rejected as exc:  # supports() answers; it does not refuse
            raise self._adapter_error(case, exc) from None
        finally:
            self.result.timing["target_s"] += time.perf_counter() - start

    def raw_run(self, case, x, *, rule="out.valid_accepted"):
        """The target's answer; Rejected propagates; crash and hang raise Violations."""
        self.calls.append((case, x))
        self.outputs.append(None)
        start = time.perf_counter()
        try:
            result = self._guard(lambda: self.target.run(case, x), case, rule=rule)
        finally:
            self.result.timing["target_s"] += time.perf_counter() - start
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise self._adapter_error(case, AdapterError(
                f"{self.target.name}.run() returned {type(result).__name__}, not a pair (values, indices)"))
        values, indices = result
        values, indices = np.asarray(values), np.asarray(indices)
        self.outputs[-1] = (values, indices)
        return values, indices

    def run(self, case, x):
        """A valid case's result; a refusal is a Violation (rejects a valid descriptor)."""
        from topkspec.properties import may_refuse

        try:
            return self.raw_run(case, x)
        except Rejected as exc:
            if may_refuse(case):
                raise RefusedKAtAxisSize(str(exc)) from None
            raise Violation("out.valid_accepted",
                            f"out.valid_accepted: {case.describe()} is valid but was refused: {exc}",
                            failure_class=failures.REJECTS_VALID, expected="a result",
                            actual=str(exc)) from None

    def count(self, name: str) -> None:
        self.result.checks[name] += 1

    def checking(self, check, *args):
        start = time.perf_counter()
        try:
            check(*args)
        finally:
            self.result.timing["checks_s"] += time.perf_counter() - start

    def stopped(self) -> bool:
        return (self.halted or self.fatal[failures.CRASH] >= MAX_CRASH_REPLAYS
                or self.fatal[failures.HANG] >= MAX_HANG_REPLAYS)


# -- the groups: strategy and body ------------------------------------------------------------

def _float_types(profile) -> list[str]:
    from topkspec import spec

    names = set()
    for op in spec.ops(profile):
        names.update(spec.value_types(profile, op))
    return sorted(t for t in names if dtypes.numpy_dtype(t).kind == "f")


def _result_body(ctx: _Context, data) -> None:
    from topkspec.properties import result_checks

    case, x = data
    judged = ctx.judged(case)
    reason = ctx.unsupported(judged)
    if reason:
        ctx.result.unsupported[reason] += 1
        return False
    ctx.count("accepts_valid")
    try:
        values, indices = ctx.run(judged, x)
    except RefusedKAtAxisSize:
        ctx.result.refused_k_at_axis_size += 1
        return False
    ctx.result.coverage[(judged.dtype, judged.rank)] += 1
    for check in result_checks(judged, x):
        ctx.count(ctx.check_names.get(check, check.__name__))
        ctx.checking(check, judged, x, values, indices)
    return True


def _metamorphic_body(checks):
    from topkspec.properties import check_prefix

    def body(ctx: _Context, data) -> None:
        case, x = data
        judged = ctx.judged(case)
        reason = ctx.unsupported(judged)
        if reason:
            ctx.result.unsupported[reason] += 1
            return False
        ctx.result.coverage[(judged.dtype, judged.rank)] += 1
        compared = False  # some check called the target and compared (others may not apply)
        for check in checks:
            ctx.count(ctx.check_names.get(check, check.__name__))
            options = {}
            if check is check_prefix and judged.family == "dml" and ctx.strict_doc:
                options["max_k"] = judged.axis_size - 1  # the literal text: K below the axis size
            calls = len(ctx.calls)
            try:
                check(judged, x, ctx.run, **options)
            except RefusedKAtAxisSize:
                ctx.result.refused_k_at_axis_size += 1
                if not (check is check_prefix and judged.k < judged.axis_size - 1):
                    continue
                calls = len(ctx.calls)
                check(judged, x, ctx.run, max_k=judged.axis_size - 1)  # the prefix below it
            compared = compared or len(ctx.calls) > calls
        return compared
    return body


def _invalid_body(ctx: _Context, draw) -> None:
    from topkspec.properties import check_rejects_invalid

    if draw.case is None:
        if _descriptor_verdict(ctx, draw) is not None:
            return True
        ctx.result.not_runnable += 1  # a broken tensor field, say: only `validate` judges it
        return False
    # A case the target does not implement at all (no kernel for the type) proves nothing
    # when refused: the refusal must come from the rule the draw breaks.
    reason = ctx.unsupported(ctx.judged(draw.case))
    if reason:
        ctx.result.unsupported[reason] += 1
        return False
    fatal = []

    def run(case, x):
        try:
            return ctx.raw_run(ctx.judged(case), x, rule="out.invalid_rejected")
        except Violation as violation:  # a crash or hang: not a refusal
            fatal.append(violation)
            raise

    ctx.count("rejects_invalid")
    ctx.result.coverage[(draw.case.dtype, draw.case.rank)] += 1
    check_rejects_invalid(draw, run)
    if fatal:
        raise fatal[0]
    return True


def _descriptor_verdict(ctx: _Context, draw):
    """For a target that takes descriptors as written (`check_descriptor`, e.g. directml): its
    verdict on a broken descriptor no Case carries; None when it cannot be asked."""
    check = getattr(ctx.target, "check_descriptor", None)
    if check is None or not set(draw.rules) & set(getattr(ctx.target, "descriptor_rules", ())):
        return None
    start = time.perf_counter()
    try:
        verdict = ctx._guard(lambda: check(draw.descriptor), draw.case or _DescriptorOnly(draw),
                             rule="out.invalid_rejected")
    finally:
        ctx.result.timing["target_s"] += time.perf_counter() - start
    if verdict is None:
        return None
    ctx.count("rejects_invalid")
    if verdict["accepted"]:
        rules = ("out.invalid_rejected",) + tuple(sorted(draw.rules))
        raise Violation(rules, f"out.invalid_rejected: the descriptor breaks {', '.join(sorted(draw.rules))} "
                               f"({draw.how}) but was accepted ({verdict['detail']})",
                        failure_class=failures.ACCEPTS_INVALID, expected="a refusal", actual=verdict["detail"])
    return verdict


class _DescriptorOnly:
    """Stands for a Case where a broken descriptor cannot be read as one."""

    def __init__(self, draw):
        self.draw = draw

    def describe(self) -> str:
        return self.draw.describe()

    def to_dict(self) -> dict:
        return {"profile": self.draw.profile, "descriptor": self.draw.descriptor}


def _case_of(draw):
    """The Case a broken descriptor describes (its input, axis, K), else a stand-in naming it."""
    from topkspec import spec

    try:
        return spec.case_from_descriptor(draw.descriptor, draw.profile)
    except ValueError:
        return _DescriptorOnly(draw)


def plan_groups(target: Target, profile: str, *, strict_doc: bool = False) -> dict:
    """{group: (strategy, body)} for the groups that apply to the target at `profile`.
    strict_doc: the literal DirectML text, so a K equal to the axis size is invalid (valid
    cases draw K below it, and the invalid group holds every target to refusing it)."""
    from topkspec.properties import check_axis_moves, check_deterministic, check_prefix, check_topk_equals_topk1
    from hypothesis import strategies as st

    from topkspec.strategies import breakable_rules, case_and_input, invalid_descriptors
    from topkspec.strategies.invalid import IMPOSSIBLE_RULES, carries_cases
    from topkspec import spec

    strict = dict(strict_doc=strict_doc)
    groups = {"valid": (case_and_input(profile, allow_nan=False, **strict), _result_body)}
    floats = _float_types(profile)
    if floats:
        groups["nan"] = (case_and_input(profile, dtypes=floats, allow_nan=True, require_nan=True, **strict),
                         _result_body)
    groups["metamorphic"] = (case_and_input(profile, allow_nan=True, **strict),
                             _metamorphic_body([check_prefix, check_axis_moves, check_topk_equals_topk1]))
    # The rules in force under the strict_doc setting; only breakages a call can carry; table
    # rules only for targets that know the tables (and the literal K bound, when asked for,
    # for every target: it replaces the K bound every target is held to).
    tables = spec.parse_profile(profile).family in target.validates_tables
    by_descriptor = set(getattr(target, "descriptor_rules", ()))  # reach the target without a Case
    breakable = [rule for rule in breakable_rules(profile, strict_doc=strict_doc)
                 if (carries_cases(profile, rule) or rule in by_descriptor)
                 and (tables or rule in IMPOSSIBLE_RULES or (strict_doc and rule == "dml.k.max_strict"))]
    if target.validates and breakable:
        groups["invalid"] = (st.one_of([invalid_descriptors(profile, rule) for rule in breakable]), _invalid_body)
    groups["deterministic"] = (case_and_input(profile, allow_nan=True, **strict),
                               _metamorphic_body([check_deterministic]))
    return groups


def split_budget(total: int, groups) -> dict:
    """The run's budget shared among `groups` by GROUP_WEIGHTS, at least one example each."""
    weights = {g: GROUP_WEIGHTS.get(g, 0.1) for g in groups}
    scale = sum(weights.values())
    shares = {g: max(1, int(total * w / scale)) for g, w in weights.items()}
    first = next(iter(shares))
    shares[first] += max(0, total - sum(shares.values()))  # rounding leftovers to the first
    return shares


def _settings_for(config: RunConfig):
    """(base settings, database location) from the settings profile and the options."""
    register_profiles()
    name = config.settings_profile
    if name is not None and name not in PROFILES:
        raise RunError(f"unknown settings profile {name!r}: choose from {', '.join(PROFILES)}")
    values = dict(PROFILES.get(name or "dev"))
    database = config.database
    if database is None and (name or "dev") in PROFILES_WITH_DATABASE:
        database = DEFAULT_DATABASE
    return values, database


def _group_settings(config: RunConfig, values: dict, database, examples: int, key: str):
    return settings(
        max_examples=examples, deadline=None,
        # a database (asked for) and derandomize exclude each other; --seed still repeats
        derandomize=values.get("derandomize", False) and database is None,
        database=None if database is None else KeyedDatabase(database, key),
        suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
        print_blob=values.get("print_blob", False),
        # Hypothesis's own lines (a seed to add "to this test") name a test the user does not
        # have: the summary and the reports say what happened instead.
        verbosity=Verbosity.quiet,
        phases=tuple(Phase) if config.shrink else tuple(p for p in Phase if p != Phase.shrink))


def run_fuzz(config: RunConfig) -> RunResult:
    """Fuzz one target; see the module text. Raises RunError/TargetError for bad usage."""
    from topkspec import spec

    values, database_at = _settings_for(config)
    budget = config.max_examples if config.max_examples is not None else values["max_examples"]
    if budget < 1:
        raise RunError(f"--max-examples must be at least 1, got {budget}")
    database = open_database(database_at)
    notes: list = []
    target = resolve_target(config.target, isolate=config.isolate, timeout=config.timeout, notes=notes)
    try:
        profile = spec.parse_profile(config.profile or target.default_profile).name
        if not spec.ops(profile):
            raise RunError(f"no TopK operator exists at {profile} (the earliest is TOP_K, at DirectML feature "
                           f"level 2_0)")
        result = RunResult(target=target.name, version=target.version(), profile=profile,
                           settings_profile=config.settings_profile, seed=config.seed, max_examples=budget,
                           notes=notes, strict_doc=config.strict_doc)
        groups = plan_groups(target, profile, strict_doc=config.strict_doc)
        if config.groups is not None:
            groups = {g: v for g, v in groups.items() if g in config.groups}
        progress = Progress(config.progress, budget, label=target.name)
        start = time.perf_counter()
        result.budgets = split_budget(budget, groups)
        with _CtrlC() as ctrl_c:
            try:
                for group, examples in result.budgets.items():
                    _run_group(target, result, group, *groups[group], _group_settings(config, values, database,
                               examples, f"{target.name}|{profile}|{group}"), config.seed, progress,
                               strict_doc=config.strict_doc, ctrl_c=ctrl_c)
                    if ctrl_c.pressed:  # an interrupt something swallowed: stop all the same
                        raise KeyboardInterrupt
                    progress.update(result, group, force=True)
            except KeyboardInterrupt:  # Ctrl-C: stop, keep what was found, report it
                result.interrupted = True
        result.seconds = time.perf_counter() - start
    finally:
        target.close()
    if config.report_dir:
        from topkspec.report import write_reports
        write_reports(result, config.report_dir, target_spec=config.target, timeout=config.timeout)
    return result


def group_test(target, result, group, strategy, body, *, progress=None, strict_doc=False):
    """(test, ctx): a Hypothesis test (not yet given settings) checking `group` against the
    target; after it fails, ctx.last holds the shrunk failure."""
    ctx = _Context(target, result, group, strict_doc=strict_doc)

    def example(data):
        ctx.calls, ctx.outputs = [], []
        if ctx.stopped():
            return  # enough crashing/hanging replays: keep the smallest one seen
        result.examples[group] += 1
        if progress is not None:
            progress.update(result, group)
        start = time.perf_counter()
        try:
            if body(ctx, data):
                result.judged[group] += 1
        except Violation as violation:
            result.judged[group] += 1
            draw = data if group == "invalid" else None
            case = draw.case if draw is not None else ctx.judged(data[0])
            if case is None:  # a descriptor the target judged as written
                case = _case_of(draw)
            x = ctx.calls[0][1] if ctx.calls else (None if draw is not None else data[1])
            ctx.last = Failure(target=target.name, group=group, violation=violation, case=case, x=x,
                               calls=list(ctx.calls), outputs=list(ctx.outputs), draw=draw)
            raise
        finally:
            result.timing["body_s"] += time.perf_counter() - start

    return given(strategy)(example), ctx


def record_failure(result: RunResult, failure: Failure) -> bool:
    """Add a failure unless one with its key (target, rule, class) is there; True if added."""
    if any(f.key == failure.key for f in result.failures):
        return False
    result.failures.append(failure)
    return True


def _run_group(target, result, group, strategy, body, group_settings, seed, progress, *, strict_doc=False,
               ctrl_c=None) -> None:
    """Run one group; with both a seed and a database, first replay the saved failures
    (Hypothesis's @seed turns the database off for the seeded search)."""
    passes = [group_settings]
    if seed is not None and group_settings.database is not None:
        passes = [settings(group_settings, phases=(Phase.reuse, Phase.shrink)), group_settings]
    for index, pass_settings in enumerate(passes):
        test, ctx = group_test(target, result, group, strategy, body, progress=progress, strict_doc=strict_doc)
        test = settings(pass_settings)(test)
        if seed is not None and index == len(passes) - 1:
            test = hypothesis_seed(seed)(test)
        group_start = time.perf_counter()
        try:
            test()
        except KeyboardInterrupt:
            if ctx.last is not None:  # found before the interrupt (perhaps not fully shrunk)
                record_failure(result, ctx.last)
            raise
        except Exception as exc:  # the group's shrunk failure (or Hypothesis reporting it flaky)
            if isinstance(exc, unittest.SkipTest) and index < len(passes) - 1:
                continue  # nothing saved for this group: on to the seeded search
            if ctx.last is not None:
                record_failure(result, ctx.last)
            elif not (ctrl_c and ctrl_c.pressed):
                result.errors.append((group, f"{type(exc).__name__}: {exc}"))
            if ctrl_c and ctrl_c.pressed:  # the interrupt, folded by Hypothesis into its own error
                raise KeyboardInterrupt from None
            return
        finally:
            result.timing["group_s"] += time.perf_counter() - group_start
