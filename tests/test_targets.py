"""Every built-in target against the DirectML worked examples, ONNX's backend TopK cases,
its own support declaration and its `validates` claim. Unavailable targets skip with
the reason they give."""
import numpy as np
import pytest
from slow import slow

from topkspec import reference_topk
from topkspec.spec import dtypes
from topkspec.spec import Case
from topkspec.spec.tables import DML_WORKED_EXAMPLES
from topkspec.targets import BUILTIN_TARGETS, Rejected, get_target
from topkspec.targets.onnx_cases import onnx_backend_topk_cases


@pytest.fixture(scope="module", params=list(BUILTIN_TARGETS))
def target(request):
    made = get_target(request.param)
    if not made.computes:
        pytest.skip(f"{made.name} judges descriptors and computes nothing (its own test file checks it)")
    ok, reason = made.available()
    if not ok:
        pytest.skip(reason)
    yield made
    made.close()


def judged(target, case):
    """The case as the runner judges this target (its declared index type)."""
    return case.with_(index_dtype=target.index_dtype) if target.index_dtype else case


def assert_same(name, expected, actual):
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert actual.shape == expected.shape, f"{name}: shape expected {expected.shape}, got {actual.shape}"
    assert actual.dtype == expected.dtype, f"{name}: dtype expected {expected.dtype}, got {actual.dtype}"
    # bit for bit: -0.0 differs from +0.0, a NaN equals the same NaN
    bits = f"u{expected.dtype.itemsize}"
    mismatch = np.argwhere(np.ascontiguousarray(expected).view(bits) != np.ascontiguousarray(actual).view(bits))
    if mismatch.size:
        where = tuple(int(i) for i in mismatch[0])
        raise AssertionError(f"{name}: at index {where} expected {expected[where]!r}, got {actual[where]!r}"
                             f" (expected {expected.tolist()}, got {actual.tolist()})")


# torch.topk promises no order for tied values (its documentation), and on the CPU it does
# not return them in ascending index order: a real deviation, reported by these xfails.
TIE_ORDER_NOT_KEPT = {"torch": "torch.topk (CPU) does not return tied values in ascending index order",
                      "paddle": "paddle.topk (CPU) does not return tied values in ascending index order",
                      "keras-numpy": "keras.ops.top_k on the numpy backend (Keras < 3.16) returns tied values "
                                     "in descending index order"}


def has_ties(x, axis) -> bool:
    ordered = np.sort(np.moveaxis(np.asarray(x), axis, -1), axis=-1)
    return bool((ordered[..., 1:] == ordered[..., :-1]).any())


def expect_tie_deviation(request, target, x, axis):
    if target.name in TIE_ORDER_NOT_KEPT and has_ties(x, axis):
        request.applymarker(pytest.mark.xfail(strict=True, reason=TIE_ORDER_NOT_KEPT[target.name]))


@pytest.mark.parametrize("example", DML_WORKED_EXAMPLES, ids=[e["name"] for e in DML_WORKED_EXAMPLES])
def test_dml_worked_examples(request, target, example):
    expect_tie_deviation(request, target, example["input"], example["axis"])
    largest = example["direction"] == "DECREASING"
    case = judged(target, Case("dml:3.1", "TOP_K1", "float32", tuple(example["sizes"]), example["axis"],
                               example["k"], largest=largest, index_dtype="uint32"))
    reason = gap(target, case)
    if reason:  # mlx: sorted output is outside MLX's contract
        pytest.skip(f"{target.name} cannot run it: {reason}")
    values, indices = target.run(case, np.array(example["input"], dtype=np.float32))
    assert_same("values", np.array(example["values"], dtype=np.float32), values)
    assert_same("indices", np.array(example["indices"], dtype=case.index_dtype), indices)


@slow
def test_onnx_backend_cases_are_found():
    names = {name for name, *_ in onnx_backend_topk_cases()}
    assert {"test_top_k", "test_top_k_smallest", "test_top_k_negative_axis", "test_top_k_uint64"} <= names


@pytest.mark.parametrize("index", range(7))
@slow
def test_onnx_backend_topk_cases(request, target, index):
    cases = onnx_backend_topk_cases()
    if index >= len(cases):
        pytest.skip(f"the installed onnx has {len(cases)} TopK backend cases")
    name, case, x, (expected_values, expected_indices) = cases[index]
    expect_tie_deviation(request, target, x, case.axis)
    case = judged(target, case)
    reason = gap(target, case)
    if reason:
        pytest.skip(f"{name}: {target.name} cannot run it: {reason}")
    values, indices = target.run(case, x)
    assert_same(f"{name} values", expected_values, values)
    assert_same(f"{name} indices", expected_indices.astype(case.index_dtype), indices)


def gap(target, case):
    """Why the target cannot run the case: the adapter cannot express it (supports' reason) or
    the runtime refuses every case like it (Rejected, a finding in a run); None when it can."""
    try:
        return target.supports(case)
    except Rejected as exc:
        return f"refused: {exc}"


# Types a target runs and gets wrong, each a finding in its known list: shown wrong here (when
# the runtime gets it right, this fails: update the finding and the list).
WRONG_TYPES = {("tvm", "bfloat16"): "findings/tvm-bfloat16-wrong-values"}


@pytest.mark.parametrize("profile", ["dml:5.0", "onnx:24"])
@slow
def test_every_declared_type_runs_right(target, profile):
    """What supports() accepts runs and matches the reference; what it refuses has a reason."""
    from topkspec import spec

    op = "TOP_K1" if profile.startswith("dml") else "TopK"
    rng = np.random.default_rng(7)
    ran, refused = [], {}
    for dtype in spec.value_types(profile, op):
        case = judged(target, Case(profile, op, dtype, (3, 7), 1, 4, largest=bool(len(ran) % 2),
                                   index_dtype=spec.index_types(profile, op)[0]))
        reason = gap(target, case)
        if reason is not None:
            assert isinstance(reason, str) and reason, f"{dtype}: an unsupported type needs a reason"
            refused[dtype] = reason
            continue
        # distinct values (ties and signed zeros are the properties' business)
        x = rng.permutation(np.arange(1, 22)).reshape(3, 7).astype(dtypes.numpy_dtype(dtype))
        values, indices = target.run(case, x)
        want_values, want_indices = reference_topk(x, axis=1, k=4, largest=case.largest)
        if (target.name, dtype) in WRONG_TYPES:
            assert not np.array_equal(values, want_values), f"{dtype} is right now: see {WRONG_TYPES[target.name, dtype]}"
            continue
        assert_same(f"{dtype} values", want_values, values)
        assert_same(f"{dtype} indices", want_indices.astype(case.index_dtype), indices)
        ran.append(dtype)
    if "float32" not in ran and profile != target.default_profile:
        # e.g. an execution provider with no kernel for this TopK version, CPU fallback off
        pytest.skip(f"{target.name} runs no TopK at {profile} (its own profile is "
                    f"{target.default_profile}): {refused.get('float32')}")
    assert "float32" in ran, f"{target.name} must at least run float32 at {profile}"


INVALID = [  # (description, the rule it breaks, changes to a valid rank-2 ONNX case with 5 along the axis)
    ("k above the axis size", "onnx.k.max", {"k": 6}),
    ("axis = rank", "onnx.axis.range", {"axis": 2}),
    ("axis below -rank", "onnx.axis.range", {"axis": -3}),
]


def outcome(target, case, x) -> str | None:
    """None when the target refuses the case, else the failure class of what it did. A native
    target runs in a worker process, as a campaign runs it: a crash there is the runtime's."""
    from topkspec.properties import failures
    from topkspec.targets.isolation import IsolatedTarget, TargetCrashed

    runner = IsolatedTarget(target.name, timeout=60) if target.native else target
    try:
        runner.run(case, x)
        return failures.ACCEPTS_INVALID
    except Rejected:
        return None
    except TargetCrashed:
        return failures.CRASH
    finally:
        if runner is not target:
            runner.close()


@slow
def test_validates_follows_the_contract(target):
    """Every built-in runtime's contract refuses K above the size and out-of-range
    axes (validates=True): each is refused, or what the target does instead is declared in its shipped known list.
    K=0 is left to the rejection checks: several runtimes' contracts take it."""
    from topkspec.known import load_known
    from topkspec.properties import failures

    valid = judged(target, Case("onnx:11", "TopK", "float32", (2, 5), -1, 2, index_dtype="int64"))
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    target.run(valid, x)
    known = load_known(None, target.name)
    undeclared = []
    for description, rule, changes in INVALID:
        failure_class = outcome(target, valid.with_(**changes), x)
        if failure_class == failures.CRASH:  # a run files a crash on invalid input under this rule
            rule = "out.invalid_rejected"
        if failure_class and not known.match(rule, failure_class, "float32", "onnx:11", target.version()):
            undeclared.append(f"{description}: {failure_class}")
    assert target.validates, f"{target.name}: every built-in runtime's contract refuses these"
    assert not undeclared, f"{target.name} validates, but its known list does not declare: {undeclared}"


def test_dml_top_k_always_selects_the_largest(target):
    """DML_TOP_K has no AxisDirection: a TOP_K case selects the largest whatever `largest` says."""
    case = judged(target, Case("dml:3.1", "TOP_K", "float32", (1, 1, 1, 4), 3, 2, largest=False,
                               index_dtype="uint32"))
    if gap(target, case):  # mlx: sorted output is outside MLX's contract
        pytest.skip(f"{target.name} cannot run it: {gap(target, case)}")
    values, _ = target.run(case, np.array([[[[1, 4, 2, 3]]]], dtype=np.float32))
    assert values.tolist() == [[[[4, 3]]]], f"values: expected [[[[4, 3]]]], got {values.tolist()}"
