"""Bug reports: the folder, the plain title, the quoted rule, expected against actual, the
repro program for each relation (run against the bug and against a fix), and the writer hook."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from slow import slow

from topkspec.properties import failures
from topkspec.properties.failures import Violation
from topkspec.report import side_by_side, write_report
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer
from topkspec.fuzz import Failure, RunConfig, RunResult, run_fuzz
from topkspec.spec import Case
from topkspec.targets.base import Target

PLANTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "planted_bugs.py")
PRIVATE = re.compile(r"\d{3}_[0-9a-f]{16}\.txt|DESIGN\.md")
IMPORTS_TOPKSPEC = re.compile(r"^\s*(import|from) topkspec", re.MULTILINE)


def make_failure(case, x, outputs, violation, target="onnxruntime", calls=None, group="valid"):
    return Failure(target=target, group=group, violation=violation, case=case, x=x,
                   calls=calls or [(case, x)], outputs=outputs)


def make_result(profile, seed=3):
    return RunResult(target="onnxruntime", version="test", profile=profile, settings="ci",
                     seed=seed, max_examples=10)


def run_program(path, *args):
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=180)


def read(folder, name):
    with open(os.path.join(folder, name)) as handle:
        return handle.read()


@pytest.mark.parametrize("failure_class, rule, relation", [
    (failures.CRASH, "out.valid_accepted", "crash"),
    (failures.HANG, "out.valid_accepted", "hang"),
    (failures.REJECTS_VALID, "out.valid_accepted", "accept"),
    (failures.ACCEPTS_INVALID, "out.invalid_rejected", "reject"),
    (failures.NONDETERMINISTIC, "out.deterministic", "deterministic"),
    (failures.WRONG_RESULT, "out.prefix", "prefix"),
    (failures.WRONG_RESULT, "out.axis_moves", "axis_moves"),
    (failures.WRONG_RESULT, "out.ties.index_order", "result"),
])
def test_each_failure_kind_has_its_repro_relation(failure_class, rule, relation):
    case = Case("dml:5.0", "TOP_K1", "float32", (2,), 0, 1)
    failure = make_failure(case, np.zeros(2, np.float32), [None], Violation(rule, "m", failure_class=failure_class))
    assert failure.relation == relation, f"{failure_class}/{rule}: expected {relation}, got {failure.relation}"


def test_the_table_marks_only_the_differing_positions():
    case = Case("dml:5.0", "TOP_K1", "float32", (2, 3), 1, 2)
    expected = (np.array([[3, 2], [9, 8]], np.float32), np.array([[0, 1], [2, 1]], np.uint32))
    actual = (np.array([[3, 2], [9, 8]], np.float32), np.array([[0, 1], [2, 0]], np.uint32))
    table = side_by_side(case, "expected", expected, "actual", actual)
    rows = [line for line in table.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 2, f"only sequence 1 differs, so only its rows are shown:\n{table}"
    assert rows[1].endswith("**≠** |") and not rows[0].endswith("**≠** |"), f"marks:\n{table}"
    signed = side_by_side(case.with_(shape=(1, 2), k=1), "e", (np.array([[-0.0]], np.float32), np.array([[0]])),
                          "a", (np.array([[0.0]], np.float32), np.array([[1]])))
    assert "-0.0" in signed and "np.float32" not in signed, f"plain numbers, signed zero kept:\n{signed}"


def test_k_zero_on_onnxruntime_is_a_report_a_maintainer_files(tmp_path):
    case = Case("onnx:24", "TopK", "float32", (3,), 0, 0, index_dtype="int64")
    outputs = [(np.zeros(0, np.float32), np.zeros(0, np.int64))]
    violation = Violation(("out.invalid_rejected", "onnx.k.positive"), "out.invalid_rejected: K=0 accepted",
                          failure_class=failures.ACCEPTS_INVALID)
    folder = write_report(make_failure(case, np.arange(3, dtype=np.float32), outputs, violation, group="invalid"),
                          make_result("onnx:24"), str(tmp_path), target_spec="onnxruntime")
    report = read(folder, "report.md")
    title = report.splitlines()[0]
    assert title == ("# ONNX Runtime TopK-24 (CPU) accepts K = 0 and returns empty outputs "
                     "— the documents decide it"), f"title: {title}"
    for part in ("> A 1-D tensor containing a single positive value", "https://onnx.ai/onnx/operators/onnx__TopK.html",
                 "TopK - 24, Inputs: K", "**Expected** (the spec): an error", "**Actual** (ONNX Runtime TopK-24 (CPU))",
                 "onnxruntime 1.", "CPUExecutionProvider", "seed 3"):
        assert part in report, f"report.md lacks {part!r}:\n{report}"
    assert "learn.microsoft.com" not in report and "DML_" not in report, f"an ONNX report quotes ONNX only:\n{report}"
    assert not PRIVATE.search(report + read(folder, "case.json")), "the report names private files"
    data = json.loads(read(folder, "case.json"))
    assert data["calls"][0]["k"] == 0 and data["relation"] == "reject", f"case.json: {data}"
    assert data["stack"]["runtime"] == "ONNX Runtime", f"case.json stack: {data['stack']}"
    assert os.path.basename(folder).startswith("01-onnx-k-positive"), f"folder name: {folder}"

    repro = read(folder, "repro.py")
    assert not IMPORTS_TOPKSPEC.search(repro) and "import onnxruntime" in repro, f"repro must use ONNX Runtime alone:\n{repro}"
    assert len(repro.splitlines()) < 60, f"repro.py has {len(repro.splitlines())} lines"
    done = run_program(os.path.join(folder, "repro.py"))
    assert done.returncode == 1, f"ONNX Runtime 1.32 accepts K=0: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    assert "expected: an error" in done.stdout and "actual:   values [] indices []" in done.stdout, done.stdout
    # A runtime that refuses the call is the fix: an axis out of range makes ONNX Runtime refuse it.
    fixed = os.path.join(folder, "fixed.py")
    with open(fixed, "w") as handle:
        handle.write(repro.replace("K, AXIS = 0, 0", "K, AXIS = 0, 5"))
    done = run_program(fixed)
    assert done.returncode == 0, f"a refusal: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


def test_a_wrong_result_report_shows_both_sides_and_the_repro_passes_where_the_runtime_is_right(tmp_path):
    # A wrong result recorded for a case ONNX Runtime computes right: the repro must say fixed (0).
    case = Case("onnx:11", "TopK", "float32", (2, 3), -1, 2, index_dtype="int64")
    x = np.array([[1, 5, 5], [2, 0, 7]], np.float32)
    wrong = (np.array([[5, 5], [7, 2]], np.float32), np.array([[2, 1], [2, 0]], np.int64))
    violation = Violation("out.ties.index_order", "out.ties.index_order: sequence (0,): equal values", expected=1,
                          actual=2, where={"sequence": (0,), "position": 0})
    folder = write_report(make_failure(case, x, [wrong], violation), make_result("onnx:11", seed=None),
                          str(tmp_path), target_spec="onnxruntime")
    report = read(folder, "report.md")
    assert "| 0 | 0 | 5.0 | 1 | 5.0 | 2 | **≠** |" in report, f"side-by-side table:\n{report}"
    assert "expected: value" in report and "actual (ONNX Runtime TopK-11 (CPU)): value" in report, report
    assert "First difference at" not in report and "from the same seed" not in report, report
    assert "saved failures replay first" in report, f"without a seed the rerun says what replays:\n{report}"
    assert report.splitlines()[0].startswith("# ONNX Runtime TopK-11 (CPU) returns tied values out of index order")
    done = run_program(os.path.join(folder, "repro.py"))
    assert done.returncode == 0, f"ONNX Runtime is right here: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"
    assert "expected: values [[5.0, 5.0], [7.0, 2.0]] indices [[1, 2], [2, 0]]" in done.stdout, done.stdout


def test_a_metamorphic_call_that_returns_a_wrong_result_is_the_case_the_report_names(tmp_path):
    # The metamorphic group drew K = 1 and also called with K = 3; that call repeated an index.
    drawn = Case("onnx:11", "TopK", "float32", (3,), 0, 1, index_dtype="int64")
    full = drawn.with_(k=3)
    x = np.array([4, 9, 1], np.float32)
    right = (np.array([9], np.float32), np.array([1]))
    repeated = (np.array([9, 9, 1], np.float32), np.array([1, 1, 2]))
    violation = Violation("out.indices.range_distinct", "index 1 appears twice", where={"position": 1})
    failure = make_failure(drawn, x, [right, repeated], violation, calls=[(drawn, x), (full, x)],
                           group="metamorphic")
    folder = write_report(failure, make_result("onnx:11"), str(tmp_path), target_spec="onnxruntime")
    report, document = read(folder, "report.md"), json.loads(read(folder, "case.json"))
    assert "K = 3" in report.splitlines()[0] and "K = 1" not in report.splitlines()[0], report.splitlines()[0]
    assert document["case"]["k"] == 3 and document["drawn_case"]["k"] == 1, (document["case"], document["drawn_case"])
    assert "The property group `metamorphic` drew float32[3], K = 1" in report, report
    assert "K, AXIS = 3, 0" in read(folder, "repro.py")
    assert "float32[3] axis=0 k=3" in failure.case.describe() and failure.drawn == drawn, failure.case.describe()


@pytest.mark.parametrize("failure_class, rule, shown_k", [
    (failures.CRASH, "out.valid_accepted", 3),  # the K = 3 call crashed: that call is the case
    (failures.REJECTS_VALID, "out.valid_accepted", 3),
    (failures.WRONG_RESULT, "out.prefix", 1),  # two calls compared: the drawn case leads
    (failures.NONDETERMINISTIC, "out.deterministic", 1),
])
def test_the_case_a_failure_is_shown_with_is_the_call_that_failed(failure_class, rule, shown_k):
    drawn = Case("onnx:11", "TopK", "float32", (3,), 0, 1, index_dtype="int64")
    x = np.array([4, 9, 1], np.float32)
    failure = make_failure(drawn, x, [None, None], Violation(rule, "m", failure_class=failure_class),
                           calls=[(drawn, x), (drawn.with_(k=3), x)], group="metamorphic")
    assert failure.case.k == shown_k, f"{failure_class}/{rule}: shown {failure.case.describe()}"


def test_bfloat16_inputs_survive_the_npz_and_the_program(tmp_path):
    import ml_dtypes

    case = Case("onnx:24", "TopK", "bfloat16", (3,), 0, 1, index_dtype="int64")
    x = np.array([1.5, -2, 3], dtype=ml_dtypes.bfloat16)
    violation = Violation("out.valid_accepted", "refused", failure_class=failures.REJECTS_VALID, actual="refused")
    folder = write_report(make_failure(case, x, [None], violation, target="reference"), make_result("onnx:24"),
                          str(tmp_path), target_spec="reference")
    stored = np.load(os.path.join(folder, "inputs.npz"))["x0"].view(ml_dtypes.bfloat16)
    assert stored.tolist() == x.tolist(), f"x0: expected {x.tolist()}, got {stored.tolist()}"
    assert "dtype=ml_dtypes.bfloat16" in read(folder, "repro.py"), "the program writes bfloat16 input exactly"
    done = run_program(os.path.join(folder, "repro.py"))
    assert done.returncode == 0, f"the reference accepts bfloat16: expected exit 0, got {done.returncode}\n{done.stderr}"


@pytest.mark.parametrize("bug, group, isolate", [
    ("nan_breaks_order", "nan", None),
    ("one_based_indices", "valid", None),
    ("accepts_k_above_n", "invalid", None),
    ("raises_on_nan", "nan", None),  # (refusing K = n is failed neither way at dml profiles: dml.k.max is ambiguous)
    ("hangs_when_k_equals_n", "valid", True),
])
@slow
def test_a_planted_bug_repro_fails_against_the_bug_and_passes_against_the_fix(tmp_path, bug, group, isolate):
    result = run_fuzz(RunConfig(target=f"{PLANTED}:{bug}", max_examples=80, seed=0, settings="ci",
                                groups=(group,), report_dir=str(tmp_path), isolate=isolate, timeout=2))
    assert result.failures, f"{bug}: the {group} group found nothing"
    folder = result.failures[0].report_dir
    repro = read(folder, "repro.py")
    assert not IMPORTS_TOPKSPEC.search(repro) and f"function = module.{bug}" in repro, f"{bug}: repro.py\n{repro}"
    limit = 90 if "subprocess" in repro else 75  # docs/fuzzing.md: a function of your own, and a crash or hang
    assert len(repro.splitlines()) < limit, f"{bug}: repro.py has {len(repro.splitlines())} lines, over {limit}"
    done = run_program(os.path.join(folder, "repro.py"))
    assert done.returncode == 1, f"{bug}: against the bug expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    fixed = os.path.join(folder, "fixed.py")
    with open(fixed, "w") as handle:
        handle.write(repro.replace(f"module.{bug}", "module.CORRECT"))
    done = run_program(fixed)
    assert done.returncode == 0, f"{bug}: against the fix expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"
    report = read(folder, "report.md")
    title = report.splitlines()[0]
    assert title.startswith(f"# {bug} (planted_bugs.py) ") and "out." not in title, f"{bug}: title {title}"
    if result.failures[0].failure_class == failures.TIMEOUT:  # a time limit: no rule to quote
        assert "learn.microsoft.com" not in report and "--timeout" in report, f"{bug}: a timeout quotes no rule"
    else:
        assert "learn.microsoft.com" in report and "onnx.ai" not in report, f"{bug}: a dml:5.0 report quotes DirectML only"


def test_the_directml_provider_repro_feeds_k_with_its_session_options(tmp_path):
    case = Case("dml:5.0", "TOP_K1", "float16", (1, 4), 1, 2, index_dtype="int64")
    violation = Violation("out.exact", "out.exact: position 0: wrong", expected=1, actual=2)
    folder = write_report(make_failure(case, np.arange(4, dtype=np.float16).reshape(1, 4), [None], violation,
                                       target="onnxruntime-directml"),
                          make_result("dml:5.0"), str(tmp_path), target_spec="onnxruntime-directml")
    repro, report = read(folder, "repro.py"), read(folder, "report.md")
    for line in ('feeds["K"] = np.array([k], dtype=np.int64)', "options.enable_mem_pattern = False", "options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL",
                 'options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")',
                 'providers=["DmlExecutionProvider"]'):
        assert line in repro, f"the DirectML provider repro lacks {line!r}:\n{repro}"
    assert report.startswith("# ONNX Runtime TopK-11 (DirectML) returns a wrong result"), report.splitlines()[0]
    assert "K as a graph input" in report, report


class _Custom(Target):
    name = "custom-npu"
    repro_kind = "custom-npu"


def test_a_target_kind_plugs_in_its_own_repro_program_and_stack(tmp_path):
    template = tmp_path / "npu.tmpl"
    template.write_text("def topk(x, k, axis):\n    return $call\n")
    writer = ReproWriter(template=template, needs="numpy and the NPU driver",
                         fill=lambda target, case, spec: {"call": "npu_topk(x, k, axis)  # on $device".replace(
                             "$device", "NPU 0")},
                         stack=lambda target, case, spec: RuntimeStack("NPU runtime", "TopK-11", "NPU 0", {"npu": "2.1"},
                                                                ("compiled with -O2",)))
    register_repro_writer("custom-npu", writer)
    case = Case("onnx:11", "TopK", "float32", (2,), 0, 1, index_dtype="int64")
    violation = Violation("out.exact", "out.exact: position 0: wrong", expected=1, actual=2)
    folder = write_report(make_failure(case, np.array([1, 2], np.float32), [None], violation, target="custom-npu"),
                          make_result("onnx:11"), str(tmp_path), target_spec=_Custom())
    repro, report = read(folder, "repro.py"), read(folder, "report.md")
    assert "npu_topk(x, k, axis)  # on NPU 0" in repro and "Needs numpy and the NPU driver" in repro, repro
    assert report.startswith("# NPU runtime TopK-11 (NPU 0) returns a wrong result"), report.splitlines()[0]
    assert "npu 2.1" in report and "- compiled with -O2" in report, f"stack description:\n{report}"


class _TwoOperators(Target):
    name = "two-operators"
    repro_kind = "two-operators"


@pytest.mark.parametrize("top_k_body, exit_code", [
    ("order = np.argsort(-x, kind='stable')", 0),  # DML_TOP_K as DML_TOP_K1 DECREASING: agree
    ("order = np.argsort(-x, kind='stable') if op == 'TOP_K1' else np.argsort(-x, kind='stable')[::-1]", 1),
])
def test_a_writer_that_takes_the_operator_compares_top_k_with_top_k1(tmp_path, top_k_body, exit_code):
    template = tmp_path / "two.tmpl"
    template.write_text("def topk(x, k, axis, op):\n    $body\n    return x[order[:k]], order[:k]\n")
    register_repro_writer("two-operators", ReproWriter(
        template=template, needs="numpy", fill=lambda target, case, spec: {"body": top_k_body},
        stack=lambda target, case, spec: RuntimeStack("Two", "DML_TOP_K1", "GPU"), takes_op=True))
    case = Case("dml:5.0", "TOP_K1", "float32", (3,), 0, 2, index_dtype="uint32")
    x = np.array([1, 1, 1], np.float32)
    violation = Violation("out.topk_equals_topk1", "out.topk_equals_topk1: differ", expected=0, actual=1)
    failure = make_failure(case, x, [None, None], violation, target="two-operators",
                           calls=[(case, x), (case.with_(op="TOP_K"), x)])
    folder = write_report(failure, make_result("dml:5.0"), str(tmp_path), target_spec=_TwoOperators())
    repro = read(folder, "repro.py")
    assert 'topk(X, K, AXIS, op="TOP_K1")' in repro and 'topk(X, K, AXIS, op="TOP_K")' in repro, repro
    done = run_program(os.path.join(folder, "repro.py"))
    assert done.returncode == exit_code, f"expected exit {exit_code}, got {done.returncode}\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("sorted_", [True, False], ids=["sorted", "unsorted"])
def test_a_nan_rule_table_marks_only_what_the_rule_forbids(tmp_path, sorted_):
    # Column 0 puts its NaN last (allowed, though the reference puts it first) with its one
    # non-NaN value right; column 1 puts 0.0 after -3.0 (forbidden when sorted, allowed under
    # sorted=0); column 2 returns -3.0 where the input's 0.0 belongs (forbidden either way).
    from topkspec.properties import check_nan_policy_free

    x = np.array([[np.nan, 0.0, 5.0], [1.0, np.nan, 0.0], [2.0, -3.0, -3.0]], dtype=np.float32)
    case = Case("onnx:11", "TopK", "float32", (3, 3), 0, 2, sorted=sorted_, index_dtype="int64")
    values = np.array([[2.0, -3.0, 5.0], [1.0, 0.0, -3.0]], dtype=np.float32)
    indices = np.array([[2, 2, 0], [1, 0, 2]], dtype=np.int64)
    with pytest.raises(Violation) as broken:
        check_nan_policy_free(case, x, values, indices)
    folder = write_report(make_failure(case, x, [(values, indices)], broken.value, group="nan"),
                          make_result("onnx:11"), str(tmp_path), target_spec="onnxruntime")
    table = [line for line in read(folder, "report.md").splitlines() if line.startswith("| ") and "|---" not in line]
    marked = {int(line.split("|")[1]) for line in table[1:] if "**≠**" in line}
    assert marked == ({1, 2} if sorted_ else {2}), f"sequences marked: {sorted(marked)}\n" + "\n".join(table)
    assert all(line.split("|")[1].strip() in {str(s) for s in marked} for line in table[1:]), "\n".join(table)


def test_reports_kept_per_value_type_name_the_type_in_their_folders(tmp_path):
    result = make_result("onnx:24")
    for index, dtype in enumerate(("uint16", "uint32"), 1):
        case = Case("onnx:24", "TopK", dtype, (1,), 0, 1, index_dtype="int64")
        violation = Violation("out.valid_accepted", "refused", failure_class=failures.REJECTS_VALID,
                              where={"value type": dtype}, expected="a result", actual="NOT_IMPLEMENTED")
        folder = write_report(make_failure(case, np.zeros(1, dtype), [None], violation), result, str(tmp_path))
        assert os.path.basename(folder) == f"{index:02d}-out-valid-accepted-rejects-a-valid-descriptor-{dtype}"


def test_an_adapter_error_repro_runs_the_adapter_and_never_says_fixed_while_it_breaks(tmp_path):
    broken = os.path.join(os.path.dirname(PLANTED), "plugins", "broken_adapters.py")
    result = run_fuzz(RunConfig(target=f"{broken}:attribute_error", max_examples=20, seed=0, settings="ci",
                                groups=("valid",), report_dir=str(tmp_path), isolate=False))
    [failure] = result.failures
    assert failure.failure_class == failures.ADAPTER_ERROR and failure.relation == "adapter"
    title = read(failure.report_dir, "report.md").splitlines()[0]
    assert title.endswith("(adapter error: no verdict on the target)"), title
    repro = os.path.join(failure.report_dir, "repro.py")
    done = run_program(repro)
    assert done.returncode == 1 and "still broken: AdapterError" in done.stdout and "fixed" not in done.stdout, \
        done.stdout + done.stderr
    fixed = os.path.join(failure.report_dir, "fixed.py")
    with open(fixed, "w") as handle:
        # the program names the target's file relative to its own folder
        relative = {path: repr(os.path.relpath(path, failure.report_dir)) for path in (broken, PLANTED)}
        source = read(failure.report_dir, "repro.py")
        assert relative[broken] in source and repr(broken)[:-1] not in source, "no absolute path of this machine"
        handle.write(source.replace(relative[broken], relative[PLANTED]).replace("':attribute_error'", "':CORRECT'"))
    done = run_program(fixed)
    assert done.returncode == 0 and done.stdout.startswith("fixed: the adapter works"), done.stdout + done.stderr
