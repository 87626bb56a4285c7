"""One round trip for the calls of an example that holds many cases (fuzz.batches).

A target in a worker process answers each call after a round trip: the request crosses to
the worker, the worker wakes, the answer crosses back and the run wakes. For an example of
many cases, the calls each case makes as drawn are sent together first (submit_many), the
reference works out each case's result while the worker computes, and each case's checks
then take their call's answer from here instead of asking (GroupContext.raw_run). A case the
run would not ask (no kernel for its type, not offered by the contract) is left out, as is
the calls the worker answered before it crashed or hung on one: those lost their answers
with the worker and are asked again on their own. The call that crashed or hung keeps its
answer, and its case is checked first (in_order), while the worker's history still holds the
calls made before it, as its report's earlier calls.
"""
from __future__ import annotations

import time

from topkspec.errors import TargetCrashed, TargetHung
from topkspec.properties.result import reference_result
from topkspec.targets.base import selects_largest


def prefetch(ctx, cases) -> None:
    """Ask ctx's target for the answers of `cases` [(case, x)] as drawn, in one request,
    where it takes batches (`submit_many`, targets.isolation); keep them on ctx."""
    ctx.prefetched, ctx.fatal_call = {}, None
    submit_many = getattr(ctx.target, "submit_many", None)
    if submit_many is None or len(cases) < 2:
        return
    calls = [(judged, x) for judged, x in ((ctx.judged(case), x) for case, x in cases) if _asked(ctx, judged)]
    if len(calls) < 2:
        return
    start = time.perf_counter()
    try:
        wait = submit_many(calls)
        paused = time.perf_counter()
        for judged, x in calls:  # the checks' time, while the worker computes
            reference_result(judged, x)
        checks = time.perf_counter() - paused
        ctx.result.timing["checks_s"] += checks
        start += checks
        answers = wait()
    except (TargetCrashed, TargetHung, OSError):
        return  # each case asks on its own
    finally:
        ctx.result.timing["target_s"] += time.perf_counter() - start
    ctx.prefetched = {(calls[index][0], id(calls[index][1])): answer for index, answer in answers.items()}
    if len(answers) == 1 and len(calls) > 1:  # the call that crashed or hung the worker
        ctx.fatal_call = next(iter(ctx.prefetched))


def in_order(ctx, cases) -> list:
    """`cases` in the order their checks run: the case whose call broke the worker first."""
    if ctx.fatal_call is None:
        return list(cases)
    fatal = [item for item in cases if (ctx.judged(item[0]), id(item[1])) == ctx.fatal_call]
    return fatal[:1] + [item for item in cases if item is not fatal[0]] if fatal else list(cases)


def _asked(ctx, judged) -> bool:
    """Whether the run asks the target for `judged` as drawn (GroupContext.judged_if_supported,
    without counting what it sets aside: the case's own body counts that)."""
    if not_offered(ctx.contract, ctx.target, judged):
        return False
    try:
        return ctx.target.supports(judged) is None
    except Exception:  # a refusal, or a worker that broke: the case's own body asks again
        return False


def not_offered(contract, target, judged) -> str | None:
    """Why the contract sets `judged` aside without asking the target (it offers no smallest K,
    or not the value type), else None."""
    if not selects_largest(judged) and contract.value("smallest") == "not_offered" and not target.smallest_by_key:
        return "its contract offers no smallest K"
    offered = contract.value_types
    if offered is not None and not offered.offers(judged.dtype):
        return f"its contract offers no {judged.dtype} ({offered.title or 'its documentation'}: \"{offered.quote}\")"
    return None


def taken(ctx, case, x):
    """The wait for the answer to (case, x) sent ahead, taken once; None when none was."""
    answer = ctx.prefetched.pop((case, id(x)), None) if ctx.prefetched else None
    return None if answer is None else answer[1]


def call_number(ctx, case, x) -> int | None:
    """The number (in the worker's history) of the call (case, x) sent ahead, else None."""
    answer = ctx.prefetched.get((ctx.judged(case), id(x))) if ctx.prefetched else None
    return None if answer is None else answer[0]
