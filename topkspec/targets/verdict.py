"""A target's own verdict on a descriptor, for `topkspec validate FILE --against TARGET`.

    {"target": "directml", "accepted": true|false, "detail": "<HRESULT name or message>"}

A target with a `verdict(descriptor)` method answers itself (directml hands the descriptor to
CreateOperator exactly as written). Any other target is asked by running the case the
descriptor describes on a small ramp input: a result is "accepted", a refusal is not.
"accepted" is null when the target cannot be asked (no case can be read from the descriptor,
or the target declares the case unsupported).
"""
from __future__ import annotations

import math

MAX_ELEMENTS = 1 << 24  # a larger input is not built just to ask


def target_verdict(target, desc, profile=None) -> dict:
    from topkspec import spec
    from topkspec.fuzz.isolation import TargetCrashed, TargetHung
    from topkspec.properties.acceptance import plain_input
    from topkspec.targets.base import Rejected

    own = getattr(target, "verdict", None)
    if own is not None:
        return own(desc)
    answer = {"target": target.name, "accepted": None}
    try:
        case = spec.case_from_descriptor(desc, profile)
    except ValueError as exc:
        return {**answer, "detail": f"not asked: {exc}"}
    if target.index_dtype:
        case = case.with_(index_dtype=target.index_dtype)
    if math.prod(case.shape) > MAX_ELEMENTS:
        return {**answer, "detail": f"not asked: more than {MAX_ELEMENTS} elements"}
    try:
        reason = target.supports(case)
        if reason:
            return {**answer, "detail": f"unsupported: {reason}"}
        values, _ = target.run(case, plain_input(case))
    except Rejected as exc:
        return {**answer, "accepted": False, "detail": str(exc)}
    except (TargetCrashed, TargetHung) as exc:
        return {**answer, "accepted": False, "detail": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # a plain function's way of refusing
        return {**answer, "accepted": False, "detail": f"{type(exc).__name__}: {exc}"}
    return {**answer, "accepted": True, "detail": f"computed values of shape {list(getattr(values, 'shape', []))}"}
