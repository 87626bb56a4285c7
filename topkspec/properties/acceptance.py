"""Acceptance: valid descriptors run, invalid ones are refused.

A target refuses an input by raising (targets raise `topkspec.targets.base.Rejected`; a plain
callable may raise anything), so here any exception counts as a refusal. The runner is
stricter: it tells a refusal from an adapter that broke (topkspec.targets.base.AdapterError).
"""
from __future__ import annotations

import math

import numpy as np

from topkspec.spec import dtypes
from topkspec.properties.failures import ACCEPTS_INVALID, REJECTS_VALID, Violation
from topkspec.properties.property import ACCEPTANCE, Property, names_the_call, rules

# The rules these checks enforce, as the spec's Rule objects (a typo fails at import).
(VALID_ACCEPTED, INVALID_REJECTED,) = rules(
    "out.valid_accepted", "out.invalid_rejected")


def plain_input(case) -> np.ndarray:
    """A small ramp of the case's type and shape (values repeat for short types)."""
    dt = dtypes.numpy_dtype(case.dtype)
    size = math.prod(case.shape)
    return (np.arange(size) % 100).astype(dt).reshape(case.shape)


def may_refuse(case) -> bool:
    """True for a valid case a target may still refuse: a DirectML K equal to the axis size.
    The DirectML text says K is less than the axis size, DirectML itself accepts K equal to it
    (rule dml.k.max): a target may follow either, and is failed neither way (but one that
    accepts K equal to the axis size must compute it right)."""
    return case.family == "dml" and case.k == case.axis_size


@names_the_call
def check_accepts_valid(case, run, x=None):
    """out.valid_accepted: a valid case runs without being refused (a DirectML K equal to the
    axis size may be refused: see may_refuse)."""
    x = plain_input(case) if x is None else x
    try:
        run(case, x)
    except Exception as exc:
        if may_refuse(case):
            return
        raise Violation(VALID_ACCEPTED,
                        f"{case.dtype}{list(case.shape)} is valid but was refused: {type(exc).__name__}: {exc}",
                        failure_class=REJECTS_VALID, expected="a result",
                        actual=f"{type(exc).__name__}: {exc}") from exc


@names_the_call
def check_rejects_invalid(draw, run, x=None):
    """out.invalid_rejected: a descriptor that breaks a rule is refused, not computed.
    Applies to draws whose breakage a Case can carry (draw.case is not None)."""
    case = draw.case
    if case is None:
        return
    if x is None:
        x = plain_input(case.with_(dtype=case.dtype if case.dtype in dtypes.ALL_VALUE_TYPES else "float32"))
    try:
        result = run(case, x)
    except Exception:
        return
    shape = list(np.shape(result[0])) if isinstance(result, tuple) and result else None
    raise Violation((INVALID_REJECTED,) + tuple(sorted(draw.rules)),
                    f"{case.dtype}{list(case.shape)} is invalid ({draw.how}) but was accepted "
                    f"(values of shape {shape} returned)",
                    failure_class=ACCEPTS_INVALID, expected="a refusal", actual=f"values of shape {shape}")


PROPERTIES = (
    Property("accepts_valid", check_accepts_valid, (VALID_ACCEPTED,), ACCEPTANCE, True),
    Property("rejects_invalid", check_rejects_invalid, (INVALID_REJECTED,), ACCEPTANCE, True),
)
