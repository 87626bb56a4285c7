"""A group's context: the calls to the target, timed and guarded (a crash, a hang or a broken
adapter becomes a Violation), each property's check on an example, and the example's verdict.

Every property that applies to an example is checked, whatever another one found; then the
example's violations are settled (GroupContext.settle): a known deviation is counted, a reading
under --documents-only noted, a failure already kept passed over, and the first new one is
raised as an exception type of its own (found_type), so Hypothesis keeps each distinct failure
apart and shrinks it on the examples that show it."""
from __future__ import annotations

import time
from collections import Counter

import numpy as np

from topkspec.properties import failures
from topkspec.properties.catalogue import BY_NAME
from topkspec.properties.failures import Violation
from topkspec.fuzz.config import ADAPTER_RULE, MAX_CRASH_REPLAYS, MAX_HANG_REPLAYS, TIMEOUT_RULE
from topkspec.targets.isolation import TargetCrashed, TargetHung
from topkspec.fuzz.results import Failure, RunResult, failure_key, filed_rule, nan_free_key
from topkspec.fuzz.verdicts import is_reading
from topkspec.known import rules_declaring
from topkspec.fuzz.nan_twins import own_nan_bug
from topkspec.properties.open_points import as_returned, judged_values
from topkspec.spec.contracts import unpromised_rules
from topkspec.targets.base import AdapterError, Rejected, Target, describe_error
from topkspec.targets.quiet import quieted
from topkspec.targets.refusal import InternalError, as_judged
from topkspec.fuzz.answers import internal_error_violation as _internal_error, noting_answers, result_signature
from topkspec.fuzz.prefetch import not_offered, taken

# Classes that end an example: after a crash, a hang or a broken adapter nothing else is asked.
_ENDS_EXAMPLE = (failures.CRASH, failures.HANG, failures.ADAPTER_ERROR, failures.INTERNAL_ERROR)


class Found(Violation):
    """A failure of one key (see found_type)."""


_FOUND_TYPES: dict = {}


def found_type(key: tuple) -> type:
    """The exception type raised for failures of `key`: one type per key, so Hypothesis, which
    tells failures apart by type and place, finds and shrinks each of them on its own."""
    if key not in _FOUND_TYPES:
        name = "Violation_" + "_".join("".join(c if c.isalnum() else "_" for c in str(part)) for part in key[1:])
        _FOUND_TYPES[key] = type(name, (Found,), {"__module__": __name__})
    return _FOUND_TYPES[key]


class RefusedKAtAxisSize(Exception):
    """A target refused a DirectML K equal to the axis size: allowed (see
    properties.may_refuse), so the example is not judged."""


class GroupContext:
    """State shared by a group's examples: the target, counters, and the last failure seen."""

    def __init__(self, target: Target, result: RunResult, group: str, strict_doc: bool = False):
        self.target, self.result, self.group, self.strict_doc = target, result, group, strict_doc
        self.calls: list = []
        self.outputs: list = []
        self.found: list = []  # the example's violations, most specific first
        self.kept: set = set()  # the rules the example's checks kept
        self.found_after: dict = {}  # id(violation) -> the example's calls made when it was found
        self.found_from: dict = {}  # id(violation) -> the example's calls made before its property's first
        self.failures: dict = {}  # key -> the latest Failure raised (after shrinking: the shrunk one)
        self.case_limit = None  # the group's count of cases at which a search stops checking (fuzz.run)
        self.fatal = Counter()  # crash/hang examples seen in this group
        self.prefetched, self.fatal_call = {}, None  # answers sent ahead for an example's cases (fuzz.prefetch)
        # What the runtime promises (the run's --contract, else the target's): the rules it
        # leaves open fail no target either way (spec.contracts.unpromised_rules).
        self.contract = getattr(result, "contract", None) or target.contract
        self.unpromised = unpromised_rules(self.contract)

    @property
    def last(self) -> Failure | None:
        """The failure raised last (the shrunk one, when the group failed once)."""
        return next(reversed(self.failures.values()), None)

    def start_example(self) -> None:
        self.calls, self.outputs, self.found, self.kept, self.found_after, self.found_from = [], [], [], set(), {}, {}

    def calls_until(self, violation) -> int:
        """How many of the example's calls had been made when `violation` was found: a failure
        is the call that broke the rule, not the ones later checks went on to make."""
        return self.found_after.get(id(violation), len(self.calls))

    def calls_from(self, violation) -> int:
        """How many of the example's calls came before the property that found `violation`
        made its own: a self-consistency failure is its own calls (0 for any other)."""
        return self.found_from.get(id(violation), 0)

    def share_checked(self) -> bool:
        """Whether the search checked its share of cases (case_limit) and found nothing."""
        return self.case_limit is not None and self.result.examples[self.group] >= self.case_limit and not self.failures

    def end_example(self) -> None:
        """Count the rules the example kept, each once, unless it also broke them."""
        broken = {filed_rule(violation) for violation in self.found}
        for rule in self.kept - broken:
            self.result.held[rule] += 1

    def judged(self, case):
        if case.sorted and self.contract.value("sorted") == "never":
            case = case.with_(sorted=False)  # its order is never promised: judged as a set
        index_dtype = self.target.index_dtype
        if index_dtype is None or case.index_dtype == index_dtype:
            return case  # as judged already (every ONNX case, for an ONNX runtime)
        return case.with_(index_dtype=index_dtype)

    def _guard(self, fn, case, *, rule: str):
        """fn() with a crash or hang turned into a Violation of `rule`, and an exception that
        is not a refusal (Rejected) into an adapter error."""
        try:
            with quieted(self.target):  # the target's own quieting hook (targets.quiet)
                return fn()
        except Rejected as exc:
            judged = as_judged(self.target, exc)  # the library failing in its own code is no refusal
            if judged is exc:
                raise
            raise judged from exc
        except Exception as exc:
            if not isinstance(exc, (TargetCrashed, TargetHung)):
                raise self._adapter_error(case, exc) from None
            if isinstance(exc, TargetHung):  # no rule is in question: a time limit was reached
                self.fatal[failures.TIMEOUT] += 1
                limit = getattr(self.target, "timeout", None)
                raise Violation(TIMEOUT_RULE, f"no answer within the time limit: {exc}",
                                failure_class=failures.TIMEOUT, actual=str(exc),
                                expected=f"an answer within {limit:g} s" if limit else "an answer",
                                call=case) from None
            self.fatal[failures.CRASH] += 1
            raise Violation(rule, f"the target crashed: {exc}",
                            failure_class=failures.CRASH, expected="a result", actual=str(exc), call=case) from None

    def _adapter_error(self, case, exc) -> Violation:
        """The adapter broke (AdapterError, or any other exception but Rejected): reported as
        its own class under the pseudo-rule "adapter", never as a refusal or a runtime fault."""
        text = str(exc) if isinstance(exc, AdapterError) else describe_error(exc)
        return Violation(ADAPTER_RULE, f"the adapter broke (not a refusal, and no verdict on the runtime): {text}",
                         failure_class=failures.ADAPTER_ERROR, expected="a result or a refusal (Rejected)",
                         actual=text, call=case)

    def unsupported(self, case) -> str | None:
        """Why the adapter cannot express the case, or None; Rejected when the runtime refuses
        cases like it (its probe of a known-good case of the same signature failed)."""
        start = time.perf_counter()  # asking may build a session: the target's time
        try:
            return self._guard(lambda: self.target.supports(case), case, rule="out.valid_accepted")
        finally:
            self.result.timing["target_s"] += time.perf_counter() - start

    def judged_if_supported(self, case, *, refusal_is_finding: bool = True):
        """The case as the target is judged on it, or None (counted) when the adapter cannot
        express it. A runtime that refuses cases like it has rejected a valid descriptor (a
        Violation); with refusal_is_finding False (an invalid case, whose refusal would then
        prove nothing) the case is set aside instead."""
        judged = self.judged(case)
        unoffered = not_offered(self.contract, self.target, judged)
        if unoffered:  # not promised: not asked
            self.result.unsupported[unoffered] += 1
            return None
        try:
            reason = self.unsupported(judged)
        except InternalError as exc:
            if refusal_is_finding:
                raise _internal_error(judged, exc) from None
            reason = f"invalid {judged.dtype} cases: asking whether the runtime runs them fails inside it: {exc}"
        except Rejected as exc:
            if refusal_is_finding:
                raise Violation("out.valid_accepted",
                                f"{judged.dtype}{list(judged.shape)} is valid, but {self.target.name} "
                                f"refuses {judged.dtype} cases like it at {judged.profile}: {exc}",
                                failure_class=failures.REJECTS_VALID, where={"value type": judged.dtype},
                                expected="a result", actual=str(exc), call=judged) from None
            reason = (f"invalid {judged.dtype} cases: the runtime refuses valid {judged.dtype} cases alike, so a "
                      f"refusal proves nothing: {exc}")
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
            wait = taken(self, case, x) or self._guard(lambda: self.target.submit(case, x), case, rule=rule)
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
        if indices is None and self.contract.value("indices") != "not_returned":
            raise self._adapter_error(case, AdapterError(
                f"{self.target.name} returned values only, but its contract ({self.contract.name}) returns "
                f"indices: declare indices not_returned in it"))
        values, indices = as_returned(self.contract, case, x, values, indices)
        self.outputs[-1] = (values, indices)  # what the runtime returned, as reports show it
        return judged_values(self.contract, case, x, values, indices), indices

    def run(self, case, x, *, meanwhile=None):
        """A valid case's result; a refusal is a Violation (rejects a valid descriptor)."""
        from topkspec.properties import may_refuse

        try:
            return self.raw_run(case, x, meanwhile=meanwhile)
        except InternalError as exc:
            raise _internal_error(case, exc) from None
        except Rejected as exc:
            if may_refuse(case):
                raise RefusedKAtAxisSize(str(exc)) from None
            raise Violation("out.valid_accepted",
                            f"{case.dtype}{list(case.shape)} is valid but was refused: {exc}",
                            failure_class=failures.REJECTS_VALID, expected="a result",
                            actual=str(exc), call=case) from None

    def held(self, name: str) -> None:
        """Property `name` was checked on this example and held: counted for its rules."""
        self.result.checks[name] += 1
        self.kept.update(rule for rule in BY_NAME[name].rule_ids if rule not in self.unpromised)

    def evaluate(self, name: str, check, *args, **options) -> bool:
        """Check property `name` on this example: True when it held. Its violation is kept for
        the example's verdict (settle), except one whose rule broke already in this example: a
        check that relies on an earlier one (gathering relies on valid indices) repeats the
        earlier violation. A crash, hang, broken adapter or refusal ends the example (raised)."""
        if BY_NAME[name].residual and self.found:
            return False  # explained by what broke already
        if self.unpromised.keys() >= set(BY_NAME[name].rule_ids):
            return True  # nothing it checks is promised: not run, not counted
        answered = []  # a relation between calls holds only where some call returned a result
        if BY_NAME[name].relation is not None and args and callable(args[-1]):
            args = args[:-1] + (noting_answers(args[-1], answered),)
        start, made_before = time.perf_counter(), len(self.calls)
        prop = BY_NAME[name]
        try:
            check(*args, **options)
        except Violation as violation:
            if violation.failure_class in _ENDS_EXAMPLE or violation.failure_class == failures.REJECTS_VALID:
                raise
            if filed_rule(violation) in self.unpromised:
                return True  # a rule the runtime never promised: no failure either way
            if violation.rules[0] in BY_NAME[name].rule_ids:
                self.result.checks[name] += 1
                if prop.relation is not None and violation.failure_class == failures.WRONG_RESULT:
                    violation = self._on_one_call(violation, check, args, options,
                                                  since=made_before if prop.self_consistency else 0,
                                                  open_data=prop.self_consistency)
                if prop.self_consistency and violation.rules[0] in prop.rule_ids:
                    self.found_from[id(violation)] = made_before  # its own calls, the relation's pair
            if all(filed_rule(seen) != filed_rule(violation) for seen in self.found):
                self.found_after.setdefault(id(violation), len(self.calls))
                violation.signature = result_signature(violation, self.calls, self.outputs, self.calls_until(violation))
                self.found.append(violation)
            return False
        finally:
            self.result.timing["checks_s"] += time.perf_counter() - start
        if BY_NAME[name].relation is not None and not answered:
            return True  # it compared no result (none applied, or every call was refused): no verdict
        self.held(name)
        return True

    def _on_one_call(self, violation, check, args, options, *, since=0, open_data=False):
        """A relation between calls that broke because one of its calls returned a wrong result
        is that call's failure, filed under the result rule that decides it: naming the relation
        as also broken when the relation holds with that one result put right (a relation
        follows from the result rules, so it is their special case). A relation broken by
        results each right on its own stays as it is, and so does one whose call is wrong only by
        a rule the contract leaves open. `since`: the relation's first call; `open_data`: a
        self-consistency relation, for which a call with subnormals is not judged on its own
        (a runtime may flush them: the contradiction is the argument)."""
        from topkspec.properties import has_nan, reference_result, result_violations
        from topkspec.properties.self_consistency import has_subnormal

        made = len(self.calls)
        outputs = list(self.outputs[:made])
        for number, ((case, x), output) in enumerate(zip(self.calls[:made], outputs)):
            if number < since or output is None or has_nan(x) or (open_data and has_subnormal(x)):
                continue  # a call with NaN was held to what holds at once
            wrong = next((v for v in result_violations(case, x, *output) if filed_rule(v) not in self.unpromised),
                         None)
            if wrong is not None:
                right = tuple(np.asarray(a).astype(o.dtype) for a, o in zip(reference_result(case, x), output))
                try:
                    check(*args[:-1], self._replay(outputs[:number] + [right] + outputs[number + 1:]), **options)
                    explained = violation.rules
                except (Violation, LookupError):
                    explained = ()
                refiled = wrong.with_(also=explained)
                self.found_after[id(refiled)] = number + 1
                return refiled
        return violation

    def _replay(self, outputs):
        """A run that answers each call with `outputs`' answer to the same call of the example."""
        def run(case, x):
            for (made, given), output in zip(reversed(self.calls), reversed(outputs)):
                if made == case and given.shape == x.shape and given.tobytes() == x.tobytes():
                    return output
            raise LookupError("a call the example did not make")
        return run

    def _known_entry(self, violation, dtype, k=None, graph=None):
        """The known entry declaring the violation: one naming the rule it is filed under, or
        another rule the same result breaks (an accepted invalid descriptor: the rule it breaks);
        an internal error, also one declaring the refusal it was taken for before."""
        result = self.result
        if result.known is None or violation.failure_class == failures.ADAPTER_ERROR:
            return None
        kinds = (violation.failure_class,) + (failures.REJECTS_VALID,) * (violation.failure_class == failures.INTERNAL_ERROR)
        found = (result.known.match(rule, kind, dtype, result.profile, result.version, k, graph)
                 for rule in rules_declaring(filed_rule(violation), violation) for kind in kinds)
        return next((entry for entry in found if entry is not None), None)

    def settle(self, case, failure_of) -> None:
        """The example's verdict from its violations (self.found, in order). Each is counted
        under its rule; a known deviation is counted under its entry, a reading noted under
        --documents-only, one whose failure is kept already passed over; the first other one
        is raised (a known one, with --report-known, when no other is left). `case`: the
        example's case as judged; `failure_of(v)`: the example's Failure for violation v."""
        result = self.result
        dtype, k = getattr(case, "dtype", None), getattr(case, "k", None)
        chosen = known = None
        for violation in self.found:
            rule = filed_rule(violation)
            result.broken_seen[rule] += 1
            entry = self._known_entry(violation, dtype, k, getattr(case, "context", None))
            if entry is not None:
                result.known_seen[entry] += 1
                result.known_by_rule[(rule, entry)] += 1
                if result.report_known and known is None and self._kept(violation, case) is None:
                    known = (violation, entry)
            elif result.documents_only and is_reading(rule, result.profile, self.contract):
                result.readings.setdefault(rule, f"{getattr(case, 'describe', lambda: '?')()}: {violation.message}")
            elif chosen is not None:
                continue  # the example is the chosen failure's: it names this rule as also broken
            elif kept := self._kept(violation, case):  # kept once, under the group that found it first:
                result.failed_groups.add(self.group)  # what else the example broke is named by that report
                also = result.also.setdefault(kept, [])
                named = list(violation.also) + [filed_rule(v) for v in self.found if v is not violation
                                                and v.failure_class == violation.failure_class]
                also += [r for r in dict.fromkeys(named) if r not in also and r != rule]
                chosen = (None, None)
            else:
                chosen = (violation, None)
        chosen = chosen or known
        if chosen is None or chosen[0] is None:
            return
        violation, entry = chosen
        violation = self._naming_the_rest(violation)
        failure = failure_of(violation)
        failure.known = entry
        self.failures.pop(failure.key, None)  # re-inserted last: `last` is the latest raised
        self.failures[failure.key] = failure
        result.note_failure()
        raise violation.with_(found_type(failure.key))

    def _naming_the_rest(self, violation):
        """The violation raised for the example, naming the rules the example's other
        violations are filed under as also broken (one report for what one result broke)."""
        others = [filed_rule(v) for v in self.found if v is not violation and v.failure_class == violation.failure_class]
        extra = tuple(dict.fromkeys(r for r in others if r not in violation.rules + violation.also))
        if not extra or violation.failure_class == failures.ACCEPTS_INVALID:
            return violation
        named = violation.with_(also=violation.also + extra)
        self.found_after[id(named)] = self.calls_until(violation)
        if id(violation) in self.found_from:
            self.found_from[id(named)] = self.found_from[id(violation)]
        return named

    def _kept(self, violation, case):
        """The kept failure's key the violation is (a NaN result's, its twin's without NaN:
        results.nan_free_key, unless the runtime shows it a bug of its own: fuzz.nan_twins), or None."""
        key = failure_key(self.target.name, violation, case)
        if self.result.has_key(key):
            return key
        nan_free = nan_free_key(key, violation.signature)
        if nan_free is None or not self.result.has_key(nan_free):
            return None
        call = self.calls[self.calls_until(violation) - 1] if self.calls else None
        return None if own_nan_bug(self.target, self.contract, filed_rule(violation), call) else nan_free

    def stopped(self) -> bool:
        return self.fatal[failures.CRASH] >= MAX_CRASH_REPLAYS or self.fatal[failures.HANG] >= MAX_HANG_REPLAYS


