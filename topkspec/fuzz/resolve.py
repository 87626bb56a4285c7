"""Which target a run drives, and where: in this process, or in a worker process (isolation).

Light on purpose (no Hypothesis): the command line resolves its target first, so a worker
process imports its runtime while this one loads the engine.
"""
from __future__ import annotations

from topkspec.fuzz.config import RunError
from topkspec.targets.isolation import IsolatedTarget, TargetCrashed, TargetHung
from topkspec.targets.base import Target, availability, first_line, signals_kept
from topkspec.targets.registry import get_target


def resolve_target(spec, *, isolate: bool | None, timeout: float, notes: list | None = None) -> Target:
    """The target to drive: built from `spec`, in a worker process when it is native (plain
    functions count as native: they may wrap native code) or when asked; a target that only
    judges descriptors (`computes` False: a validator) always runs here. Under `auto`
    (isolate=None) a Target object that cannot be sent to a worker (a lambda, a local
    function) runs in this process, and a line saying so goes to `notes`.

    A target named by a string gets its worker started before its availability is checked
    here, and is returned without waiting for the worker: its first use waits."""
    with signals_kept():  # loading it may import its runtime here, which may install handlers
        target = get_target(spec)
    needed = getattr(target, "min_timeout", 0) or 0
    if timeout < needed:  # a compiler's first build of a shape is no hang
        if notes is not None:
            notes.append(f"{target.name}: calls may take up to {needed:g} s (it compiles per shape), "
                         f"not the {timeout:g} s asked")
        timeout = needed
    if not getattr(target, "computes", True):
        # A validator is asked through check_descriptor, which a worker process does not serve.
        if isolate and notes is not None:
            notes.append(f"{target.name} runs in this process, not isolated: it only judges descriptors")
        isolate = False
    auto = isolate is None
    if auto:  # a target that runs its own worker process is not wrapped in another
        isolate = target.native and not target.isolates_itself
    worker = IsolatedTarget(spec, timeout=timeout, wait=False) if isolate and isinstance(spec, str) else None
    try:
        usable, why = availability(target)
        if not usable:
            raise RunError(f"target {target.name} cannot run here: {why}")
    except BaseException:
        if worker is not None:
            worker.close()
        raise
    if worker is not None:
        target.close()
        return worker
    if not isolate:
        if hasattr(target, "set_timeout"):
            target.set_timeout(timeout)
        return target
    try:
        isolated = IsolatedTarget(target, timeout=timeout)
    except (TargetCrashed, TargetHung):
        raise
    except Exception as exc:
        if not auto:
            raise RunError(f"target {target.name} cannot run in a worker process: {type(exc).__name__}: "
                           f"{first_line(exc, empty='')}") from None
        if notes is not None:
            notes.append(f"{target.name} runs in this process, not isolated: it cannot be sent to a worker "
                         f"process ({type(exc).__name__}); name it by import string to isolate it")
        return target
    target.close()
    return isolated
