"""Argument checks for the public strategies, as Hypothesis's own strategies check theirs: when
the strategy is first used (drawn from, or `.validate()`), with one error type whose message
names the argument and its value (`max_axis_size=0 must be at least 1`).

`InvalidStrategyArgument` is Hypothesis's `InvalidArgument` (what a test expects from a strategy
given a bad argument) and a `ValueError` (what callers of topkspec catch for bad input).
"""
from __future__ import annotations

from hypothesis.errors import InvalidArgument

from topkspec import spec
from topkspec.spec import dtypes


class InvalidStrategyArgument(InvalidArgument, ValueError):
    """A strategy was given a bad argument; the message names it and its value."""


def fail(name: str, value, what: str):
    raise InvalidStrategyArgument(f"{name}={value!r} {what}")


def check_int(name: str, value, *, at_least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        fail(name, value, "must be an integer")
    if value < at_least:
        fail(name, value, f"must be at least {at_least}")
    return value


def check_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        fail(name, value, "must be True or False")
    return value


def check_profile(value, name: str = "profile"):
    """The parsed profile ("dml:5.0", "onnx:24", ...)."""
    if not isinstance(value, str):
        fail(name, value, "must be a spec profile such as 'onnx:24' or 'dml:5.0'")
    try:
        return spec.parse_profile(value)
    except ValueError as exc:
        fail(name, value, f"is not a spec profile: {exc}")


def check_dtype(name: str, value) -> str:
    if value not in dtypes.ALL_VALUE_TYPES:
        fail(name, value, f"must be a value type name ({', '.join(dtypes.ALL_VALUE_TYPES)})")
    return value


def check_names(name: str, value, allowed) -> tuple | None:
    """None, or a non-empty collection of names each among `allowed` (not a single string)."""
    if value is None:
        return None
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        fail(name, value, "must be a list of names, or None")
    names = tuple(value)
    if not names:
        fail(name, value, "must name at least one, or be None for all")
    unknown = [item for item in names if item not in allowed]
    if unknown:
        fail(name, value, f"names {', '.join(map(repr, unknown))}, not one of {', '.join(allowed)}")
    return names


def check_ranks(name: str, value) -> tuple | None:
    if value is None:
        return None
    if isinstance(value, (str, int)) or not hasattr(value, "__iter__"):
        fail(name, value, "must be a list of ranks, or None")
    ranks = tuple(value)
    if not ranks:
        fail(name, value, "must hold at least one rank, or be None for all")
    for rank in ranks:
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            fail(name, value, f"holds {rank!r}: every rank must be an integer of at least 1")
    return ranks


def check_case(name: str, value):
    if not isinstance(value, spec.Case):
        fail(name, value, "must be a topkspec.spec.Case")
    return value
