"""The NaN order a runtime promises (its contract's `nan` point, or a run's --nan-order):
check_nan_order(case, x, values, indices, order=..., ties=True) holds a result with NaN present
to the reference under that order (spec.nan_order). Not among the result properties every run
checks: the fuzz engine calls it only where an order is promised (out.nan.order)."""
from __future__ import annotations

import numpy as np

from topkspec.properties.failures import Violation
from topkspec.properties.property import NAN, RESULT, Property, names_the_call, rules
from topkspec.properties.sequences import at, bits, nan_mask, rows, show, where
from topkspec.spec.nan_order import nan_class, reference_topk_nan

(NAN_ORDER,) = rules("out.nan.order")

_PLACE = {"largest": "every NaN above every number", "smallest": "every NaN below every number",
          "totalorder": "+NaN above every number and -NaN below (IEEE 754 totalOrder)",
          "last": "every NaN after every number, for the largest and the smallest K alike"}


def _same_value(a: np.ndarray, b: np.ndarray, order: str, largest: bool = True) -> np.ndarray:
    """Elementwise: the same number bit for bit, or NaNs of the same class under `order`."""
    nan_a, nan_b = nan_mask(a), nan_mask(b)
    numbers = ~nan_a & ~nan_b & (bits(a) == bits(b)) if a.dtype == b.dtype else ~nan_a & ~nan_b & (a == b)
    return numbers | (nan_a & nan_b & (nan_class(a, order, largest) == nan_class(b, order, largest)))


@names_the_call
def check_nan_order(case, x, values, indices, *, order: str = "largest", ties: bool = True):
    """out.nan.order: with NaN in the input, the values (and, where ties are promised in index
    order, the indices) are the reference's under the promised NaN order (default: numpy's and
    torch's, every NaN above every number)."""
    want_values, want_indices = reference_topk_nan(x, axis=case.norm_axis, k=case.k, largest=case.largest,
                                                   order=order)
    vr, outer = rows(case, np.asarray(values))
    wv, _ = rows(case, want_values)
    bad = ~_same_value(vr, wv, order, case.largest)
    if ties and indices is not None:
        ir, _ = rows(case, np.asarray(indices).astype(np.int64))
        wi, _ = rows(case, want_indices)
        bad |= ir != wi
    if not case.sorted:  # any order: compare each sequence's values as a multiset, by class and bits
        bad = np.zeros_like(bad)
        for r in range(vr.shape[0]):
            got = sorted(zip(nan_class(vr[r], order, case.largest).tolist(), bits(vr[r]).tolist()))
            want = sorted(zip(nan_class(wv[r], order, case.largest).tolist(), bits(wv[r]).tolist()))
            if [c for c, b in got if c] != [c for c, b in want if c] or \
                    sorted(b for c, b in got if not c) != sorted(b for c, b in want if not c):
                bad[r, 0] = True
    if bad.any():
        r, p = np.argwhere(bad)[0]
        raise Violation(NAN_ORDER,
                        f"{at(outer, r, p)}: with NaN ordered as promised ({_PLACE[order]}), "
                        f"expected {show(wv[r, p])} there, got {show(vr[r, p])}",
                        where=where(outer, r, p), expected=wv[r, p], actual=vr[r, p])


PROPERTIES = (
    Property("nan_order", check_nan_order, (NAN_ORDER,), RESULT, True, when=NAN,
             words=((NAN_ORDER, "places NaN against the order it promises"),)),
)
