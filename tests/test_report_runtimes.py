"""repro.py in each runtime's own API: it reproduces a real bug of the installed runtime (exit 1)
and passes (exit 0) on a case the runtime gets right or once the call is fixed."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from topkspec.properties import failures
from topkspec.fuzz import RunConfig, run_fuzz
from topkspec.spec import Case
from target_checks import recorded_report as report_for  # noqa: E402
from slow import slow

IMPORTS_TOPKSPEC = re.compile(r"^\s*(import|from) topkspec", re.MULTILINE)


def run(folder, name="repro.py"):
    path = os.path.join(folder, name)
    with open(path) as handle:
        source = handle.read()
    assert not IMPORTS_TOPKSPEC.search(source), f"{path} imports topkspec:\n{source}"
    # a program that finds its target's file or module from its folder has 15 lines more for it
    limit = 75 if "_cannot_run(" in source else 60
    assert len(source.splitlines()) < limit, f"{path} has {len(source.splitlines())} lines"
    return subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300)


def rewrite(folder, old, new):
    path = os.path.join(folder, "repro.py")
    with open(path) as handle:
        source = handle.read()
    assert old in source, f"{old!r} not in repro.py:\n{source}"
    with open(os.path.join(folder, "fixed.py"), "w") as handle:
        handle.write(source.replace(old, new))


@slow
def test_torch_tie_order_bug_reproduces_and_a_stable_sort_fixes_it(tmp_path):
    # torch's own page leaves the order of ties open, so its contract fails no tie order; held
    # to ONNX's text (--contract), its ties out of index order are a failure with a repro.
    pytest.importorskip("torch")
    from topkspec.spec.contracts import onnx_contract

    own = run_fuzz(RunConfig(target="torch", max_examples=150, seed=0, settings="ci", groups=("valid",)))
    assert not [f for f in own.failures if f.rule.startswith("out.ties")], "torch promises no tie order"
    result = run_fuzz(RunConfig(target="torch", max_examples=150, seed=0, settings="ci", groups=("valid",),
                                report_dir=str(tmp_path), contract=onnx_contract("torch.topk held to ONNX TopK")))
    found = {f.rule: f for f in result.failures}
    assert "out.ties.index_order" in found, f"torch: expected the tie-order bug, found {sorted(found)}"
    folder = found["out.ties.index_order"].report_dir
    done = run(folder)
    assert done.returncode == 1, f"torch {result.version}: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    assert "expected: values" in done.stdout and "actual:   values" in done.stdout, done.stdout
    call = re.search(r"torch\.topk\(torch\.from_numpy\(x\), k, dim=axis, largest=(True|False), sorted=True\)",
                     open(os.path.join(folder, "repro.py")).read())
    assert call, "repro.py calls torch.topk directly"
    largest = call.group(1)
    stable = (f"(lambda s: (s[0].narrow(axis, 0, k), s[1].narrow(axis, 0, k)))(torch.sort(torch.from_numpy(x), "
              f"dim=axis, descending={largest}, stable=True))")
    rewrite(folder, call.group(0), stable)
    done = run(folder, "fixed.py")
    assert done.returncode == 0, f"a stable sort keeps ties in index order: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("largest", [True, False])
def test_jax_signed_zero_bug_reproduces_and_a_correct_case_passes(tmp_path, largest):
    pytest.importorskip("jax")
    case = Case("dml:5.0", "TOP_K1", "float32", (2,), 0, 1, largest=largest, index_dtype="int64")
    x = np.array([-0.0, 0.0] if largest else [1.0, 2.0], dtype=np.float32)
    folder = report_for(tmp_path, "jax", case, x, rule="out.ties.signed_zero")
    source = open(os.path.join(folder, "repro.py")).read()
    assert "jax.lax.top_k" in source and ("smallest_first" in source) is (not largest), source
    done = run(folder)
    if largest:  # lax.top_k ranks -0.0 below +0.0: index 1 comes first, the spec ties them (index 0)
        assert done.returncode == 1, f"jax: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    else:
        assert done.returncode == 0, f"jax smallest of [1, 2]: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


@slow
def test_openvino_nan_bug_reproduces_and_a_case_without_nan_passes(tmp_path):
    pytest.importorskip("openvino")
    result = run_fuzz(RunConfig(target="openvino", max_examples=300, seed=0, settings="ci",
                                groups=("nan",), report_dir=str(tmp_path / "bug")))
    # no placement of NaN makes its result right: filed under the documented rule, naming the NaN rule
    found = [f for f in result.failures if "out.nan.unspecified" in f.violation.rules]
    assert found, f"openvino: expected its NaN bug, found {[f.rule for f in result.failures]}"
    done = run(found[0].report_dir)
    assert done.returncode == 1, f"{result.version}: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    assert "expected the non-NaN values" in done.stderr, done.stderr
    case = Case("onnx:11", "TopK", "float32", (3,), 0, 2, largest=False, index_dtype="int64")
    folder = report_for(tmp_path, "openvino", case, np.array([3, 1, 2], dtype=np.float32), name="right")
    assert "ops.topk(" in open(os.path.join(folder, "repro.py")).read(), "repro.py builds the OpenVINO node"
    done = run(folder)
    assert done.returncode == 0, f"openvino smallest 2 of [3, 1, 2]: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


def test_onnx_reference_accepts_k_zero_and_gets_ties_right(tmp_path):
    case = Case("onnx:24", "TopK", "float32", (2,), 0, 0, index_dtype="int64")
    folder = report_for(tmp_path, "onnx-reference", case, np.array([1, 2], np.float32), name="k0",
                        rule="onnx.k.positive", failure_class=failures.ACCEPTS_INVALID)
    done = run(folder)
    assert done.returncode == 1, f"the evaluator accepts K=0: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    case = Case("onnx:1", "TopK", "float64", (2, 3), 1, 2, index_dtype="int64")
    folder = report_for(tmp_path, "onnx-reference", case, np.array([[2, 2, 1], [0, 5, 5]], np.float64), name="ties")
    assert "k=k" in open(os.path.join(folder, "repro.py")).read(), "TopK-1 takes k as an attribute"
    done = run(folder)
    assert done.returncode == 0, f"the evaluator keeps ties in order: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("relation", ["prefix", "axis_moves", "deterministic", "unsorted", "dml-lowered"])
def test_onnxruntime_repros_of_each_relation_pass_where_it_is_right(tmp_path, relation):
    x = np.array([[3, 1, 3], [2, 2, 0]], np.float32)
    case = Case("onnx:11", "TopK", "float32", (2, 3), -1, 3, index_dtype="int64")
    calls, rule, kind = [(case, x)], "out.exact", failures.WRONG_RESULT
    if relation == "prefix":
        calls, rule = [(case, x), (case.with_(k=1), x)], "out.prefix"
    elif relation == "axis_moves":
        moved = np.ascontiguousarray(np.moveaxis(x, 1, 0))
        calls, rule = [(case, x), (case.with_(shape=(3, 2), axis=-2), moved)], "out.axis_moves"
    elif relation == "deterministic":
        rule, kind = "out.deterministic", failures.NONDETERMINISTIC
    elif relation == "unsorted":
        case = case.with_(sorted=False)
        calls = [(case, x)]
    else:
        case = Case("dml:5.0", "TOP_K1", "float32", (2, 3), 1, 2, largest=False, index_dtype="int64")
        calls = [(case, x)]
    folder = report_for(tmp_path, "onnxruntime", case, x, rule=rule, failure_class=kind, calls=calls)
    done = run(folder)
    assert done.returncode == 0, f"{relation}: ONNX Runtime is right here: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"
    if relation == "dml-lowered":
        report = open(os.path.join(folder, "report.md")).read()
        assert "runs lowered to ONNX TopK-11" in report and "learn.microsoft.com" in report, report


@pytest.mark.parametrize("provider", ["CPUExecutionProvider", "CUDAExecutionProvider", "DmlExecutionProvider"])
def test_the_repro_sets_the_session_options_the_adapter_sets(provider):
    import onnxruntime as ort

    from topkspec.targets.runtimes.onnxruntime import session_lines, session_options

    written = ort.SessionOptions()
    for line in session_lines(provider):
        exec(line, {"options": written, "ort": ort})
    adapter = session_options(provider)
    for name in ("log_severity_level", "enable_cpu_mem_arena", "enable_mem_pattern", "execution_mode"):
        assert getattr(written, name) == getattr(adapter, name), \
            f"{provider} {name}: adapter {getattr(adapter, name)}, repro {getattr(written, name)}"
    fallback = "session.disable_cpu_ep_fallback"

    def entry(options):
        try:
            return options.get_session_config_entry(fallback)
        except RuntimeError:  # not set
            return None

    assert entry(written) == entry(adapter), f"{provider}: {fallback}: adapter {entry(adapter)}, repro {entry(written)}"


@pytest.mark.parametrize("relation", ["prefix", "axis_moves"])
def test_a_metamorphic_repro_with_nan_ignores_where_each_call_puts_nan(tmp_path, relation):
    """A function that orders NaN differently for each K is right (NaN order is unspecified):
    the repro of a prefix or axis-move report on NaN input must pass on it, not report a bug."""
    target = f"{os.path.join(os.path.dirname(__file__), 'plugins', 'sibling_topk.py')}:nan_order_varies_with_k"
    x = np.array([np.nan, 2.0, np.nan, np.nan], np.float32)
    case = Case("dml:5.0", "TOP_K1", "float32", (4,), 0, 4, index_dtype="uint32")
    if relation == "prefix":
        calls, rule = [(case, x), (case.with_(k=2), x)], "out.prefix"
    else:
        calls, rule = [(case, x), (case, x)], "out.axis_moves"
    folder = report_for(tmp_path, target, case, x, rule=rule, calls=calls)
    done = run(folder)
    assert done.returncode == 0, f"{relation} with NaN: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"
    if relation == "prefix":  # a real prefix bug still reproduces through the NaN-aware check
        buggy = target.replace("nan_order_varies_with_k", "wrong_direction_for_small_k")
        y = np.array([np.nan, 2.0, np.nan, 1.0], np.float32)
        done = run(report_for(tmp_path, buggy, case, y, rule=rule, calls=[(case, y), (case.with_(k=2), y)],
                              name="bug"))
        assert done.returncode == 1, f"prefix bug with NaN: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"


def test_a_determinism_repro_with_nan_compares_the_non_nan_values(tmp_path):
    case = Case("onnx:11", "TopK", "float32", (4,), 0, 3, index_dtype="int64")
    x = np.array([np.nan, 2.0, np.nan, 1.0], np.float32)
    folder = report_for(tmp_path, "onnxruntime", case, x, rule="out.deterministic",
                        failure_class=failures.NONDETERMINISTIC)
    done = run(folder)
    assert done.returncode == 0, f"ONNX Runtime is deterministic here: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


def test_an_adapter_error_report_blames_the_adapter_and_quotes_no_rule(tmp_path):
    case = Case("dml:5.0", "TOP_K1", "float32", (1,), 0, 1, index_dtype="uint32")
    folder = report_for(tmp_path, "reference", case, np.array([0.0], np.float32), rule="adapter",
                        failure_class=failures.ADAPTER_ERROR)
    report = open(os.path.join(folder, "report.md")).read()
    title = report.splitlines()[0]
    assert "adapter breaks before the runtime is judged" in title, f"title: {title}"
    assert "## The rule" not in report, "an adapter error breaks no spec rule, so none is quoted"
