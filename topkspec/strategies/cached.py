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



# Seeds for numpy as 4 bytes (little-endian), shrinking to 0. Bytes, not an integer: Hypothesis
# copies a draw onto others of the same kind to make duplicates, and a seed copied onto a size
# or K would push them to their smallest values.
SEED_BYTES = st.binary(min_size=4, max_size=4)


def seed(draw) -> int:
    return int.from_bytes(draw(SEED_BYTES), "little")
