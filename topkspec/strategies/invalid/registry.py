"""The breakers' registry: each descriptor rule with a check has one function that breaks it.

    @breaks("dml.k.positive")
    def _k_zero(draw, prof, rule):
        case = small_case(draw, prof.name).with_(k=0)
        return broken(prof, case, {rule}, "K = 0", case=case)

A breaker takes a composite's `draw`, the parsed profile and the rule asked for, and returns
an InvalidDraw. `BREAKERS[rule](profile)` is the strategy of those draws at `profile`, or None
where the profile gives no way to break the rule (the breaker's `when` says so).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from hypothesis import event, strategies as st

from topkspec import spec
from topkspec.spec import Case
from topkspec.spec.rules import IMPOSSIBLE_RULES
from topkspec.strategies.cases import case_drawer


# rule id -> (profile -> strategy of InvalidDraw, or None where the profile cannot break it)
BREAKERS: dict = {}


@dataclass(frozen=True)
class InvalidDraw:
    """A descriptor that breaks `rules`, judged at `profile` (the level/opset it names).

    `case` is the Case the descriptor describes when the breakage is expressible as one
    (K = 0, K > n, axis out of range, unsupported value/index type or rank), for checking that
    a runtime rejects it; otherwise None."""
    descriptor: dict
    rules: frozenset
    profile: str
    case: Case | None = None
    strict_doc: bool = False
    how: str = ""  # what was broken, in words

    def describe(self) -> str:
        return f"{', '.join(sorted(self.rules))}: {self.how}"

    @property
    def impossible(self) -> bool:
        """True when no TopK can compute the case (K or axis out of range), so any
        implementation must refuse it; False when it breaks what the profile supports (a type,
        rank or index type), which an implementation that does not know profiles may compute."""
        return self.case is not None and self.rules <= IMPOSSIBLE_RULES


def breaks(*rules: str, when=None):
    """Register `fn(draw, prof, rule) -> InvalidDraw` as the breaker of `rules`; `when(prof)`
    says whether a profile can break them at all (default: every profile)."""
    def register(fn):
        for rule in rules:
            BREAKERS[rule] = lambda profile, rule=rule: _strategy(fn, rule, when, profile)
        return fn
    return register


@lru_cache(maxsize=1024)
def _strategy(fn, rule: str, when, profile: str):
    prof = spec.parse_profile(profile)
    if when is not None and not when(prof):
        return None

    @st.composite
    def broken_descriptor(draw):
        return fn(draw, prof, rule)

    return broken_descriptor()


@lru_cache(maxsize=256)
def _small_cases(profile: str, ops, ranks, max_rank: int):
    # any_rank: the rank breaker draws ranks the profile lacks
    return case_drawer(profile, ops=ops, ranks=ranks, max_rank=max_rank, max_axis_size=64, max_total=512,
                       any_rank=True)


def small_case(draw, profile: str, *, ops=None, ranks=None, max_rank: int = 8) -> Case:
    """A valid case of `profile` to break, small (at most 512 elements, axes to 64)."""
    return _small_cases(profile, None if ops is None else tuple(ops), None if ranks is None else tuple(ranks),
                        max_rank)(draw)


def pick(draw, options):
    """One of `options` (a sequence built for this draw)."""
    return draw(st.sampled_from(tuple(options)))


def broken(prof, case_or_desc, rules, how: str, *, case=None, strict_doc=False) -> InvalidDraw:
    """The InvalidDraw of a descriptor (or of a Case's descriptor) that breaks `rules`."""
    desc = case_or_desc if isinstance(case_or_desc, dict) else spec.descriptor(case_or_desc)
    event(f"invalid: {', '.join(sorted(rules))}")
    name = prof if isinstance(prof, str) else prof.name
    return InvalidDraw(descriptor=desc, rules=frozenset(rules), profile=name, case=case,
                       strict_doc=strict_doc, how=how)
