"""Argument checks for the public strategies, as Hypothesis's own strategies check theirs: when
the strategy is first used (drawn from, or `.validate()`), with one error type whose message
names the argument and its value (`max_axis_size=0 must be at least 1`).

Helpers that give a value rather than a strategy (plans_for, k_position, special_values,
breakable_rules) check theirs at once, with the same error.

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


def check_k(k, n) -> None:
    """K among an axis's places: 1 <= k <= n."""
    check_int("n", n, at_least=1)
    check_int("k", k, at_least=1)
    if k > n:
        fail("k", k, f"must be at most n={n}")


def check_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        fail(name, value, "must be True or False")
    return value


def check_optional_bool(name: str, value) -> bool | None:
    if value is not None and not isinstance(value, bool):
        fail(name, value, "must be True, False or None")
    return value


def check_profile(value, name: str = "profile"):
    """The parsed profile ("dml:5.0", "onnx:24", ...; a parsed one is taken as it is)."""
    if isinstance(value, spec.Profile):
        return value
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


OPERATORS = ("TOP_K", "TOP_K1", "TopK")


def check_filters(profile, ops, dtypes, max_rank, ranks):
    """The parsed profile, once the filters of valid_cases, case_and_input and plans_for are checked."""
    prof = check_profile(profile)
    check_names("ops", ops, OPERATORS)
    check_names("dtypes", dtypes, spec.dtypes.ALL_VALUE_TYPES)
    check_int("max_rank", max_rank, at_least=1)
    check_ranks("ranks", ranks)
    return prof


def check_sizes(prof, max_axis_size: int, max_total: int, strict_doc: bool) -> None:
    check_bool("strict_doc", strict_doc)
    low = 2 if strict_doc and prof.family == "dml" else 1  # the literal DirectML text: K below the axis size
    why = f"must be at least {low}" + (" under strict_doc (K below the axis size)" if low == 2 else "")
    for name, value in (("max_axis_size", max_axis_size), ("max_total", max_total)):
        check_int(name, value, at_least=1)
        if value < low:
            fail(name, value, why)


def check_plans(prof, plans: tuple, ops, dtypes, ranks, max_rank, *, every_name: bool = False) -> tuple:
    """`plans` (what valid cases draw) when they draw something; with `every_name`, when they
    also draw every operator, value type and rank named: none is dropped in silence."""
    drawn = {"ops": {plan.op for plan in plans}, "dtypes": {t for plan in plans for t in plan.value_types},
             "ranks": {r for plan in plans for r in plan.ranks}}
    for name, asked in (("ops", ops), ("dtypes", dtypes), ("ranks", ranks)) if every_name else ():
        missing = [item for item in asked or () if item not in drawn[name]]
        if missing:
            fail(name, asked, f"names {', '.join(map(repr, missing))}, which no valid case at {prof.name} has "
                              f"(given the other arguments)")
    if not plans:
        raise InvalidStrategyArgument(f"ops={ops!r}, dtypes={dtypes!r}, ranks={ranks!r}, max_rank={max_rank} "
                                      f"leave no operator of {prof.name} to draw")
    return plans


def check_case(name: str, value):
    if not isinstance(value, spec.Case):
        fail(name, value, "must be a topkspec.spec.Case")
    return value
