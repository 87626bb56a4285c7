"""A group's context: the calls to the target, timed and guarded (a crash, a hang or a broken
adapter becomes a Violation), and the counters its examples add to."""
from __future__ import annotations

import time
from collections import Counter

import numpy as np

from topkspec.properties import failures
from topkspec.properties.failures import Violation
from topkspec.fuzz.config import ADAPTER_RULE, MAX_CRASH_REPLAYS, MAX_HANG_REPLAYS
from topkspec.fuzz.isolation import TargetCrashed, TargetHung
from topkspec.fuzz.results import Failure, RunResult
from topkspec.targets.base import AdapterError, Rejected, Target, describe_error


def _check_names() -> dict:
    from topkspec.properties import CATALOGUE
    return {prop.check: prop.name for prop in CATALOGUE}


class RefusedKAtAxisSize(Exception):
    """A target refused a DirectML K equal to the axis size: allowed (see
    properties.may_refuse), so the example is not judged."""


class GroupContext:
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

    def judged_if_supported(self, case):
        """The case as the target is judged on it, or None (counted) when it declares the case
        unsupported."""
        judged = self.judged(case)
        reason = self.unsupported(judged)
        if reason:
            self.result.unsupported[reason] += 1
            return None
        return judged

    def raw_run(self, case, x, *, rule="out.valid_accepted", meanwhile=None):
        """The target's answer; Rejected propagates; crash and hang raise Violations.
        `meanwhile()` runs while a target in a worker process computes (its time is the
        checks')."""
        self.calls.append((case, x))
        self.outputs.append(None)
        start = time.perf_counter()
        try:
            wait = self._guard(lambda: self.target.submit(case, x), case, rule=rule)
            if meanwhile is not None:  # timed as checks, not as the target's
                paused = time.perf_counter()
                meanwhile()
                start += time.perf_counter() - paused
                self.result.timing["checks_s"] += time.perf_counter() - paused
            result = self._guard(wait, case, rule=rule)
        finally:
            self.result.timing["target_s"] += time.perf_counter() - start
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise self._adapter_error(case, AdapterError(
                f"{self.target.name}.run() returned {type(result).__name__}, not a pair (values, indices)"))
        values, indices = result
        values, indices = np.asarray(values), np.asarray(indices)
        self.outputs[-1] = (values, indices)
        return values, indices

    def run(self, case, x, *, meanwhile=None):
        """A valid case's result; a refusal is a Violation (rejects a valid descriptor)."""
        from topkspec.properties import may_refuse

        try:
            return self.raw_run(case, x, meanwhile=meanwhile)
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
        return self.fatal[failures.CRASH] >= MAX_CRASH_REPLAYS or self.fatal[failures.HANG] >= MAX_HANG_REPLAYS


