"""Each kept failure made as small as its bug allows, after Hypothesis's shrinker: the reducer
(fuzz.reduce) cuts the case and input down while the same failure comes back.

The same failure means the same key (target, rule, class) when the failure's group checks run
again on the candidate against the run's target (`same_failure`: the one place that decides it,
so a replay in a fresh worker can take its place). What is reduced:

- failures of the groups that draw (case, x) (valid, nan, metamorphic, deterministic, self): the
  example as drawn, every call its checks make coming back from the replay, so a metamorphic
  failure keeps its relation between calls;
- not invalid descriptors: each breaks a rule by its structure, drawn small already (axes to
  64, 512 elements), and a smaller one could break another rule instead;
- not hangs: each try would cost the target's time limit;
- not a failure that needs earlier calls (fuzz.confirm, Failure.prior): its case is only part
  of its input, and a smaller one tried in the run's process says nothing about a fresh one.

A failure that was confirmed alone in a fresh worker keeps its reduced case only when that
fails alone in a fresh worker too (`confirm`); otherwise the confirmed case stays.

The failure kept is the replay's on the smallest candidate, so its message, expected and actual
values are those of the reported case.
"""
from __future__ import annotations

import time

from topkspec.properties import failures
from topkspec.properties.failures import Violation
from topkspec.properties.result import remembered_references
from topkspec.fuzz.context import GroupContext, RefusedKAtAxisSize
from topkspec.fuzz.reduce import DEFAULT_SECONDS, reduce_case
from topkspec.fuzz.results import Failure, RunResult

_REDUCED_GROUPS = ("valid", "nan", "metamorphic", "deterministic", "self")


def _replay(target, result, failure, body, case, x, strict_doc):
    """The Failure with `failure`'s key the group's checks find on (case, x), or None."""
    scratch = RunResult(target=result.target, version=result.version, profile=result.profile, settings=None,
                        seed=None, max_examples=0, computes=result.computes, contract=result.contract)
    ctx = GroupContext(target, scratch, failure.group, strict_doc=strict_doc)
    ctx.start_example()
    try:
        with remembered_references():
            body(ctx, (case, x))
    except Violation as violation:  # a crash, refusal or broken adapter ends the example
        ctx.found.append(violation)
    except RefusedKAtAxisSize:
        return None
    for violation in ctx.found:
        until, since = ctx.calls_until(violation), ctx.calls_from(violation)
        found = Failure(target=failure.target, group=failure.group, violation=violation, case=ctx.judged(case),
                        x=x, calls=ctx.calls[since:until], outputs=ctx.outputs[since:until], known=failure.known)
        if found.key == failure.key:
            return found
    return None


def same_failure(target, result, failure, body, *, strict_doc=False):
    """still_fails(case, x) for the reducer: whether `failure`'s group checks, run again on
    (case, x) against `target`, find a failure of the same key."""
    def still_fails(case, x) -> bool:
        return _replay(target, result, failure, body, case, x, strict_doc) is not None
    return still_fails


def reducible(failure) -> bool:
    return (failure.group in _REDUCED_GROUPS and failure.failure_class != failures.HANG
            and failure.calls and failure.x is not None and not failure.prior)


def reduce_failure(target, result, failure, body, *, strict_doc=False, seconds=DEFAULT_SECONDS, log=None,
                   confirm=None):
    """`failure` reduced (see the module text), or `failure` itself when nothing smaller fails
    (or, with `confirm`, when the smaller one does not fail alone in a fresh worker)."""
    drawn = failure.drawn or failure.case
    x = failure.calls[0][1]  # the example's own input: its first call's
    still_fails = same_failure(target, result, failure, body, strict_doc=strict_doc)
    asked = []

    def counted(case, x) -> bool:
        asked.append(None)
        return still_fails(case, x)

    start = time.perf_counter()
    case, x, steps = reduce_case(drawn, x, counted, seconds=seconds, strict_doc=strict_doc, log=log)
    smaller = _replay(target, result, failure, body, case, x, strict_doc) if steps else None
    if smaller is not None:
        smaller.confirmation, smaller.earlier = failure.confirmation, failure.earlier
        if confirm is not None and not confirm(smaller):
            smaller = None  # it fails only in the run's process: the case confirmed alone stays
    kept = failure if smaller is None else smaller  # a target that no longer fails keeps the first
    result.reductions.append((failure.key, failure.case, kept.case, time.perf_counter() - start, len(asked),
                              len(steps)))
    return kept


def reduce_failures(target, result, groups: dict, *, strict_doc=False, seconds=DEFAULT_SECONDS, log=None,
                    confirm=None) -> None:
    """Every kept failure of `result` reduced in place; the time goes to timing["reduce_s"]."""
    start = time.perf_counter()
    for kept in (result.failures, result.known_failures):
        for number, failure in enumerate(kept):
            if not reducible(failure) or failure.group not in groups:
                continue
            if log is not None:
                log(f"reduce: {failure.rule} ({failure.failure_class}) from {failure.case.describe()}")
            kept[number] = reduce_failure(target, result, failure, groups[failure.group][1],
                                          strict_doc=strict_doc, seconds=seconds, log=log, confirm=confirm)
    result.timing["reduce_s"] += time.perf_counter() - start
