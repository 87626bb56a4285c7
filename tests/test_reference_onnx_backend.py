"""reference_topk against ONNX's own backend TopK test cases (model, inputs, outputs)."""
import numpy as np
import pytest
from slow import slow

from topkspec import reference_topk

from topkspec.targets.onnx_cases import onnx_backend_topk_cases


@pytest.mark.parametrize("index", range(7))
@slow
def test_reference_matches_onnx_backend_case(index):
    cases = onnx_backend_topk_cases()
    if index >= len(cases):
        pytest.skip(f"the installed onnx has {len(cases)} TopK backend cases")
    name, case, x, (want_values, want_indices) = cases[index]
    values, indices = reference_topk(x, axis=case.axis, k=case.k, largest=case.largest)
    assert values.dtype == want_values.dtype, f"{name} values dtype: expected {want_values.dtype}, got {values.dtype}"
    assert np.array_equal(values, want_values), f"{name} values: expected {want_values.tolist()}, got {values.tolist()}"
    assert indices.dtype == np.int64, f"{name} indices dtype: expected int64, got {indices.dtype}"
    assert np.array_equal(indices, want_indices), \
        f"{name} indices: expected {want_indices.tolist()}, got {indices.tolist()}"
