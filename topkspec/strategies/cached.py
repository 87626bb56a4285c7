"""Strategy constructors that keep what they build.

Composite strategies draw from small strategies whose arguments repeat from one example to the
next; building them anew every draw costs Hypothesis a validation pass each time, a large share
of generation time. These return the same strategy object for the same arguments.
"""
from __future__ import annotations

from functools import lru_cache

from hypothesis import strategies as st


@lru_cache(maxsize=4096)
def integers(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


@lru_cache(maxsize=4096)
def sampled(values: tuple) -> st.SearchStrategy:
    return st.sampled_from(values)
