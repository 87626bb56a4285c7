"""The group a target that only judges descriptors (`computes` False: a validator) gets besides
the invalid one: valid descriptors, each of which it must accept.

    groups = {"accepts": accepts_group(target, profile, strict_doc), "invalid": ...}
"""
from __future__ import annotations

import time
from typing import NamedTuple

from topkspec.properties import failures
from topkspec.properties.acceptance import may_refuse
from topkspec.properties.failures import Violation
from topkspec.targets.base import AdapterError


class ValidDescriptor(NamedTuple):
    """A valid descriptor in the spec's JSON form and the Case it describes. Shaped as the
    other groups' (case, input) draws; a validator takes no input, so `x` is None."""

    case: object
    x: None
    descriptor: dict


def valid_descriptors(profile: str, *, strict_doc: bool = False):
    """A strategy of ValidDescriptor: the valid cases of `profile`, as `spec.descriptor` writes them."""
    from topkspec import spec
    from topkspec.strategies import valid_cases

    return valid_cases(profile, strict_doc=strict_doc).map(
        lambda case: ValidDescriptor(case, None, spec.descriptor(case)))


def _verdict(target, descriptor) -> dict | None:
    """target.check_descriptor(descriptor), with an answer that is not a verdict an adapter error."""
    verdict = target.check_descriptor(descriptor)
    if verdict is not None and not (isinstance(verdict, dict) and "accepted" in verdict):
        raise AdapterError(f"{target.name}.check_descriptor() returned {type(verdict).__name__}, "
                           f"not {{'accepted': bool, 'detail': str}}")
    return verdict


def _accepts_body(ctx, drawn: ValidDescriptor) -> bool:
    """out.valid_accepted: the target accepts a valid descriptor as written."""
    case = drawn.case
    start = time.perf_counter()
    try:
        verdict = ctx._guard(lambda: _verdict(ctx.target, drawn.descriptor), case, rule="out.valid_accepted")
    finally:
        ctx.result.timing["target_s"] += time.perf_counter() - start
    if verdict is None:
        ctx.result.unsupported[f"{ctx.target.name} cannot be handed the descriptor"] += 1
        return False
    detail = str(verdict.get("detail", ""))
    if not verdict["accepted"] and may_refuse(case):  # a DirectML K equal to the axis size
        ctx.result.refused_k_at_axis_size += 1
        return False
    ctx.result.coverage[(case.dtype, case.rank)] += 1
    ctx.evaluate("accepts_valid", _accepted, case, ctx.target.name, verdict["accepted"], detail)
    return True


def _accepted(case, name: str, accepted: bool, detail: str) -> None:
    if not accepted:
        raise Violation("out.valid_accepted",
                        f"{case.dtype}{list(case.shape)} is valid, but {name} refused its descriptor: {detail}",
                        failure_class=failures.REJECTS_VALID, expected="acceptance", actual=detail, call=case)


def accepts_group(target, profile: str, strict_doc: bool = False) -> tuple:
    """(strategy, body) of the "accepts" group: every valid descriptor of `profile` (K below
    the axis size under strict_doc) goes to `target.check_descriptor`, and a refusal is the
    failure "rejects a valid descriptor" (out.valid_accepted). Without strict_doc a DirectML K
    equal to the axis size may be refused: such an example is counted, not judged."""
    return valid_descriptors(profile, strict_doc=strict_doc), _accepts_body
