"""A target's own verdict on a descriptor, for `topkspec validate FILE --against TARGET`.

    {"target": "directml", "outcome": "refused", "accepted": false, "detail": "E_INVALIDARG"}

`outcome` is one of: "accepted" (a result came back), "refused" (the target's own error),
"crash" (its process died), "hang" (no answer within the timeout), "adapter error" (the
adapter's own code failed: no verdict on the runtime), "unsupported" (the target declares the
case outside what it expresses) or "not asked" (no case can be read from the descriptor, or
it is too large to build an input for). `accepted` is true or false for the first two and
null for the others.

A target with a `verdict(descriptor)` method answers itself (directml hands the descriptor to
CreateOperator exactly as written). Any other target is asked by running the case the
descriptor describes on a small ramp input.
"""
from __future__ import annotations

import math

MAX_ELEMENTS = 1 << 24  # a larger input is not built just to ask

ACCEPTED, REFUSED, CRASH, HANG, ADAPTER_ERROR, UNSUPPORTED, NOT_ASKED = (
    "accepted", "refused", "crash", "hang", "adapter error", "unsupported", "not asked")


def _answer(target, outcome: str, detail: str) -> dict:
    accepted = {ACCEPTED: True, REFUSED: False}.get(outcome)
    return {"target": target.name, "outcome": outcome, "accepted": accepted, "detail": detail}


def target_verdict(target, desc, profile=None) -> dict:
    from topkspec.properties.acceptance import plain_input
    from topkspec.targets.base import Rejected

    own = getattr(target, "verdict", None)
    if own is not None:
        return _guarded(target, lambda: _own_verdict(target, own(desc)))
    case = _case_of(target, desc, profile)
    if isinstance(case, dict):
        return case

    def ask():
        reason = target.supports(case)
        if reason:
            return _answer(target, UNSUPPORTED, f"unsupported: {reason}")
        try:
            values, _ = target.run(case, plain_input(case))
        except Rejected as exc:
            return _answer(target, REFUSED, str(exc))
        return _answer(target, ACCEPTED, f"computed values of shape {list(getattr(values, 'shape', []))}")

    return _guarded(target, ask)


def _own_verdict(target, answer: dict) -> dict:
    """A target's own verdict() answer with its outcome said."""
    if answer.get("expressible") is False:
        return {**answer, "outcome": NOT_ASKED}
    return {**answer, "outcome": ACCEPTED if answer["accepted"] else REFUSED}


def _case_of(target, desc, profile):
    """The case the descriptor describes, or the "not asked" answer when there is none."""
    from topkspec import spec

    try:
        case = spec.case_from_descriptor(desc, profile)
    except ValueError as exc:
        return _answer(target, NOT_ASKED, f"not asked: {exc}")
    if target.index_dtype:
        case = case.with_(index_dtype=target.index_dtype)
    if math.prod(case.shape) > MAX_ELEMENTS:
        return _answer(target, NOT_ASKED, f"not asked: more than {MAX_ELEMENTS} elements")
    return case


def _guarded(target, ask) -> dict:
    """ask() with a crash, a hang or the adapter's own failure as a verdict of its own (a
    Rejected is handled by ask; anything else a Target raises is its adapter breaking)."""
    from topkspec.targets.isolation import TargetCrashed, TargetHung
    from topkspec.targets.base import AdapterError, describe_error

    try:
        return ask()
    except TargetCrashed as exc:
        return _answer(target, CRASH, f"the target crashed: {exc}")
    except TargetHung as exc:
        return _answer(target, HANG, f"the target hung: {exc}")
    except AdapterError as exc:
        return _answer(target, ADAPTER_ERROR, f"the adapter broke: {exc}")
    except Exception as exc:
        return _answer(target, ADAPTER_ERROR, f"the adapter broke: {describe_error(exc)}")
