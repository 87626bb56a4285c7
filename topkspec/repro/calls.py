"""The calls a repro makes for a failure, as it was observed (its relation,
`Failure.relation`), and the answer the spec expects of the last one."""
from __future__ import annotations

from topkspec.properties.catalogue import RELATIONS
from topkspec.properties.result import reference_result


def calls_for(failure, relation: str) -> list:
    """The target calls repro.py makes: those of a relation between calls, else the last one."""
    if relation in RELATIONS:
        return failure.calls[:RELATIONS[relation].calls]
    return failure.calls[-1:]


def expected_result(case, x):
    """The spec's answer with the case's index type (None when the case is not runnable)."""
    try:
        values, indices = reference_result(case, x)
    except Exception:
        return None
    return values, indices.astype(case.index_dtype)
