"""ONNX's own backend TopK test cases as (name, Case, x, (values, indices)), so any target
(and the reference) can be checked against the examples ONNX ships."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def onnx_backend_topk_cases() -> tuple:
    import numpy as np
    import onnx
    from onnx.backend.test.case.node import collect_testcases

    from topkspec.spec import dtypes
    from topkspec.spec.case import Case

    found = []
    for test in collect_testcases():
        if not test.name.startswith("test_top_k"):
            continue
        model = test.model
        node = model.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        for inputs, outputs in test.data_sets:
            x = inputs[0]
            k = int(attrs["k"]) if opset < 10 else int(np.asarray(inputs[1]).reshape(-1)[0])
            case = Case(f"onnx:{opset}", "TopK", dtypes.name_of(x.dtype), x.shape, int(attrs.get("axis", -1)),
                        k, largest=bool(attrs.get("largest", 1)), sorted=bool(attrs.get("sorted", 1)),
                        index_dtype="int64")
            found.append((test.name, case, x, tuple(outputs)))
    return tuple(found)
