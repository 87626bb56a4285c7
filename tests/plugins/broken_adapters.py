"""Adapters with bugs of their own (not of the runtime they wrap), and one that refuses
through a library: the runner must tell the two apart."""
from sibling_topk import numpy_topk, strict_library_topk

from topkspec.targets import Rejected, Target


def attribute_error(x, *, axis, k, largest):
    """Broken on every call: an attribute that does not exist (a typo in the adapter)."""
    return x.no_such_attribute, None


def name_error_above_k_2(x, *, axis, k, largest):
    if k > 2:
        return undefined_helper(x)  # noqa: F821 (the bug)
    return numpy_topk(x, axis=axis, k=k, largest=largest)


def returns_values_only(x, *, axis, k, largest):
    values, _ = numpy_topk(x, axis=axis, k=k, largest=largest)
    return values


def wrong_signature(x, axis, k):
    """Takes no `largest`: calling it raises TypeError at the call."""
    return numpy_topk(x, axis=axis, k=k, largest=True)


def refuses_through_a_library(x, *, axis, k, largest):
    """The library it wraps raises TypeError for K out of range: a refusal, not a bug here."""
    return strict_library_topk(x, axis=axis, k=k, largest=largest)


class ValueErrorTarget(Target):
    """A Target refuses with Rejected; this one raises ValueError: an adapter error."""
    name = "value-error-target"
    validates = True

    def run(self, case, x):
        values, indices = numpy_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)
        return values, indices.astype(case.index_dtype)


class RejectingTarget(ValueErrorTarget):
    name = "rejecting-target"

    def run(self, case, x):
        try:
            return super().run(case, x)
        except ValueError as exc:
            raise Rejected(str(exc)) from exc



class NothingSupported(RejectingTarget):
    """Declares every case unsupported: a run against it judges nothing."""
    name = "nothing-supported"

    def supports(self, case):
        return "this target supports nothing"


class OnlyInt8(RejectingTarget):
    """Supports int8 only: most groups judge a few cases, the nan group none."""
    name = "only-int8"

    def supports(self, case):
        return None if case.dtype == "int8" else "int8 only"
