"""The fuzz run: Hypothesis drives the properties against one target and collects what broke.

A run is a few property groups, each its own Hypothesis test sharing the run's budget:

- valid: valid descriptors with NaN-free input, every result check (exact, order, ties, ...);
- nan: floating-point input with NaN, the policy-free checks;
- metamorphic: prefix, axis moves, TOP_K against TOP_K1;
- deterministic: the same input twice, bit for bit;
- invalid: descriptors that break a rule must be refused (targets that validate).

Every property that applies to an example is checked, whatever another one found (see
fuzz.context): each distinct failure (target, rule, class) is raised as an exception type of its
own, so Hypothesis (reporting multiple bugs) finds each, shrinks each on the examples that show
it and replays each last; the runner keeps them all. A known deviation (--known) is counted, not
raised; a failure an earlier group already kept is passed over, so the group digs on.

Failures are kept in the example database (when there is one) and replay first next time,
seeded or not: a seed makes the search repeatable, and as the search passes never read the
database, saving to it changes nothing they draw. The summary notes what replayed first.

    result = run_fuzz(RunConfig(target="onnxruntime", max_examples=300, seed=0))
"""
from __future__ import annotations

import time
import unittest
import zlib

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed

from topkspec.errors import remove_if_empty, writable_folder
from topkspec.fuzz.config import (
    DEFAULT_DATABASE, MAX_SEARCHES, SETTINGS, SETTINGS_WITH_DATABASE, RunConfig, RunError, register_settings,
    shape_limits,
)
from topkspec.fuzz.batches import batched, searches_for
from topkspec.fuzz.examples import group_example, group_test  # noqa: F401 (group_example: re-exported)
from topkspec.fuzz.confirm import ALONE, Keeper, replayer_for
from topkspec.fuzz.ctrl_c import CtrlC
from topkspec.fuzz.database import KeyedDatabase, open_database
from topkspec.fuzz.groups import descriptor_rules_in_force, plan_groups, split_budget
from topkspec.fuzz.minimal import reduce_failures
from topkspec.fuzz.nan_twins import mark_own_nan_bugs
from topkspec.fuzz.resolve import resolve_target
from topkspec.fuzz.results import RunResult, group_failures, record_failure
from topkspec.fuzz.summary import Progress
from topkspec.spec.kinds import fail_on_kinds
from topkspec.targets.base import Target
from topkspec.targets.isolation import IsolatedTarget


def _settings_for(config: RunConfig):
    """(base settings, database location) from the run's named settings and the options."""
    register_settings()
    name = config.settings
    if name is not None and name not in SETTINGS:
        raise RunError(f"unknown settings {name!r}: choose from {', '.join(SETTINGS)}")
    values = dict(SETTINGS.get(name or "dev"))
    database = config.database
    if database is None and (name or "dev") in SETTINGS_WITH_DATABASE:
        database = DEFAULT_DATABASE
    return values, database


def _group_settings(config: RunConfig, values: dict, database, examples: int, key: str):
    return settings(
        max_examples=examples, deadline=None,
        # a database (asked for) and derandomize exclude each other; --seed still repeats
        derandomize=values.get("derandomize", False) and database is None,
        database=None if database is None else KeyedDatabase(database, key),
        suppress_health_check=list(HealthCheck), report_multiple_bugs=True,
        print_blob=values.get("print_blob", False),
        # Hypothesis's own lines (a seed to add "to this test") name a test the user does not
        # have: the summary and the reports say what happened instead.
        verbosity=Verbosity.quiet,
        # no explain phase: its variations of a failure would replay after the shrunk one
        phases=tuple(p for p in Phase if p != Phase.explain and (config.shrink or p != Phase.shrink)))


def run_fuzz(config: RunConfig, *, target: Target | None = None) -> RunResult:
    """Fuzz one target; see the module text. Raises RunError/TargetError for bad usage.
    `target`: config.target already resolved (resolve_target); the run closes it either way."""
    made: list = []  # report folders made for this run: taken away again when it writes none
    try:
        result = _search(config, target, made)
        group_failures(result)  # one report per bug, naming what else it breaks
        if config.report_dir:
            from topkspec.report import write_reports
            write_reports(result, config.report_dir, target_spec=config.target,
                          timeout=result.timeout or config.timeout)
        return result
    finally:
        remove_if_empty(made)


def _search(config: RunConfig, target: Target | None, made: list) -> RunResult:
    """The run itself (see run_fuzz); the report folder it checks and makes goes into `made`."""
    from topkspec import spec

    entered = time.perf_counter()
    notes: list = []
    replayer = None
    try:
        values, database_at = _settings_for(config)
        budget = config.max_examples if config.max_examples is not None else values["max_examples"]
        if budget < 1:
            raise RunError(f"--max-examples must be at least 1, got {budget}")
        database = open_database(database_at, named=config.database is not None)
        if config.report_dir:
            made.extend(writable_folder(config.report_dir, "cannot write reports to"))
        if target is None:
            target = resolve_target(config.target, isolate=config.isolate, timeout=config.timeout, notes=notes)
        profile = spec.parse_profile(config.profile or target.default_profile).name
        if not spec.ops(profile):
            raise RunError(f"no TopK operator exists at {profile} (the earliest is TOP_K, at DirectML feature "
                           f"level 2_0)")
        version = target.version()
        known = None
        if config.known is not None:  # "" names the target's shipped list
            from topkspec.known import KnownError, load_known
            try:
                known = load_known(config.known or None, target.name)
            except KnownError as exc:
                raise RunError(str(exc)) from None
        contract = run_contract(config, target)
        result = RunResult(target=target.name, version=version, profile=profile, contract=contract,
                           settings=config.settings, seed=config.seed, max_examples=budget,
                           notes=notes, strict_doc=config.strict_doc, known=known,
                           report_known=config.report_known, documents_only=config.documents_only,
                           computes=target.computes, in_worker=isinstance(target, IsolatedTarget),
                           timeout=_call_limit(target, config.timeout), fail_on=fail_on_kinds(config.fail_on),
                           call_log=[] if config.keep_calls else None)
        keep = _keeper(config, target, result, profile, notes)
        replayer = keep.replayer
        groups = plan_groups(target, profile, strict_doc=config.strict_doc, contract=contract,
                             **shape_limits(config.settings, config.max_axis_size, config.max_elements))
        if config.groups is not None:
            groups = {g: v for g, v in groups.items() if g in config.groups}
        if "invalid" in groups:
            result.descriptor_rules = tuple(descriptor_rules_in_force(target, profile, strict_doc=config.strict_doc,
                                                                      contract=contract))
        progress = Progress(config.progress, budget, label=target.name)
        start = result.clock = time.perf_counter()
        result.start_seconds = start - entered
        result.budgets = split_budget(budget, groups)
        replayed: list = []
        with CtrlC() as ctrl_c:
            try:
                for group, examples in result.budgets.items():
                    _run_group(target, result, group, *groups[group], _group_settings(config, values, database,
                               examples, f"{target.name}|{profile}|{group}"), config.seed, progress,
                               strict_doc=config.strict_doc, ctrl_c=ctrl_c, stop_at_first=config.stop_at_first,
                               keep=keep, replayed=replayed)
                    if ctrl_c.pressed:  # an interrupt something swallowed: stop all the same
                        raise KeyboardInterrupt
                    progress.update(result, group, force=True)
                    if config.stop_at_first and result.first_failure is not None:
                        break
            except KeyboardInterrupt:  # Ctrl-C: stop, keep what was found, report it
                result.interrupted = True
        if replayed:
            notes.append("replayed first from the example database: " + "; ".join(replayed))
        result.seconds = time.perf_counter() - start - result.timing["confirm_s"]  # the search's own time
        if config.shrink and config.reduce and not result.interrupted:  # as small as the bug allows
            try:
                reduce_failures(target, result, groups, strict_doc=config.strict_doc,
                                log=_log if config.verbose else None, confirm=_fails_alone(replayer))
            except KeyboardInterrupt:  # each failure is replaced once reduced: keep what is done
                result.interrupted = True
        if not result.interrupted:
            mark_own_nan_bugs(target, result)  # asked of the runtime while it is open
    finally:
        if replayer is not None:
            replayer.close()
        if target is not None:
            target.close()
    return result


def _log(line: str) -> None:
    import sys
    print(f"topkspec: {line}", file=sys.stderr, flush=True)


def _call_limit(target, asked: float) -> float:
    """The seconds a call of the target may take: its worker's limit, else the one asked for or
    the target's own minimum (a compiler's first build of a shape), whichever is longer."""
    if isinstance(target, IsolatedTarget):
        return target.timeout
    return max(asked, getattr(target, "min_timeout", 0) or 0)


def _fails_alone(replayer):
    """confirm(failure) for the reducer: whether a reduced failure still fails alone in a fresh
    worker, as the failure it came from did (None: failures are filed as found)."""
    if replayer is None:
        return None

    def confirm(failure) -> bool:
        if failure.confirmation is None or failure.confirmation.outcome != ALONE:
            return True  # not confirmed in a fresh worker (a validator, say): nor is the smaller one
        try:
            return replayer.fails_alike(failure)
        except Exception:  # no fresh worker to ask: the case that was confirmed stays
            return False
    return confirm


def run_contract(config: RunConfig, target: Target):
    """The contract a run holds the target to: --contract FILE (or a Contract) else the
    target's own, with the NaN order of --nan-order when given."""
    from topkspec.spec.contracts import ContractError, held_to

    try:
        return held_to(target.contract, config.contract, config.nan_order)
    except ContractError as exc:
        raise RunError(str(exc)) from None


def _keeper(config, target, result, profile, notes):
    """The function that keeps a group's failures (see confirm.Keeper): each new one replayed
    in a fresh process first, unless the run was asked not to or the target cannot be."""
    replayer = None
    if config.confirm:
        replayer, why = replayer_for(target, config.target, timeout=result.timeout, profile=profile,
                                     strict_doc=config.strict_doc, contract=result.contract)
        if why:
            notes.append(f"failures are filed as found, not replayed in a fresh process first: {why}")
    return Keeper(result, replayer, config.report_dir)


def _keep(result, ctx) -> None:
    """Keep the group's failures as found (each shrunk, when Hypothesis finished with it)."""
    for failure in ctx.failures.values():
        record_failure(result, failure)


def _passes(group_settings, seed, group: str):
    """The Hypothesis runs of a group, each (settings, seed or None), lazily: with a database,
    first a replay of its saved failures alone (Hypothesis searches no further once it replays
    a failure), then searches, which save what they find but read nothing back. A search stops
    looking some time after its last new failure; while budget is left, the next search, which
    passes over the failures kept so far, digs on from a seed of its own (derived from the run's
    seed, so a seeded or derandomized run repeats)."""
    if group_settings.database is not None:
        replay = tuple(p for p in (Phase.reuse, Phase.shrink) if p in group_settings.phases)  # shrink if asked
        yield settings(group_settings, phases=replay), None
    search = tuple(p for p in group_settings.phases if p != Phase.reuse)
    first = settings(group_settings, phases=search) if group_settings.database is not None else group_settings
    yield first, seed
    repeatable = seed is not None or group_settings.derandomize
    for number in range(1, MAX_SEARCHES):
        later = settings(first, derandomize=False)
        yield later, (zlib.crc32(f"{seed}|{group}|{number}".encode()) if repeatable else None)


def _cases_left(group: str, left: int) -> bool:
    """Whether a search of a batched group ended with some of its cases unspent: Hypothesis
    draws short lists first, so a search may draw fewer cases than it was given."""
    return batched(group) and left >= 1


def _run_group(target, result, group, strategy, body, group_settings, seed, progress, *, strict_doc=False,
               ctrl_c=None, stop_at_first=False, keep=None, replayed=None) -> None:
    """Run one group: its passes (see _passes) until one finds nothing new or the group's
    budget is spent (shrinking counts: each example it runs is one); with `stop_at_first`,
    until the run has a failure. `keep(ctx, confirm=True)` keeps a pass's failures (default:
    as found); `replayed` (a list) gets a line for the failures its database replay found."""
    keep = keep or (lambda ctx, confirm=True: _keep(result, ctx))
    share, start_count = group_settings.max_examples, result.examples[group]
    for index, (pass_settings, pass_seed) in enumerate(_passes(group_settings, seed, group)):
        if stop_at_first and result.first_failure is not None:
            return
        replay = Phase.generate not in pass_settings.phases
        left = share - (result.examples[group] - start_count)
        if not replay and left < 1:
            return
        test, ctx = group_test(target, result, group, strategy, body, progress=progress, strict_doc=strict_doc,
                               ctrl_c=ctrl_c)
        ctx.case_limit = None if replay else result.examples[group] + left
        if pass_seed is not None:
            test = hypothesis_seed(pass_seed)(test)
        # the settings go on after the seed: @seed alone drops the database, and a seeded run
        # would save none of its failures (its search passes never read the database: still
        # repeatable)
        test = settings(pass_settings, max_examples=searches_for(group, left))(test)
        group_start, confirming = time.perf_counter(), result.timing["confirm_s"]
        try:
            test()
        except KeyboardInterrupt:
            keep(ctx, confirm=False)  # found before the interrupt (perhaps not fully shrunk)
            raise
        except Exception as exc:  # the group's shrunk failures (one, a group of them, or reported flaky)
            if not ctx.failures and not isinstance(exc, unittest.SkipTest) and not (ctrl_c and ctrl_c.pressed):
                result.errors.append((group, f"{type(exc).__name__}: {exc}"))
            keep(ctx)
            if ctrl_c and ctrl_c.pressed:  # the interrupt, folded by Hypothesis into its own error
                raise KeyboardInterrupt from None
            if not ctx.failures and not replay:
                return  # a fault of the suite: searching again would meet it again
        else:
            keep(ctx)
            if not replay and not _cases_left(group, share - (result.examples[group] - start_count)):
                return  # nothing new found: the search used what it was given
        finally:  # the group's search, without confirming its failures (timed apart)
            result.timing["group_s"] += time.perf_counter() - group_start - (result.timing["confirm_s"] - confirming)
        if replay and ctx.failures and replayed is not None:
            rules = ", ".join(sorted({failure.rule for failure in ctx.failures.values()}))
            replayed.append(f"{group} {rules} (in its first {result.examples[group] - start_count} examples)")
