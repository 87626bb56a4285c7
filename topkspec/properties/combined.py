"""Every result property at once: which apply to a case, whether a result is the reference's
(so that all of them hold), and the violations a result gives."""
from __future__ import annotations

import numpy as np

from topkspec.properties.failures import Violation
from topkspec.properties.result import PROPERTIES, type_name, check_shape, has_nan, reference_result
from topkspec.properties.sequences import bits, rows, take_rows


def result_checks(case, x) -> list:
    """The single-result checks that apply to the case and input, most specific first."""
    nan = has_nan(x)
    return [prop.check for prop in PROPERTIES if prop.applies(case, nan)]


def matches_reference(case, x, values, indices, expected=None) -> bool:
    """True when the outputs have the case's shape and types, the values are the reference's
    bit for bit and the indices equal its indices; with sorted=0, the same pairs of value and
    index in any order. `expected`: `reference_result(case, x)` when already computed."""
    values, indices = np.asarray(values), np.asarray(indices)
    if (values.shape != case.out_shape or indices.shape != case.out_shape
            or type_name(values) != case.dtype or type_name(indices) != case.index_dtype):
        return False
    ref_values, ref_indices = expected if expected is not None else reference_result(case, x)
    if case.sorted:
        return bool((bits(values) == bits(ref_values)).all() and (indices == ref_indices).all())
    # Any order: the same indices in each sequence, and each value the input's element at its
    # index (as the reference's values are), bit for bit. Cheaper than putting both in index order.
    index_rows, _ = rows(case, indices)
    if not (np.sort(index_rows, axis=1) == np.sort(rows(case, ref_indices)[0], axis=1)).all():
        return False
    at_indices = take_rows(rows(case, x)[0], index_rows.astype(np.int64))
    return bool((bits(rows(case, values)[0]) == bits(at_indices)).all())


def check_result(case, x, values, indices, expected=None):
    """Every single-result check that applies; raises the most specific violation.

    A result that equals the reference passes at once: the reference keeps every result rule
    whatever the input (tests/test_properties.py holds it to each check one by one), so a
    copy of it does too. Any other result goes through the checks in turn, which name what
    broke. `expected`: `reference_result(case, x)`, when computed beforehand."""
    if matches_reference(case, x, values, indices, expected):
        return
    for check in result_checks(case, x):
        check(case, x, values, indices)


def result_violations(case, x, values, indices) -> list[Violation]:
    """Every applicable check's violation, most specific first (the checks after a wrong
    shape cannot run, so a shape violation ends the list)."""
    found = []
    for check in result_checks(case, x):
        try:
            check(case, x, values, indices)
        except Violation as violation:
            found.append(violation)
            if check is check_shape:
                break
    return found
