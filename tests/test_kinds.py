"""The kind of argument each failure makes (spec.kinds, report.kinds), and --fail-on."""
import json
import os
from types import SimpleNamespace

import numpy as np
import pytest
from slow import slow

import planted_bugs
from topkspec.cli import main
from topkspec.fuzz import RunConfig, format_summary, run_fuzz
from topkspec.fuzz.results import Failure
from topkspec.properties import check_result, failures
from topkspec.properties.failures import Violation
from topkspec.report import write_reports
from topkspec.report.kinds import classify, kind_of
from topkspec.spec import Case, kinds
from topkspec.spec.contracts import onnx_contract
from topkspec.targets.runtimes.contracts import TORCH

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLANTED = os.path.join(REPO, "tests", "planted_bugs.py")
TINY = np.float32(1e-45)  # float32's smallest subnormal
ONNX = onnx_contract("ONNX Runtime", (11, 24))


def onnx_case(dtype="float32", shape=(3,), k=1, largest=True):
    return Case("onnx:24", "TopK", dtype, shape, 0, k, largest=largest, index_dtype="int64")


def result_failure(bug, x, *, k=1, target="planted"):
    """The failure check_result files for the planted `bug` on `x` (K = k, largest)."""
    case = onnx_case(shape=x.shape, k=k)
    values, indices = getattr(planted_bugs, bug)(x, axis=0, k=k)
    with pytest.raises(Violation) as caught:
        check_result(case, x, values, indices)
    return Failure(target, "valid", caught.value, case, x, [(case, x)], [(values, indices)])


def class_failure(failure_class, rule="out.valid_accepted", *, target="planted", dtype="float32", actual="x"):
    case = onnx_case(dtype)
    violation = Violation(rule, "what broke", failure_class=failure_class, actual=actual, call=case)
    return Failure(target, "valid", violation, case, None, [], [])


def test_a_crash_and_a_hang_are_crashes_and_an_adapter_error_has_no_kind():
    crash = classify(class_failure(failures.CRASH, actual="killed by signal 11 (SIGSEGV)"), ONNX)
    assert crash.id == kinds.CRASH and "SIGSEGV" in crash.argument, f"crash: expected kind crash, got {crash}"
    hang = classify(class_failure(failures.TIMEOUT, rule="timeout"), ONNX)
    assert hang.id == kinds.CRASH, f"timeout: expected kind crash, got {hang}"
    adapter = classify(class_failure(failures.ADAPTER_ERROR, rule="adapter"), ONNX)
    assert adapter.id == kinds.ADAPTER, f"adapter error: expected {kinds.ADAPTER}, got {adapter}"
    assert kinds.fails_run(kinds.ADAPTER, (kinds.CRASH,)), "an adapter error fails every run"


def test_an_internal_error_of_a_living_process_is_judged_by_the_contract_not_a_crash():
    internal = class_failure(failures.INTERNAL_ERROR)  # a library's own exception: no process died
    assert classify(internal, ONNX).id == kinds.STANDARD, classify(internal, ONNX)
    assert classify(internal, TORCH).id == kinds.OWN_DOCUMENTATION, classify(internal, TORCH)


def test_two_answers_to_one_call_contradict_each_other():
    failure = class_failure(failures.NONDETERMINISTIC, rule="out.deterministic")
    kind = classify(failure, ONNX)
    assert kind.id == kinds.CONTRADICTS_ITSELF, f"nondeterministic: expected contradicts-itself, got {kind}"


def test_a_property_that_holds_a_target_to_itself_files_contradicts_itself():
    failure = result_failure("one_based_indices", np.array([0.0, 1.0], np.float32))
    stand_in = SimpleNamespace(rule_ids=(failure.rule,), self_consistency=True)
    kind = classify(failure, ONNX, properties=(stand_in,))
    assert kind.id == kinds.CONTRADICTS_ITSELF, f"{failure.rule} with self_consistency: got {kind}"
    assert classify(failure, ONNX, properties=()).id == kinds.STANDARD, "without it: the standard's"
    from topkspec.properties.catalogue import CATALOGUE
    for prop in CATALOGUE:  # the suite's own properties, where they hold a target to itself
        if getattr(prop, "self_consistency", False):
            made = class_failure(failures.WRONG_RESULT, rule=prop.rule_ids[0])
            assert classify(made, ONNX).id == kinds.CONTRADICTS_ITSELF, f"{prop.name}: {classify(made, ONNX)}"


def test_own_documentation_and_standard_follow_the_contract():
    failure = result_failure("one_based_indices", np.array([0.0, 1.0], np.float32))
    standard = classify(failure, ONNX)
    assert standard.id == kinds.STANDARD and "ONNX TopK-24" in standard.argument, standard
    own = classify(failure, TORCH)
    assert own.id == kinds.OWN_DOCUMENTATION and "docs.pytorch.org" in own.argument, own


def test_a_refused_type_the_kernel_table_leaves_out_is_a_feature_request():
    request = classify(class_failure(failures.REJECTS_VALID, target="onnxruntime", dtype="uint16"), ONNX)
    assert request.id == kinds.FEATURE_REQUEST, f"uint16 refused by onnxruntime: {request}"
    assert "OperatorKernels.md" in request.argument and "int32" in request.argument, request.argument
    listed = classify(class_failure(failures.REJECTS_VALID, target="onnxruntime", dtype="float32"), ONNX)
    assert listed.id == kinds.STANDARD, f"float32, which its table lists, refused: {listed}"
    no_table = classify(class_failure(failures.REJECTS_VALID, target="tvm", dtype="uint16"), ONNX)
    assert no_table.id == kinds.STANDARD, f"a runtime with no table here: {no_table}"


def test_the_kernel_table_is_what_the_installed_onnxruntime_registers():
    ort = pytest.importorskip("onnxruntime")
    from onnxruntime.capi import _pybind_state
    from topkspec.spec.dtypes import canonical
    from topkspec.targets.runtimes.kernel_tables import ONNXRUNTIME_CPU

    if ort.__version__ != ONNXRUNTIME_CPU.release:
        pytest.skip(f"the table is read from onnxruntime {ONNXRUNTIME_CPU.release}, {ort.__version__} is here")
    registered = {}
    for kernel in _pybind_state.get_all_opkernel_def():
        if kernel.op_name == "TopK" and kernel.provider == "CPUExecutionProvider" and not kernel.domain:
            for opset in (1, 10, 11, 24):
                if kernel.version_range[0] <= opset <= kernel.version_range[1]:
                    registered.setdefault(opset, set()).update(
                        canonical(t[len("tensor("):-1]) for t in kernel.type_constraints["T"])
    for opset, types in registered.items():
        assert set(ONNXRUNTIME_CPU.types_at(opset)) == types, \
            f"opset {opset}: the table lists {ONNXRUNTIME_CPU.types_at(opset)}, onnxruntime registers {sorted(types)}"


def test_a_result_right_once_subnormals_compare_as_zero_is_open_and_fails_no_run():
    x = np.array([0.0, TINY, 0.0], np.float32)
    failure = result_failure("subnormals_as_zero", x)
    kind = classify(failure, ONNX)
    assert kind.id == kinds.OPEN and "subnormals" in kind.argument, f"{failure.rule} on {x}: got {kind}"
    assert not kinds.fails_run(kind.id, kinds.KINDS), "an open failure fails no run, even when asked"
    other = result_failure("one_based_indices", x)  # value 1e-45 at index 2
    assert classify(other, ONNX).id != kinds.OPEN, f"another bug on the same input: {classify(other, ONNX)}"


def test_a_rule_the_contract_leaves_open_is_open():
    x = np.array([2.0, 2.0], np.float32)
    case = onnx_case(shape=(2,))
    violation = Violation("out.ties.index_order", "tie out of index order", call=case)
    failure = Failure("torch", "valid", violation, case, x, [(case, x)], [(x[:1], np.array([1]))])
    kind = classify(failure, TORCH)
    assert kind.id == kinds.OPEN and "ties" in kind.argument, f"ties, which torch leaves open: {kind}"


@pytest.mark.parametrize("given, message", [("nonsense", "nonsense is no kind"), ("", "name at least one kind"),
                                            ("crash,bogus", "bogus is no kind")])
def test_a_bad_fail_on_is_bad_usage(capsys, given, message):
    code = main(["fuzz", "--target", "reference", "--fail-on", given, "--max-examples", "1"])
    err = capsys.readouterr().err
    assert code == 2 and message in err, f"--fail-on {given!r}: expected exit 2 and {message!r}, got {code}: {err}"


def test_fail_on_chooses_the_kinds_that_fail_the_run_and_the_summary_counts_them(capsys, tmp_path):
    reports = tmp_path / "reports"
    code = main(["fuzz", "--settings", "ci", "--quiet", "--target", f"{PLANTED}:one_based_indices",
                 "--spec", "onnx:24", "--max-examples", "30", "--seed", "0", "--report-dir", str(reports),
                 "--fail-on", "crash,feature-request"])
    out = capsys.readouterr().out
    assert code == 0, f"--fail-on crash,feature-request on a standard bug: expected exit 0, got {code}\n{out}"
    assert "failures by kind (the run fails on crash, feature-request" in out, out
    assert "none of them fails the run" in out and "kind: standard (does not fail the run)" in out, out
    for folder in sorted(reports.iterdir()):
        case = json.loads((folder / "case.json").read_text())
        assert case["kind"] == kinds.STANDARD, f"{folder.name}: case.json kind {case['kind']}"
        report = (folder / "report.md").read_text().splitlines()
        assert report[2].startswith("**Kind: breaks the standard it implements** (`standard`) — it breaks ONNX "
                                    "TopK-24"), f"{folder.name}: opening lines {report[:3]}"


def test_own_documentation_and_contradicts_itself_in_runs_of_planted_bugs():
    own = run_fuzz(RunConfig(target=f"{PLANTED}:one_based_indices", profile="onnx:24", max_examples=30, seed=0,
                             settings="ci", groups=("valid",), contract=TORCH))
    assert own.failures and own.failures_by_kind() == {kinds.OWN_DOCUMENTATION: len(own.failures)}, \
        format_summary(own)
    assert own.exit_code == 1, f"own-documentation fails a run by default: exit {own.exit_code}"
    own.fail_on = (kinds.CRASH, kinds.CONTRADICTS_ITSELF, kinds.STANDARD)
    assert own.exit_code == 0, f"with --fail-on leaving own-documentation out: exit {own.exit_code}"
    twice = run_fuzz(RunConfig(target=f"{PLANTED}:alternating_ties", profile="onnx:24", max_examples=20, seed=0,
                               settings="ci", groups=("deterministic",)))
    assert [kind_of(f, twice).id for f in twice.failures] == [kinds.CONTRADICTS_ITSELF], format_summary(twice)
    assert "contradicts-itself           1" in format_summary(twice), format_summary(twice)


def test_onnxruntime_refusing_types_its_table_lacks_gets_feature_requests_and_known_still_counts_them(tmp_path):
    pytest.importorskip("onnxruntime")
    config = dict(target="onnxruntime", profile="onnx:24", max_examples=60, seed=0, settings="ci",
                  groups=("valid",), confirm=False)
    result = run_fuzz(RunConfig(**config))
    refused = {f.case.dtype: kind_of(f, result).id for f in result.failures
               if f.failure_class == failures.REJECTS_VALID}
    assert refused and set(refused.values()) == {kinds.FEATURE_REQUEST}, f"{refused}\n{format_summary(result)}"
    result.fail_on = (kinds.OWN_DOCUMENTATION, kinds.CRASH, kinds.CONTRADICTS_ITSELF, kinds.STANDARD)
    assert result.exit_code == 0, f"kinds 1-4 only: expected exit 0, got {result.exit_code}\n{format_summary(result)}"
    folder = write_reports(result, str(tmp_path))[0]
    report = open(os.path.join(folder, "report.md")).read().splitlines()
    assert report[0].startswith("# Feature request: ONNX Runtime"), f"title: {report[0]}"
    assert report[2].startswith("**Kind: feature request** (`feature-request`)"), f"opening: {report[2]}"
    assert any(line.startswith("A feature request, not a bug report: ") for line in report[:8]), report[:8]
    known = run_fuzz(RunConfig(**config, known=""))  # the shipped list declares each of them
    assert known.failures == [] and known.exit_code == 0, format_summary(known)


pytest_plugins = ["pytester"]


@slow
def test_the_plugin_passes_a_group_whose_failures_are_of_kinds_topk_fail_on_leaves_out(pytester):
    pytester.makepyfile(tinyprofile="from hypothesis import settings\nsettings.register_profile('tiny', "
                                    "max_examples=30, derandomize=True, database=None, deadline=None)\n")
    pytester.syspathinsert()
    args = ("-p", "tinyprofile", "-p", "no:cacheprovider", "--pyargs", "topkspec.suite", "--hypothesis-profile",
            "tiny", "--topk-target", f"{PLANTED}:ignores_direction", "-rP")
    left_out = pytester.runpytest_subprocess(*args, "--topk-fail-on", "crash,feature-request")
    outcomes = left_out.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("passed", 0) >= 1, f"{outcomes}\n{left_out.stdout.str()}"
    left_out.stdout.fnmatch_lines(["*kind: standard (does not fail the run): it breaks DirectML*"])
    left_out.stdout.fnmatch_lines(["*topkspec verdicts:*", "failures by kind (the run fails on crash, feature-request*",
                                   "  standard *", "  none of them fails the run*"])
    bad = pytester.runpytest_subprocess(*args, "--topk-fail-on", "bugs")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR, f"--topk-fail-on bugs: exit {bad.ret}"
    bad.stderr.fnmatch_lines(["*topkspec: --fail-on: bugs is no kind*"])
