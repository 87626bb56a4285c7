"""Before a failure is filed: does it fail alone, in a fresh process?

A target in a worker process serves many calls, and a call may leave the process in a state
(a corrupted heap, a switched floating-point mode) under which a later, innocent call fails.
Filed against that later call, the report would send a maintainer after the wrong input, and
its repro.py would print "fixed". So each shrunk failure is replayed before it is filed:

1. alone: its calls in a fresh worker, judged by the same check its group ran; if they fail
   the same rule with the same failure class, the failure is the case's, as found;
2. after earlier calls: else the calls the run's worker made before it (its history,
   targets.history) are part of its input: replayed first in a fresh worker, all of them,
   then a smallest sub-sequence of them after which it still fails (delta debugging,
   Zeller's ddmin); the failure is filed with that prefix (Failure.prior);
3. not reproduced: a failure that fails in no fresh process, not even after all its history,
   is no failure of any case: it is not filed, and its history is saved for the user.

The question a reducer asks is `Replayer.fails_alike(failure, case, x, prior=...)`: does
(case, x), after the calls `prior`, fail the failure's rule with its failure class on a
fresh instance of the target? `Replayer.still_fails(failure)` is that question as a
predicate of (case, x).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

from topkspec.properties.failures import Violation
from topkspec.fuzz.context import GroupContext, RefusedKAtAxisSize
from topkspec.fuzz.groups import body_of
from topkspec.fuzz.results import ONE_CALL_RELATIONS, RunResult, failure_key
from topkspec.targets.isolation import IsolatedTarget, TargetCrashed, TargetHung

ALONE = "alone"  # fails by itself in a fresh worker
AFTER_CALLS = "after earlier calls"  # fails in a fresh worker after some of the calls before it
NOT_REPRODUCED = "not reproduced"  # fails in no fresh worker, not even after its whole history
NOT_CONFIRMED = "not confirmed"  # could not be replayed in a fresh worker (said why)

SEARCH_SECONDS = 120.0  # the most a search of the history spends on one failure
SEARCH_TESTS = 200  # the most fresh workers it starts for one failure
TRIES = 2  # fresh workers tried, alone and after the whole history, before a failure counts as not reproduced


@dataclass
class Confirmation:
    """What replaying a failure in fresh workers showed."""

    outcome: str  # ALONE, AFTER_CALLS, NOT_REPRODUCED or NOT_CONFIRMED
    prior: list = field(default_factory=list)  # [(case, x)] the earlier calls it needs (AFTER_CALLS)
    tests: int = 0  # fresh workers started
    seconds: float = 0.0
    minimal: bool = True  # False: the search stopped at its bound with a prefix that still fails
    why: str = ""  # NOT_CONFIRMED: why not
    history: int = 0  # the calls made before it in its process (those it was replayed after)

    def describe(self) -> str:
        if self.outcome == AFTER_CALLS:
            calls = f"{len(self.prior)} earlier call{'s' if len(self.prior) != 1 else ''}"
            return f"fails in a fresh process after {calls}" + ("" if self.minimal else " (not minimized)")
        if self.outcome == NOT_CONFIRMED:
            return f"not confirmed in a fresh process: {self.why}"
        return "fails alone in a fresh process" if self.outcome == ALONE else "fails in no fresh process"


def example_of(failure):
    """(body, data): how to check the failure's example again, as its group did. A failure seen
    on one call (a result, crash, hang, refusal) is checked on that call alone (what repro.py
    makes), one of a relation between calls on the example its group drew."""
    if failure.group == "invalid":
        return body_of("invalid"), failure.draw
    if failure.relation in ONE_CALL_RELATIONS:
        return body_of("valid"), (failure.case, failure.x)
    return body_of(failure.group), (failure.case, failure.x)


class Replayer:
    """Replays failures in fresh worker processes built from `spec` (a target's name, import
    string or picklable Target), each call limited to `timeout` seconds; `profile` and
    `strict_doc` as in the run whose failures it replays."""

    def __init__(self, spec, *, timeout: float, profile: str, strict_doc: bool = False, contract=None,
                 search_seconds: float = SEARCH_SECONDS, search_tests: int = SEARCH_TESTS):
        self.spec, self.timeout, self.profile, self.strict_doc = spec, timeout, profile, strict_doc
        self.contract = contract  # the run's (spec.contracts); None: the target's own
        self.search_seconds, self.search_tests = search_seconds, search_tests
        self.started = 0  # fresh workers started, over the replayer's life
        self._shared = None  # the worker fails_alike(fresh=False) reuses
        self._spare = None  # the next fresh worker, started while the last one is used

    def fails_alike(self, failure, case=None, x=None, *, prior=(), fresh: bool = True) -> bool:
        """Does (case, x) (default: the failure's own), after the calls `prior` [(case, x)],
        fail the failure's rule with its failure class on a fresh instance of the target?

        The calls are judged by the check the failure's group ran (see example_of; a failure
        of the invalid group replays its drawn descriptor and takes no (case, x)). The earlier
        calls' own results are not judged: a refusal or a wrong result there is no matter, but
        a crash or hang in them means the sequence does not replay (False). `fresh=False`
        reuses one worker across questions (restarted only when a call kills it): cheaper for
        a reducer of a failure that fails alone; a question with a prior always gets a fresh
        one. Raises TargetError when no worker can be built from the spec."""
        body, data = example_of(failure)
        if case is not None:
            if failure.group == "invalid":
                raise ValueError("a failure of the invalid group replays its drawn descriptor, not a (case, x)")
            data = (case, x)
        if fresh or prior:
            target = self._fresh()
            try:
                return self._judge(target, failure, body, data, prior)
            finally:
                target.close()
        if self._shared is None:
            self._shared = self._fresh()
        return self._judge(self._shared, failure, body, data, ())

    def still_fails(self, failure, *, prior=(), fresh: bool = True):
        """fails_alike as a predicate of (case, x), for a reducer."""
        return lambda case, x: self.fails_alike(failure, case, x, prior=prior, fresh=fresh)

    def confirm(self, failure, history=()) -> Confirmation:
        """Replay the failure alone, then after its `history` [(case, x)] (the calls made
        before it in its process, oldest first), as the module text says."""
        start, tests, history = time.perf_counter(), self.started, list(history)

        def done(outcome, prior=(), minimal=True, why=""):
            return Confirmation(outcome, list(prior), self.started - tests, time.perf_counter() - start, minimal, why,
                                len(history))

        if failure.group == "invalid" and not failure.calls:  # Target.check_descriptor, asked here only
            return done(NOT_CONFIRMED, why="judged on its descriptor as written, which a worker process is not asked")
        try:
            if self.fails_alike(failure):
                return done(ALONE)
            # a failure that comes and goes (a race, say) gets a second chance at each step
            if not history or not any(self.fails_alike(failure, prior=history) for _ in range(TRIES)):
                if self.fails_alike(failure):
                    return done(ALONE)
                return done(NOT_REPRODUCED)
            deadline = start + self.search_seconds
            prior, minimal = ddmin(history, lambda calls: self.fails_alike(failure, prior=calls),
                                   stop=lambda: time.perf_counter() > deadline
                                   or self.started - tests >= self.search_tests)
            return done(AFTER_CALLS, prior, minimal)
        except Exception as exc:  # no worker from this spec (it cannot be sent, say): file as found
            return done(NOT_CONFIRMED, why=f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        for worker in (self._shared, self._spare):
            if worker is not None:
                worker.close()
        self._shared = self._spare = None

    # -- one question ------------------------------------------------------------------------

    def _fresh(self) -> IsolatedTarget:
        """A worker that has made no call, and the next one started meanwhile: its runtime
        imports while this one is used, or while the run searches on."""
        self.started += 1
        worker, self._spare = self._spare, None
        if worker is None:
            worker = IsolatedTarget(self.spec, timeout=self.timeout, wait=False)
        try:
            self._spare = IsolatedTarget(self.spec, timeout=self.timeout, wait=False)
        except Exception:  # this one cannot start either: its own use says why
            pass
        return worker

    def _judge(self, target, failure, body, data, prior) -> bool:
        target.version()  # a worker that cannot start raises here, not as an adapter error of the case
        for case, x in prior:
            try:
                target.run(case, x)
            except (TargetCrashed, TargetHung):
                return False  # an earlier call fails on its own: this is not the sequence that failed
            except Exception:
                pass  # refused or broken: the call was made, as in the run
        result = RunResult(target=failure.target, version="", profile=self.profile, settings=None, seed=None,
                           max_examples=1, strict_doc=self.strict_doc, contract=self.contract)
        ctx = GroupContext(target, result, failure.group, strict_doc=self.strict_doc)
        ctx.start_example()
        from topkspec.properties.result import remembered_references

        try:
            with remembered_references():
                body(ctx, data)
        except Violation as violation:  # a crash, hang, broken adapter or refusal ends the example
            ctx.found.append(violation)
        except RefusedKAtAxisSize:
            pass
        return any(failure_key(failure.target, violation, failure.case) == failure.key for violation in ctx.found)


def ddmin(items: list, fails, *, stop=lambda: False) -> tuple[list, bool]:
    """(a sub-sequence of `items` on which `fails` holds, minimal): Zeller's delta debugging,
    for a `fails` that holds on `items` and not on the empty sequence. The result is
    1-minimal (no single item can go) unless `stop()` ended the search first (minimal False)."""
    n = 2
    while len(items) >= 2:
        if stop():
            return items, False
        chunks = [items[len(items) * i // n:len(items) * (i + 1) // n] for i in range(n)]
        for i, chunk in enumerate(chunks):  # a chunk alone
            if chunk and fails(chunk):
                items, n = chunk, 2
                break
        else:
            for i in range(n):  # all but a chunk
                rest = [item for j, chunk in enumerate(chunks) if j != i for item in chunk]
                if len(rest) < len(items) and n > 2 and fails(rest):
                    items, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(items):
                    return items, True
                n = min(len(items), 2 * n)
    return items, True


def replayer_for(target, spec, *, timeout: float, profile: str, strict_doc: bool = False, contract=None):
    """(Replayer, None) for a run's target, or (None, why not): a target in a worker replays
    from the worker's own spec; one in this process from `spec` (the run's --target) when it
    is a name or import string, or from the target itself when it can be sent to a worker."""
    if not getattr(target, "computes", True):
        return None, "a validator is asked in this process only"
    if isinstance(target, IsolatedTarget):
        spec, timeout = target.spec, target.timeout
    elif not isinstance(spec, str):
        spec = target
    timeout = max(timeout, getattr(target, "min_timeout", 0) or 0)
    return Replayer(spec, timeout=timeout, profile=profile, strict_doc=strict_doc, contract=contract), None


def save_history(failure, history, folder: str) -> str:
    """Write a failure that reproduced nowhere, with the calls made before it, to `folder`
    (calls.json: the calls in order, the failing one last, and what broke; calls.npz: their
    inputs as x0, x1, ...); returns the folder."""
    os.makedirs(folder, exist_ok=True)
    calls = list(history) + [(failure.case, failure.x)]
    arrays = {}
    for i, (_, x) in enumerate(calls):
        if x is not None:
            x = np.asarray(x)
            arrays[f"x{i}"] = x if x.dtype.type.__module__ == "numpy" else x.view(f"uint{x.dtype.itemsize * 8}")
    np.savez(os.path.join(folder, "calls.npz"), **arrays)
    document = {"target": failure.target, "group": failure.group, "rule": failure.rule,
                "class": failure.failure_class, "violation": failure.violation.to_dict(),
                "what": "the calls one worker process made, oldest first; the last one failed there, but in a "
                        "fresh process it fails neither alone nor after all these",
                "calls": [{"case": case.to_dict(), "dtype": str(np.asarray(x).dtype) if x is not None else None}
                          for case, x in calls]}
    with open(os.path.join(folder, "calls.json"), "w") as handle:
        json.dump(document, handle, indent=2, default=str)
        handle.write("\n")
    return folder


class Keeper:
    """Keeps a group's failures in the run's result (`keeper(ctx)` after each Hypothesis run):
    each new one confirmed by `replayer` first (None: filed as found). One that reproduces
    nowhere goes to result.unreproduced, its history saved under `folder` (the run's report
    folder, else .topkspec/not-reproduced)."""

    def __init__(self, result, replayer, folder=None):
        self.result, self.replayer = result, replayer
        self.folder = folder or os.path.join(".topkspec", "not-reproduced")

    def __call__(self, ctx, confirm: bool = True) -> None:
        from topkspec.fuzz.results import record_failure

        for failure in ctx.failures.values():
            if self.replayer is not None and confirm and not self.result.has_failure(failure):
                if not self._confirmed(failure):
                    continue
            failure.earlier = []  # the history is no longer needed: let it go
            record_failure(self.result, failure)

    def _confirmed(self, failure) -> bool:
        """Confirm a failure; False when it reproduces nowhere (then kept as unreproduced)."""
        from topkspec.report.folder import slug

        confirmation = self.replayer.confirm(failure, failure.earlier)
        failure.confirmation = confirmation
        self.result.timing["confirm_s"] += confirmation.seconds
        if confirmation.outcome == AFTER_CALLS:
            failure.prior = confirmation.prior
        if confirmation.outcome != NOT_REPRODUCED:
            return True
        name = f"not-reproduced-{len(self.result.unreproduced) + 1:02d}-{slug(failure.rule)}-" \
               f"{slug(failure.failure_class)}"
        try:
            saved = save_history(failure, failure.earlier, os.path.join(self.folder, name))
        except OSError:
            saved = None
        failure.earlier = []
        self.result.unreproduced.append((failure, saved))
        return False


def not_filed_line(failure, saved) -> str:
    """The summary's line for a failure that reproduced nowhere (saved: its calls' folder)."""
    earlier = failure.confirmation.history if failure.confirmation else 0
    return (f"not filed: [{failure.failure_class}] {failure.rule}: {failure.case.describe()} failed in the run but in "
            f"no fresh process, alone or after the {earlier} call(s) made before it there; "
            + (f"those calls are saved in {saved}" if saved else "its calls could not be saved"))
