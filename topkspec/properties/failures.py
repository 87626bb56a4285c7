"""The failure classes a run reports (docs/fuzzing.md), and the violation every property raises."""
from __future__ import annotations

WRONG_RESULT = "wrong result"
CRASH = "crash"
# No answer within the run's time limit: a hang, or a call slower than the limit. No rule is in
# question, so it is filed under a pseudo-rule of its own (fuzz.config.TIMEOUT_RULE).
TIMEOUT = "timeout"
HANG = TIMEOUT  # the older name
REJECTS_VALID = "rejects a valid descriptor"
ACCEPTS_INVALID = "accepts an invalid one"
NONDETERMINISTIC = "nondeterministic"
ADAPTER_ERROR = "adapter error"  # the adapter's own code broke: no verdict on the runtime
# The library failed inside its own code on a valid case (an AttributeError, IndexError, KeyError
# from its own frames): no result, and not a refusal either (targets.refusal).
INTERNAL_ERROR = "internal error"
UNSUPPORTED = "unsupported"  # a target's declared gap: shown, never a failure

FAILURE_CLASSES = (WRONG_RESULT, CRASH, TIMEOUT, REJECTS_VALID, INTERNAL_ERROR, ACCEPTS_INVALID, NONDETERMINISTIC,
                   ADAPTER_ERROR)


class Violation(AssertionError):
    """A broken guarantee: which rules (ids, or the spec's Rule objects, kept as ids), what
    broke, where, expected against actual, and the call that broke it.

    Subclasses AssertionError so a property called inside a plain pytest test or a
    Hypothesis @given fails the test like any assertion. Its text stands alone: the rules,
    once, then the message, then the call, 'out.order: sequence (0,) position 1: expected
    3.0 >= next, got 3.0 then 4.0 [K=3, axis=1, largest, sorted]'. The message itself names
    neither, since reports show both on lines of their own.
    """

    def __init__(self, rules, message, *, failure_class=WRONG_RESULT, where=None,
                 expected=None, actual=None, causes=(), also=(), call=None, signature=()):
        if isinstance(rules, str) or hasattr(rules, "id"):  # one rule: its id or the spec's Rule
            rules = (rules,)
        self.rules = tuple(getattr(rule, "id", rule) for rule in rules)
        self.message = message
        self.failure_class = failure_class
        self.where = where  # e.g. {"sequence": (0, 2), "position": 1}
        self.expected = expected
        self.actual = actual
        # General behaviours that explain the result (properties.explain): failures of one
        # target that share one are one bug, reported once (fuzz.results.group_failures).
        self.causes = tuple(causes)
        # Rules the same failure breaks too, found beside it (the example's other violations,
        # a relation its result broke, failures of the same bug): named by its report.
        self.also = tuple(also)
        # What the evidence of the call that broke it shows (properties.evidence.signature): two
        # failures of one rule with different signatures are different bugs, each filed.
        self.signature = tuple(signature)
        self.call = None  # '[K=3, axis=1, largest, sorted]': Case.call_text of the call that broke it
        super().__init__(self.text())
        self.at(call)

    def at(self, call) -> "Violation":
        """Name the call that broke the rule (a Case, or its text), unless one is named already:
        the innermost check knows it best (of a relation's calls, the one whose result broke)."""
        text = call if isinstance(call, str) or call is None else getattr(call, "call_text", lambda: None)()
        if self.call is None and text:
            self.call = text
            self.args = (self.text(),)
        return self

    def text(self) -> str:
        """What the failing test shows: the rules, the message, the call."""
        return f"{', '.join(self.rules)}: {self.message}" + (f" {self.call}" if self.call else "")

    def with_(self, kind=None, **changes) -> "Violation":
        """A copy with `changes` to its fields, as `kind` (default: its own type)."""
        fields = dict(rules=self.rules, message=self.message, failure_class=self.failure_class,
                      where=self.where, expected=self.expected, actual=self.actual, causes=self.causes,
                      also=self.also, call=self.call, signature=self.signature)
        return (kind or type(self))(**{**fields, **changes})

    def to_dict(self) -> dict:
        return {
            "rules": list(self.rules),
            "message": self.message,
            "failure_class": self.failure_class,
            "where": self.where,
            "expected": _plain(self.expected),
            "actual": _plain(self.actual),
            **({"causes": list(self.causes)} if self.causes else {}),
            **({"also": list(self.also)} if self.also else {}),
        }


def _plain(value):
    """JSON-friendly form of numbers and small arrays."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        return tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return repr(value)
