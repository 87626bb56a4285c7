"""One drawn example, checked: the Hypothesis test of a property group (group_test), the
function it runs on each example (group_example), and the Failure an example's violation
becomes, with the calls made before it in the target's process.

An example of a batched group holds many cases (fuzz.batches): their calls go to a worker
process in one request (fuzz.prefetch), each case is checked on its own, and the first case's
failure is the example's: the cases after it are not checked (another bug they hold is found
in a list of its own, and shrinking replays a list only up to its failing case).
"""
from __future__ import annotations

import time

from hypothesis import given

from topkspec.properties.failures import Violation
from topkspec.properties.result import remembered_references
from topkspec.fuzz.batches import example_strategy, items, prefetched
from topkspec.fuzz.context import Found, GroupContext
from topkspec.fuzz.groups import case_of
from topkspec.fuzz.prefetch import call_number, in_order, prefetch
from topkspec.fuzz.results import ONE_CALL_RELATIONS, Failure
from topkspec.targets.history import CallHistory


def group_test(target, result, group, strategy, body, *, progress=None, strict_doc=False, ctrl_c=None):
    """(test, ctx): a Hypothesis test (not yet given settings) checking `group` against the
    target; after it fails, ctx.failures holds each failure, shrunk. With `ctrl_c` (a CtrlC),
    an example after a Ctrl-C raises KeyboardInterrupt whatever swallowed the first one."""
    example, ctx = group_example(target, result, group, body, progress=progress, strict_doc=strict_doc,
                                 ctrl_c=ctrl_c)
    return given(example_strategy(group, strategy))(example), ctx


def group_example(target, result, group, body, *, progress=None, strict_doc=False, ctrl_c=None):
    """(example, ctx): the function that checks one drawn example of `group` (group_test's
    test before @given), for a test that draws the example itself."""
    ctx = GroupContext(target, result, group, strict_doc=strict_doc)
    history = _history(target, result)

    def run_case(data, first_call=None):
        """Check one case (an example's item): its failure, if new, is raised (Found)."""
        ctx.start_example()
        mark = history.count if first_call is None else first_call  # the number of the case's first call
        result.examples[group] += 1
        if progress is not None:
            progress.update(result, group)
        try:
            judged = body(ctx, data)
        except Violation as violation:  # a crash, hang, broken adapter or refusal: the case ends
            ctx.found.append(violation)
            judged = True
        if history is not getattr(target, "history", None):  # a target in this process: kept here
            for call in ctx.calls:
                history.record(*call)
        result.cases += len(ctx.calls)
        if result.call_log is not None:
            result.call_log.extend(ctx.calls)
        if judged:
            result.judged[group] += 1
        ctx.end_example()
        if ctx.found:
            case, x, draw = _example_case(ctx, group, data)
            ctx.settle(case, lambda violation: _failure(ctx, violation, case, x, draw, history.before, mark))

    def run_example(data):
        if ctrl_c is not None and ctrl_c.pressed:
            raise KeyboardInterrupt
        start, raised = time.perf_counter(), None
        try:
            with remembered_references():  # the example's checks share the reference's results
                cases = items(group, data)
                if len(cases) > 1 and prefetched(group):  # no more than the search's share has left
                    prefetch(ctx, cases if ctx.case_limit is None or ctx.failures
                             else cases[:max(0, ctx.case_limit - result.examples[group])])
                for item in in_order(ctx, cases):
                    if ctx.stopped():
                        break  # enough crashing/hanging replays: keep the smallest one seen
                    if ctx.share_checked():
                        break  # the search's share is spent (a search that found a failure shrinks it whole)
                    try:
                        run_case(item, call_number(ctx, *item) if ctx.prefetched else None)
                    except Found as found:  # the example's failure: the cases after it are not checked
                        raised = found  # (shrinking replays the list up to it, no further)
                        break
                ctx.prefetched, ctx.fatal_call = {}, None
        finally:
            result.timing["body_s"] += time.perf_counter() - start
        if raised is not None:
            raise raised

    # The test Hypothesis runs is this short function: each search reads its source to name it
    # (2.5 ms for the body above, 0.03 ms for this), and a run may make many searches.
    def example(data):
        run_example(data)

    return example, ctx


def _history(target, result) -> CallHistory:
    """The calls made in the target's process: its worker's, or, for a target in this
    process, those of the run (kept on the result, shared by its groups)."""
    if isinstance(getattr(target, "history", None), CallHistory):
        return target.history
    if result.history is None:
        result.history = CallHistory()
    return result.history


def _failure(ctx, violation, case, x, draw, before, mark) -> Failure:
    """The example's Failure for `violation`, with the calls made before it in its process
    (`before(number)`; `mark`: the number of the example's first call). A failure seen on one
    call is that call's: the example's calls before it count as earlier calls too."""
    until, since = ctx.calls_until(violation), ctx.calls_from(violation)
    failure = Failure(target=ctx.target.name, group=ctx.group, violation=violation, case=case, x=x,
                      calls=ctx.calls[since:until], outputs=ctx.outputs[since:until], draw=draw)
    own = until - 1 if until and failure.relation in ONE_CALL_RELATIONS and ctx.group != "invalid" else since
    failure.earlier = before(mark + own)
    return failure


def _example_case(ctx, group, data):
    """(case, x, draw) of an example: the case as the target was judged on it, the input of
    its first call, and the draw of an invalid descriptor (None elsewhere)."""
    draw = data if group == "invalid" else None
    case = draw.case if draw is not None else ctx.judged(data[0])
    if case is None:  # a descriptor the target judged as written
        case = case_of(draw)
    x = ctx.calls[0][1] if ctx.calls else (None if draw is not None else data[1])
    return case, x, draw
