"""Whether a wrong result with NaN in its input is the bug of a kept wrong result without NaN
(its twin: results.nan_free_key, the same target, rule, class and kind of wrongness), or a bug
of its own.

A runtime that gets a float input wrong whatever it holds fails the valid group and the nan
group alike: one bug, one report. A runtime whose int16 wraps and whose NaN order is wrong has
two bugs of one kind, and the second must not be passed over as the first's twin. The runtime
is asked: the failing call again with its NaN replaced by finite values, four ways (0, the
type's largest and lowest finite values, values drawn from a normal distribution, seeded by
the input). Answered rightly every way, the NaN is what broke it: a bug of its own. Answered
wrongly any way, or not at all (a refusal, a crash), it stays its twin's: one way alone would
split a bug whose reduced case happens to come out right once its NaN is 0 (values read from
the next sequence, where both hold 0). A relation between calls, whose NaN may be in another
call than the one it names, stays its twin's as before.
"""
from __future__ import annotations

import numpy as np

from topkspec.properties.catalogue import RELATION_OF_RULE
from topkspec.properties.open_points import as_returned, judged_values
from topkspec.properties.combined import result_violations
from topkspec.properties.result import has_nan
from topkspec.properties.sequences import nan_mask
from topkspec.spec.contracts import unpromised_rules


def nan_free_variants(x) -> list:
    """x with its NaN replaced, each way the module text names, of x's own type."""
    import ml_dtypes  # its finfo knows numpy's float types and its own (bfloat16)

    mask = nan_mask(x)
    largest = float(ml_dtypes.finfo(np.asarray(x).dtype).max)
    rng = np.random.default_rng(int(mask.sum()) + x.size)
    fills = (0.0, largest, -largest, rng.standard_normal(int(mask.sum())))
    variants = []
    for fill in fills:
        clean = np.array(x, copy=True)
        clean[mask] = fill
        variants.append(clean)
    return variants


def right_without_nan(target, contract, case, x) -> bool:
    """Whether `target` answers `x` with its NaN replaced, every way, as every result rule
    `contract` promises wants; False where it refuses, crashes or its adapter breaks."""
    from topkspec.fuzz.results import filed_rule

    unpromised = unpromised_rules(contract)
    for clean in nan_free_variants(x):
        try:
            values, indices = as_returned(contract, case, clean, *target.run(case, clean))
            values = judged_values(contract, case, clean, values, indices)
        except Exception:  # noqa: BLE001 -- no answer: nothing tells the two bugs apart
            return False
        if any(filed_rule(v) not in unpromised for v in result_violations(case, clean, values, indices)):
            return False
    return True


def own_nan_bug(target, contract, rule: str, call) -> bool:
    """Whether a wrong result filed under `rule` on `call` (case, x), whose twin without NaN is
    kept, is a bug of its own (see the module text)."""
    if call is None or RELATION_OF_RULE.get(rule, "result") != "result":
        return False
    case, x = call
    return x is not None and has_nan(x) and right_without_nan(target, contract, case, x)


def mark_own_nan_bugs(target, result) -> None:
    """Each kept failure with NaN whose twin is kept too, marked `nan_alone` when it is a bug of
    its own (results.group_failures files it apart). Asked once the search is over, on the
    failures as shrunk and reduced: a twin kept after it was not there to ask about before."""
    from topkspec.fuzz.results import nan_free_key

    contract = getattr(result, "contract", None) or target.contract
    keys = {failure.key for failure in result.failures}
    for failure in result.failures:
        if nan_free_key(failure.key, failure.violation.signature) in keys and failure.calls:
            failure.nan_alone = own_nan_bug(target, contract, failure.rule, (failure.case, failure.x))
