"""The jax target's smallest-K form against the reference on adversarial data: integer
extremes, -0.0 and +0.0, infinities, subnormals and NaN, in every value type."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from topkspec.spec import dtypes
from topkspec.spec import Case

pytest.importorskip("jax")
from topkspec.targets.runtimes.jax import JaxTarget  # noqa: E402
from target_checks import assert_exact  # noqa: E402

SHAPE = (3, 8)


def adversarial(dtype: str):
    if dtype == "bfloat16":  # hypothesis has no bfloat16: draw float32 and round
        return hnp.arrays(np.float32, SHAPE, elements=hnp.from_dtype(np.dtype(np.float32))) \
            .map(lambda a: a.astype(dtypes.numpy_dtype("bfloat16")))
    dt = np.dtype(dtype)
    elements = hnp.from_dtype(dt)
    if dt.kind in "iu":  # weight the extremes and zero, so ties and int min come up often
        info = np.iinfo(dt)
        elements = st.one_of(st.sampled_from([info.min, info.max, 0, info.min + 1, info.max - 1]), elements)
    else:
        elements = st.one_of(st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan]), elements)
    return hnp.arrays(dt, SHAPE, elements=elements)


@pytest.fixture(scope="module")
def jax_target():
    return JaxTarget()


@pytest.mark.parametrize("dtype", dtypes.ALL_VALUE_TYPES)
def test_smallest_form_matches_reference_bit_for_bit(jax_target, dtype):
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(x=adversarial(dtype), k=st.sampled_from([1, 3, 8]), axis=st.sampled_from([0, 1]))
    def check(x, k, axis):
        k = min(k, x.shape[axis])
        case = Case("onnx:24", "TopK", dtype, x.shape, axis, k, largest=False, index_dtype="int64")
        assert_exact(jax_target, case, x)

    check()


def test_smallest_form_keeps_signed_zero_ties_in_index_order(jax_target):
    x = np.array([0.0, -0.0, 1.0, 0.0, -0.0], dtype=np.float32)
    values, indices = jax_target.run(Case("onnx:11", "TopK", "float32", (5,), 0, 4, largest=False,
                                          index_dtype="int64"), x)
    assert indices.tolist() == [0, 1, 3, 4], f"indices: expected [0, 1, 3, 4], got {indices.tolist()}"
    assert np.signbit(values).tolist() == [False, True, False, True], "values must be the input's own zeros"


@pytest.mark.xfail(strict=True, reason="jax.lax.top_k ranks -0.0 below +0.0 (a total order), "
                                       "so the two do not tie as the spec's IEEE equality says")
def test_largest_form_ties_signed_zeros(jax_target):
    x = np.array([-0.0, 0.0], dtype=np.float32)
    _, indices = jax_target.run(Case("onnx:11", "TopK", "float32", (2,), 0, 2, index_dtype="int64"), x)
    assert indices.tolist() == [0, 1], f"indices: expected [0, 1], got {indices.tolist()}"


def test_the_target_names_the_device_jax_runs_it_on(jax_target):
    """`jax` runs on jax's default device and says which (not CPU whatever jax picked), in
    its version and in its reports' runtime stack."""
    import jax

    from topkspec.targets.runtimes.jax import _repro_stack

    label = jax_target.device_label()
    assert label.split(" ")[0] == jax.devices()[0].platform.upper().replace("CUDA", "GPU").replace("ROCM", "GPU")
    assert label in jax_target.version()
    case = Case("dml:5.0", "TOP_K1", "float32", (4,), 0, 1)
    assert _repro_stack(jax_target, case).device == label


def test_the_gpu_target_says_exactly_why_it_cannot_run_without_a_gpu():
    import jax

    from topkspec.targets.registry import get_target

    target = get_target("jax-gpu")
    try:
        jax.devices("gpu")
    except RuntimeError:
        ok, why = target.available()
        assert not ok and "jax.devices('gpu') found none" in why and "jax[cuda12]" in why, why
    else:  # a GPU: the target runs there, and says so
        assert target.available() == (True, "") and target.device_label().startswith("GPU")
        values, indices = target.run(Case("dml:5.0", "TOP_K1", "float32", (4,), 0, 2), np.arange(4.0, dtype=np.float32))
        assert indices.tolist() == [3, 2]
