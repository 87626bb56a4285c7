"""What a call of the target answered, as a group's checks read it: a relation that compared
no result has no verdict, and a library failing inside its own code is a failure of its own."""
from __future__ import annotations

from topkspec.properties import failures
from topkspec.properties.failures import Violation


def noting_answers(run, answered: list):
    """`run` that notes in `answered` each call that returned (a relation judged a result)."""
    def noted(case, x):
        out = run(case, x)
        answered.append(True)
        return out
    return noted


def result_signature(violation, calls, outputs, until: int) -> tuple:
    """What the result of the call that broke `violation` shows (properties.evidence): `calls`
    and `outputs` are the example's, `until` how many of them the violation had seen."""
    from topkspec.properties.evidence import signature

    if violation.failure_class != failures.WRONG_RESULT or not until or outputs[until - 1] is None:
        return ()
    from topkspec.properties.catalogue import RELATION_OF_RULE

    case, x = calls[until - 1]
    # a check of one call's result names the sequence it decided on: the key is read off that one
    # (a relation's sequence may be another call's, so a relation's key reads the whole result)
    one_call = not any(rule in RELATION_OF_RULE or rule.startswith("self.") for rule in violation.rules)
    try:
        return signature(case, x, *outputs[until - 1],
                         sequence=(violation.where or {}).get("sequence") if one_call else None)
    except Exception:  # an output the evidence cannot be read from: the rule alone keys it
        return ()


def internal_error_violation(case, exc) -> Violation:
    """A valid case the library failed on inside its own code (targets.refusal): no result, and
    no refusal either."""
    return Violation("out.valid_accepted", f"{case.dtype}{list(case.shape)} is valid, but the library failed inside "
                     f"its own code instead of answering: {exc}", failure_class=failures.INTERNAL_ERROR,
                     expected="a result (or a refusal the runtime documents)", actual=str(exc), call=case)
