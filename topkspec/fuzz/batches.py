"""More than one case per Hypothesis example, for the groups whose cases are each one call.

Hypothesis spends about as long on the bookkeeping of an example as topkspec spends drawing a
case (its floor, a `@given` over two integers, runs about 1,200 examples a second on a 2-core
machine), and a worker process answers a call after a round trip whatever the call holds. So
the groups that call the target draw a list of cases per example: the bookkeeping is paid once
per list, and, in the groups whose cases are each one call as drawn (valid, nan), so is the
round trip (fuzz.prefetch). Each case is still checked on its own, and counted as one example of
the run's budget; a failing list shrinks, deleting the cases that do not fail, down to the one
case a report needs (Hypothesis's list shrinking), and each case's failure records its own
case and calls, whichever case of the list it was.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

# The groups whose examples are lists of their cases (a validator's groups are not: it is
# handed descriptors, which it judges in microseconds).
BATCHED_GROUPS = ("valid", "nan", "metamorphic", "deterministic", "self", "invalid")
# Those whose cases are each one call as drawn, sent to a worker together.
PREFETCHED_GROUPS = ("valid", "nan")
# The longest list; Hypothesis draws lists of about 7.6 cases on average at this length
# (500 seeded draws), so a search of N cases takes about N / CASES_PER_EXAMPLE examples.
MAX_CASES_PER_EXAMPLE = 16
CASES_PER_EXAMPLE = 7
# A search of fewer cases than this asks for an example per case: its first lists are short
# (the first is one case, the simplest, every search's first), and a search that drew too few
# would be topped up by another whose first case is that simplest one again.
SMALL_SEARCH = 4 * CASES_PER_EXAMPLE
# A search that cannot be topped up (the pytest front end: one Hypothesis test per group)
# counts on this many cases a list: its first lists are short (about 3.7 cases in the first
# three of a seeded search, 4.9 in the first ten), and it must reach its share.
CASES_PER_LONE_EXAMPLE = 3


def batched(group: str) -> bool:
    """Whether `group`'s examples are lists of cases."""
    return group in BATCHED_GROUPS


def prefetched(group: str) -> bool:
    """Whether the calls of `group`'s cases go to a worker process together."""
    return group in PREFETCHED_GROUPS


def example_strategy(group: str, strategy):
    """The strategy a group's Hypothesis test draws from: lists of its cases for a batched
    group (shrinking to one case), the group's own strategy otherwise."""
    if not batched(group):
        return strategy
    return st.lists(strategy, min_size=1, max_size=MAX_CASES_PER_EXAMPLE)


def items(group: str, data) -> list:
    """The cases (items) of one drawn example."""
    return list(data) if batched(group) else [data]


def searches_for(group: str, cases: int, *, topped_up: bool = True) -> int:
    """How many Hypothesis examples a search of `cases` cases asks for (at least one). Its
    first examples are short lists (the first is one case), so a small search asks for an
    example per case; a search stops checking at its share (GroupContext.case_limit), and every
    list drawn past it is drawn for nothing, so a large one does not ask for many more than a
    run that tops a short search up (topped_up) needs; one that cannot asks for a list per
    CASES_PER_LONE_EXAMPLE cases."""
    if not batched(group) or cases < SMALL_SEARCH:
        return max(1, cases)
    return math.ceil(cases / (CASES_PER_EXAMPLE if topped_up else CASES_PER_LONE_EXAMPLE))
