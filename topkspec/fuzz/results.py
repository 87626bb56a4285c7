"""What a run produces: its failures (shrunk examples) and the run's result and verdict."""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from topkspec.properties import failures
from topkspec.properties.catalogue import RELATION_OF_RULE
from topkspec.properties.failures import Violation
from topkspec.fuzz.config import EXIT_INTERRUPTED, EXIT_VACUOUS, MIN_JUDGED_SHARE
from topkspec.spec.kinds import DEFAULT_FAIL_ON, fails_run


# How a failure is observed, which decides what a report's repro.py checks: by failure class,
# then by the rule of a property that relates calls (catalogue.RELATION_OF_RULE); any other
# failure is one call's result.
_CLASS_RELATIONS = {failures.CRASH: "crash", failures.HANG: "hang", failures.REJECTS_VALID: "accept",
                    failures.INTERNAL_ERROR: "accept",
                    failures.ACCEPTS_INVALID: "reject", failures.NONDETERMINISTIC: "deterministic",
                    failures.ADAPTER_ERROR: "adapter"}
# Relations observed on one call, the example's last.
ONE_CALL_RELATIONS = ("result", "crash", "hang", "accept", "adapter")


def filed_rule(violation: Violation) -> str:
    """The rule a violation is filed under, the one that decides it: for an accepted invalid
    descriptor, the descriptor rule it breaks; otherwise the first rule the violation names."""
    rules = violation.rules
    if violation.failure_class == failures.ACCEPTS_INVALID and len(rules) > 1:
        return rules[1]
    return rules[0]


def failure_key(target: str, violation: Violation, case) -> tuple:
    """What makes a failure distinct: (target, rule, class); for a refused valid case, its
    value type too (each type a runtime refuses is a finding of its own, once per type and
    profile); for a wrong result, what the evidence shows (the violation's signature: wrong
    values, or the right ones out of order, or only ties out of index order; NaN in the input
    or not), so that different bugs breaking one rule are each found, shrunk and filed."""
    key = (target, filed_rule(violation), violation.failure_class)
    if violation.failure_class == failures.REJECTS_VALID:
        value_type = (violation.where or {}).get("value type") or _named_type(violation, case)
        if value_type is not None:
            key += (value_type,)
    elif violation.failure_class == failures.WRONG_RESULT and violation.signature:
        key += (violation.signature,)
    return key


def _named_type(violation: Violation, case) -> str | None:
    """The case's value type when the refusal's own message names it ('unsupported dtype
    UInt32'): a refusal of the type, one finding per type; None for a refusal of anything else."""
    dtype = getattr(case, "dtype", None)
    said = str(violation.actual or "").lower().replace("_", "").replace(" ", "")
    return dtype if dtype and dtype.replace("_", "") in said else None


@dataclass
class Failure:
    """One distinct failure: the shrunk example and how it was observed.

    `case` and `x` are those of the call that failed: a metamorphic example also calls with
    other K or axes than it drew, and a wrong result, refusal, crash or hang of such a call is
    that call's (and what repro.py runs); `drawn` then keeps the case the example drew."""

    target: str
    group: str
    violation: Violation
    case: object  # the judged Case of the call that failed
    x: np.ndarray | None
    calls: list  # [(case, x)] every target call of the example, in order
    outputs: list  # [(values, indices) or None] per call
    draw: object = None  # the InvalidDraw for a rejection failure
    report_dir: str | None = None
    drawn: object = None  # the example's own case, when the call that failed was another
    known: object = None  # the KnownEntry declaring it (reported with --report-known only)
    # The calls its process made before it, which it may need (fuzz.confirm): `earlier` as the
    # run saw them, `prior` the fewest of them after which it fails in a fresh process (repro.py
    # makes them first), and what replaying it in a fresh process showed (a Confirmation).
    earlier: list = field(default_factory=list, repr=False)
    prior: list = field(default_factory=list)
    confirmation: object = None
    nan_alone: bool = False  # a NaN failure the runtime showed apart from its twin (fuzz.nan_twins)

    def __post_init__(self):
        if self.calls and self.draw is None and self.relation in ONE_CALL_RELATIONS:
            case, self.x = self.calls[-1]
            if case != self.case:
                self.drawn, self.case = self.case, case

    @property
    def rule(self) -> str:
        """The rule the failure is filed under (see filed_rule)."""
        return filed_rule(self.violation)

    @property
    def failure_class(self) -> str:
        return self.violation.failure_class

    @property
    def relation(self) -> str:
        """How the failure is observed: crash, hang, accept, reject, result, or the name of the
        property whose relation between calls broke (prefix, axis_moves, topk_equals_topk1,
        deterministic)."""
        if self.failure_class in _CLASS_RELATIONS:
            return _CLASS_RELATIONS[self.failure_class]
        return RELATION_OF_RULE.get(self.rule, "result")

    @property
    def key(self) -> tuple:
        return failure_key(self.target, self.violation, self.case)

    @property
    def dtype(self) -> str | None:
        return getattr(self.case, "dtype", None)


@dataclass
class RunResult:
    target: str
    version: str
    profile: str
    settings: str | None
    seed: int | None
    max_examples: int
    examples: Counter = field(default_factory=Counter)  # per group
    checks: Counter = field(default_factory=Counter)  # examples per property, counted once its check ran
    held: Counter = field(default_factory=Counter)  # examples per rule that reached it and kept it
    broken_seen: Counter = field(default_factory=Counter)  # examples per rule that broke it, reported or not
    known: object = None  # the KnownList the run declared (--known), or None
    known_seen: Counter = field(default_factory=Counter)  # examples per KnownEntry that matched
    known_by_rule: Counter = field(default_factory=Counter)  # examples per (rule, KnownEntry) that matched
    known_failures: list = field(default_factory=list)  # known deviations shrunk (--report-known)
    report_known: bool = False  # shrink and report known deviations too
    computes: bool = True  # False for a validator: no result rule applies to it
    documents_only: bool = False  # judge by the documents alone: our readings broken are notes
    readings: dict = field(default_factory=dict)  # rule -> first example, for readings noted (documents_only)
    coverage: Counter = field(default_factory=Counter)  # (dtype, rank)
    graphs: Counter = field(default_factory=Counter)  # ONNX graph context (Case.context, None: one node)
    layouts: Counter = field(default_factory=Counter)  # the layout group's draws: "input permuted", "flag ..."
    unsupported: Counter = field(default_factory=Counter)  # reason
    contract: object = None  # the Contract the run held the target to (spec.contracts)
    descriptor_rules: tuple = ()  # the descriptor rules the invalid group could break (each gets a verdict)
    not_runnable: int = 0  # invalid descriptors no Case carries (judged by `topkspec validate`)
    refused_k_at_axis_size: int = 0  # DirectML K equal to the axis size refused: allowed, not judged
    strict_doc: bool = False
    failures: list = field(default_factory=list)
    # Failures that failed in no fresh process, not even after the calls made before them:
    # not filed, never a failure of the run; [(Failure, folder holding its history or None)]
    unreproduced: list = field(default_factory=list)
    also: dict = field(default_factory=dict)  # failure key -> rules other results of that failure broke too
    # Groups that found a failure, kept or not (a failure another group found first is kept once)
    failed_groups: set = field(default_factory=set)
    errors: list = field(default_factory=list)  # (group, message): the suite itself failed
    seconds: float = 0.0  # the groups' examples
    start_seconds: float = 0.0  # before the first example: the target's start (when the run made it), the plan
    timing: Counter = field(default_factory=Counter)  # target_s, checks_s, body_s
    notes: list = field(default_factory=list)  # lines about how the run ran (isolation, ...)
    in_worker: bool = False  # the target ran in a worker process (topkspec.targets.isolation)
    timeout: float | None = None  # the seconds a call may take (the target's own limit when longer)
    history: object = None  # the calls of a target run in this process (a CallHistory), for fuzz.confirm
    interrupted: bool = False  # stopped by Ctrl-C: what it holds is the run so far
    judged: Counter = field(default_factory=Counter)  # per group: examples whose verdict counts
    budgets: dict = field(default_factory=dict)  # per group: its share of the budget
    # The first failure raised: seconds from the first example, and examples run by then
    first_failure: tuple | None = None
    clock: float | None = None  # perf_counter() when the first example began
    # Per failure the reducer took on (fuzz.minimal): (key, case before, case after, seconds, target checks,
    # steps kept)
    reductions: list = field(default_factory=list)
    fail_on: tuple = DEFAULT_FAIL_ON  # the kinds whose failures fail the run (--fail-on; spec.kinds)
    cases: int = 0  # calls made on the target by the searches (a case: one TopK call and its checks)
    call_log: list | None = None  # [(case, x)] of those calls, when the run keeps them (RunConfig.keep_calls)

    def note_failure(self) -> None:
        """Keep when the first failure was raised (time to the first failure)."""
        if self.first_failure is None and self.clock is not None:
            self.first_failure = (time.perf_counter() - self.clock, self.total_examples)

    def has_failure(self, failure) -> bool:
        """Whether a failure with `failure`'s key (see failure_key) is kept already."""
        return self.has_key(failure.key)

    def has_key(self, key) -> bool:
        return any(f.key == key for f in self.failures + self.known_failures) or \
            any(f.key == key for f, _ in self.unreproduced)  # replayed already, and failed nowhere

    def groups_that_failed(self) -> set:
        """The groups that found a failure, whether it was kept under them or under a group
        that found it first."""
        return self.failed_groups | {f.group for f in self.failures}

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
        said = self.groups_that_failed() | {group for group, _ in self.errors}
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
        if self.errors or self.failing():
            return 1
        return EXIT_VACUOUS if self.vacuous else 0

    def failures_by_class(self) -> Counter:
        return Counter(f.failure_class for f in self.failures)

    def kind(self, failure):
        """The failure's Kind (report.kinds): which argument it makes, in the run's contract."""
        from topkspec.report.kinds import kind_of

        return kind_of(failure, self)

    def failures_by_kind(self) -> Counter:
        return Counter(self.kind(f).id for f in self.failures)

    def failing(self) -> list:
        """The failures that fail the run: those of a kind in `fail_on` (spec.kinds.fails_run)."""
        return [f for f in self.failures if fails_run(self.kind(f).id, self.fail_on)]



def record_failure(result: RunResult, failure: Failure) -> bool:
    """Add a failure unless one with its key is there; True if added. A known deviation (shrunk
    with --report-known) goes to the known failures: reported, never a failure of the run."""
    if failure.known is None:
        result.failed_groups.add(failure.group)
    if result.has_failure(failure):
        return False
    (result.failures if failure.known is None else result.known_failures).append(failure)
    return True


def nan_free_key(key, signature):
    """The key a wrong result with NaN in its input (filed under `key`, read as `signature`)
    would have without the NaN, or None where it had no NaN: a kept failure under that key is
    its twin, the same bug, NaN aside (one report for a bug the nan group and the valid group
    both meet, on whatever types each drew), unless the runtime shows it a bug of its own
    (fuzz.nan_twins)."""
    kind, nan = (tuple(signature) + (None, None))[:2]
    return key[:3] + ((kind, "no NaN"),) if nan == "NaN" else None


def group_failures(result: RunResult) -> None:
    """One report per bug. A failure's report names, beside its own example's rules, what the
    results passed over as that failure broke too (result.also). Failures that one general
    behaviour explains (a cause their violations name: see properties.explain) are one bug,
    filed under the rule that decides it first (the documents' before our reading, then the
    spec's order) and naming the others' rules; a failure that several causes explain goes to
    a cause that another failure names alone, and rules its cause excuses are not named."""
    from topkspec.properties.explain import EXCUSES
    from topkspec.fuzz.verdicts import is_reading
    from topkspec.spec import RULE_LIST

    for failure in result.failures:
        _name_also(failure, result.also.get(failure.key, ()))
    alone = {}
    for failure in result.failures:
        if len(failure.violation.causes) == 1:
            alone.setdefault(failure.violation.causes[0], []).append(failure)
    order = {rule.id: number for number, rule in enumerate(RULE_LIST)}
    for cause, members in alone.items():
        members = members + [f for f in result.failures if len(f.violation.causes) > 1
                             and next((c for c in f.violation.causes if c in alone), None) == cause]
        head = min((f for f in members if len(f.violation.causes) == 1),
                   key=lambda f: (is_reading(f.rule, result.profile), order.get(f.rule, len(order))))
        excused = EXCUSES.get(cause, ())
        for failure in members:
            if failure is not head:
                named = failure.violation.rules + failure.violation.also
                _name_also(head, [r for r in named if r not in excused])
                result.failures.remove(failure)
        for rule in excused:  # broken by no failure left: those examples broke the tie order only
            if not any(rule in f.violation.rules + f.violation.also for f in result.failures):
                result.broken_seen.pop(rule, None)
    for failure in list(result.failures):  # the same wrong result with NaN and without: one bug, NaN aside
        nan_free = nan_free_key(failure.key, failure.violation.signature)
        twin = next((f for f in result.failures if f.key == nan_free), None)
        if twin is not None and not failure.nan_alone:
            _name_also(twin, failure.violation.rules + failure.violation.also)
            result.failures.remove(failure)
    bugs = {}
    for failure in result.failures:
        bug = bug_of(failure)
        if bug is not None:
            bugs.setdefault(bug, []).append(failure)
    for members in bugs.values():  # one bug shrunk under several rules: filed once
        head = min(members, key=lambda f: (is_reading(f.rule, result.profile), order.get(f.rule, len(order))))
        for failure in members:
            if failure is not head:
                _name_also(head, failure.violation.rules + failure.violation.also)
                result.failures.remove(failure)


def bug_of(failure):
    """What the failures of one bug share, read off each one's shrunk evidence
    (properties.evidence), or None where it says nothing: wrong values (and of which value
    type: garbage in int8 is not garbage in uint8), the right values out of order, or ties
    only out of index order, with the input's traits (NaN, subnormals, zeros of both signs).
    Wrong results of one target that share it are one bug, whichever rule each shrank under."""
    from topkspec.properties import evidence

    if failure.failure_class != failures.WRONG_RESULT or failure.relation != "result" or failure.x is None:
        return None
    output = failure.outputs[-1] if failure.outputs else None
    if output is None:
        return None
    try:
        kind = evidence.diagnosis(failure.case, failure.x, *output)
    except Exception:  # an output the evidence cannot be read from
        return None
    if kind not in (evidence.VALUES, evidence.ORDER, evidence.TIES):
        return None
    return (failure.target, kind, failure.dtype if kind == evidence.VALUES else None,
            evidence.input_traits(failure.x))


def _name_also(failure, rules) -> None:
    """Add `rules` to those the failure's report names as also broken."""
    violation = failure.violation
    violation.also += tuple(r for r in dict.fromkeys(rules) if r not in violation.rules + violation.also)
