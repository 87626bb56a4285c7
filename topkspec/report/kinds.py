"""Which argument a failure makes (spec.kinds), and that argument in one line, for case.json, the
report's opening, the run's summary and `--fail-on`.

The kind follows from the failure's class, the rule that decides it and the contract the target is
held to, in this order:

- an adapter error has none (spec.kinds.ADAPTER): it argues nothing about the runtime;
- crash: the process died, or gave no answer in time. An exception a library raises from its own
  code while the process lives is not a crash: it is judged by the contract, as a wrong answer is;
- contradicts-itself: the same call repeated gave two answers (out.deterministic), or a property
  that holds the target to itself broke (a Property with `self_consistency`);
- open: the contract leaves the deciding rule open, or the result is right once subnormals compare
  as zero (flushing them is a deliberate choice no document rules out);
- feature-request: a refused value type that the runtime's own kernel table does not list
  (targets.runtimes.kernel_tables);
- own-documentation: the runtime is held to its own API page (its contract is its own), or its
  declared contract changes the point from the standard's text;
- standard: the runtime implements ONNX or DirectML and breaks that text.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from topkspec.properties import failures
from topkspec.spec import kinds
from topkspec.spec.contracts import QUESTIONS, speaks_for, unpromised_rules
from topkspec.spec.profiles import parse_profile
from topkspec.spec.queries import profile_text, rule_statement

# The rules a result that is right once subnormals compare as zero can break: what is selected,
# its order and ties, and its bits (a runtime that flushes its output too).
_VALUE_RULES = ("out.values.select", "out.order", "out.exact", "out.ties.index_order", "out.ties.kth_place",
                "out.unsorted.set", "out.values.gather")


class Kind(NamedTuple):
    """A failure's kind (an id of spec.kinds) and the argument it makes, in one sentence."""

    id: str
    argument: str

    @property
    def words(self) -> str:
        """The kind in words: 'contradicts itself', 'feature request', ..."""
        return kinds.WORDS[self.id][0]

    def line(self) -> str:
        """'Kind: contradicts itself — <argument>'."""
        return f"Kind: {self.words} — {self.argument}"


def kind_of(failure, result) -> Kind:
    """The kind of a failure of the run `result` (its contract and profile)."""
    return classify(failure, getattr(result, "contract", None), getattr(result, "profile", None))


def classify(failure, contract=None, profile=None, properties=None) -> Kind:
    """The kind of `failure` for a target held to `contract` (None: its profile's text) at `profile`;
    `properties`: where to look up the property it broke (default: the catalogue's)."""
    profile = profile or failure.case.profile
    klass, rule = failure.failure_class, failure.rule
    if klass == failures.ADAPTER_ERROR:
        return Kind(kinds.ADAPTER, "the adapter's own code failed, so nothing is known of the runtime yet")
    if klass == failures.CRASH:
        return Kind(kinds.CRASH, f"the process died ({failure.violation.actual}); no answer is allowed to do that")
    if klass == failures.TIMEOUT:
        return Kind(kinds.CRASH, f"no answer within the time limit ({failure.violation.actual}): a hang, or a "
                                 f"call slower than the limit")
    if klass == failures.NONDETERMINISTIC or rule == "out.deterministic":
        return Kind(kinds.CONTRADICTS_ITSELF, "the same call, repeated on the same input, gave two different "
                                              "answers; no document is needed to say one of them is wrong")
    if _holds_to_itself(failure, properties):
        return Kind(kinds.CONTRADICTS_ITSELF, f"two calls ({failure.relation.replace('_', ' ')}) gave answers that "
                                              f"no reading of what its contract leaves open allows together")
    if contract is not None:
        left_open = unpromised_rules(contract).get(rule)
        if left_open is not None:
            return Kind(kinds.OPEN, f"{contract.name} leaves {QUESTIONS[left_open.point]} open "
                                    f"({left_open.value.replace('_', ' ')}); its choice is a divergence, not a bug")
    if klass == failures.WRONG_RESULT and rule in _VALUE_RULES and subnormals_as_zero(failure):
        return Kind(kinds.OPEN, "the result is right once subnormals compare as zero; flushing them is a "
                                "deliberate choice no document rules out, so it is a divergence, not a bug")
    if klass == failures.REJECTS_VALID:
        request = _feature_request(failure, profile)
        if request is not None:
            return request
    return _by_contract(failure, contract, profile)


def _holds_to_itself(failure, properties=None) -> bool:
    """Whether the property the failure broke holds a target to itself (Property.self_consistency)."""
    from topkspec.properties.catalogue import CATALOGUE

    properties = CATALOGUE if properties is None else properties
    props = [p for p in properties if failure.rule in p.rule_ids or getattr(p, "name", None) == failure.relation]
    return any(getattr(prop, "self_consistency", False) for prop in props)


def _feature_request(failure, profile) -> Kind | None:
    """A refused value type that the runtime's own kernel table leaves out, or None."""
    from topkspec.targets.runtimes.kernel_tables import kernel_table

    table = kernel_table(failure.target)
    prof = parse_profile(getattr(failure.case, "profile", None) or profile)
    dtype = getattr(failure.case, "dtype", None)
    if table is None or prof.family != "onnx" or dtype is None:
        return None
    listed = table.types_at(int(prof.requested_opset or prof.opset))
    if listed is None or dtype in listed:
        return None
    return Kind(kinds.FEATURE_REQUEST,
                f"{failure.target} does not implement TopK for {dtype} at {prof.name}: its kernel table "
                f"({table.title}, {table.url}, as release {table.release} registers it) lists "
                f"{', '.join(listed)}; {profile_text(prof)} allows {dtype}. A request for the type, not a bug")


def standard_name(profile) -> str:
    """'ONNX TopK-24' or "DirectML's text at DML_FEATURE_LEVEL_5_0": the standard a profile judges by."""
    prof = parse_profile(profile)
    if prof.family == "onnx":
        return profile_text(prof)
    return f"DirectML's text at DML_FEATURE_LEVEL_{prof.level_name}"


def _by_contract(failure, contract, profile) -> Kind:
    """own-documentation or standard: whose text the deciding rule stands on for this contract."""
    rule = failure.rule
    statement = rule_statement(rule, profile, contract)
    reading = "as its text states it" if not statement.is_reading else "by our reading of its text"
    promise = speaks_for(contract, rule)
    if contract is None or (contract.implements != "own" and promise is None):
        by = contract.name if contract is not None else "the target"
        return Kind(kinds.STANDARD, f"it breaks {standard_name(profile)}, which {by} implements ({reading}: "
                                    f"rule {rule})")
    if promise is None:  # plain correctness, which the page promises by naming the operation
        page = contract.promises[0]
        return Kind(kinds.OWN_DOCUMENTATION, f"{page.title} ({page.url}) promises the top K of its input; this "
                                             f"answer is not that (rule {rule}, plain correctness)")
    how = f'"{promise.quote}"' if promise.quote else "its declared contract"
    read = "" if promise.status == "documented" else f", by our reading: {promise.reason}"
    where = f"{promise.title} ({promise.url})" if promise.url else promise.title
    return Kind(kinds.OWN_DOCUMENTATION, f"{where} promises {QUESTIONS[promise.point]}: "
                                         f"{promise.value.replace('_', ' ')}, {how}{read} (rule {rule})")


def _subnormal(x: np.ndarray) -> np.ndarray:
    """Where `x` (a float array) holds a subnormal."""
    import ml_dtypes

    wide = np.abs(x.astype(np.float64))
    tiny = float(ml_dtypes.finfo(x.dtype).tiny)
    return (wide > 0) & (wide < tiny)


def _flushed(x: np.ndarray) -> np.ndarray:
    """`x` with each subnormal replaced by a zero of its sign."""
    zeros = np.where(np.signbit(x.astype(np.float64)), -0.0, 0.0)
    return np.where(_subnormal(x), zeros.astype(x.dtype), x)


def subnormals_as_zero(failure) -> bool:
    """Whether the failing call's result is right once subnormals compare as zero: the input
    holds subnormals and no NaN, each value returned is the input's element at its index, and
    the values, subnormals read as zero, are those the reference gives on the input with its
    subnormals flushed (in order; ties in any order)."""
    from topkspec.spec.reference import float_has_nan, reference_topk

    case, x = failure.case, failure.x
    out = next((o for o in reversed(failure.outputs or []) if o is not None), None)
    if x is None or out is None or not hasattr(case, "axis"):
        return False
    x = np.asarray(x)
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        return False
    if float_has_nan(x) or not _subnormal(x).any():
        return False
    values = np.asarray(out[0])
    if values.dtype != x.dtype:
        return False
    try:
        want, _ = reference_topk(_flushed(x), axis=case.axis, k=case.k, largest=case.largest)
    except (ValueError, IndexError):
        return False
    got, indices = _flushed(values), np.asarray(out[1])
    if got.shape != want.shape or indices.shape != want.shape or indices.dtype.kind not in "iu":
        return False
    axis = case.axis % x.ndim
    if indices.size and (indices.min() < 0 or indices.max() >= x.shape[axis]):
        return False
    at = np.take_along_axis(x, indices.astype(np.int64), axis=axis)
    bits = f"u{x.dtype.itemsize}"
    same = (values.view(bits) == at.view(bits)) | (_subnormal(at) & (values.astype(np.float64) == 0))
    if not same.all():  # each value the input's element at its index, bit for bit (or that subnormal flushed)
        return False
    got, want = got.astype(np.float64), np.asarray(want).astype(np.float64)
    if not case.sorted:  # any order: compared sorted
        got, want = np.sort(got, axis=case.axis), np.sort(want, axis=case.axis)
    return bool(np.array_equal(got, want))


def kind_title(kind: Kind, stack, failure, title: str) -> str:
    """A report's title worded for its kind: a feature request asks for the type, a divergence
    says it is none; any other kind keeps the bug's title."""
    if kind.id == kinds.FEATURE_REQUEST:
        return (f"Feature request: {stack.label} for {failure.case.dtype} input, which "
                f"{standard_name(failure.case.profile)} allows")
    if kind.id == kinds.OPEN:
        return f"Divergence, not a bug: {title}"
    return title


def kind_paragraph(kind: Kind) -> list[str]:
    """The report's opening line: which argument it makes, and what a reader does with it."""
    line = f"**Kind: {kind.words}** (`{kind.id}`) — {kind.argument}."
    if kind.id == kinds.FEATURE_REQUEST:
        line += " File it as a feature request; `--fail-on` without `feature-request` does not fail CI on it."
    elif kind.id == kinds.OPEN:
        line += " Do not file it: it belongs in the divergence table (docs/divergence.md), and never fails a run."
    return [line, ""]
