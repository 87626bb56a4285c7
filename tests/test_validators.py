"""A user's own descriptor validator as a target: resolution, verdicts, the run and its reports."""
import json
import os
import subprocess
import sys
import textwrap

import pytest
from slow import slow

from topkspec import spec
from topkspec.cli import main
from topkspec.fuzz.resolve import resolve_target
from topkspec.strategies import breakable_rules
from topkspec.targets.base import AdapterError, CallableTarget, Rejected
from topkspec.targets.registry import get_target
from topkspec.targets.validator import ValidatorTarget

VALID = {"op_type": "TopK", "opset": 11, "X": {"dtype": "float32", "shape": [3, 4]}, "k": 2,
         "attributes": {"axis": -1, "largest": 1, "sorted": 1}}

# Validators as a user writes them, one file each (written into tmp_path).
CHECKS = '''
import json

from topkspec import spec


def validate(descriptor):
    """Refuses what the spec finds broken."""
    found = spec.validate(descriptor)
    if found:
        raise ValueError("; ".join(f.rule for f in found))


def accepts_k_zero(descriptor):
    """Forgets that K must be positive."""
    print("accepts_k_zero was called")
    found = [f for f in spec.validate(descriptor) if not f.rule.endswith("k.positive")]
    if found:
        raise ValueError("; ".join(f.rule for f in found))


def refuses_uint8(descriptor):
    """Refuses a value type the profile allows."""
    validate(descriptor)
    if "UINT8" in json.dumps(descriptor) or '"uint8"' in json.dumps(descriptor):
        raise ValueError("uint8 is not lowered")
'''

# A target that judges descriptors as written, as directml does, and accepts every one.
DESCRIPTOR_TARGET = '''
from topkspec import reference_topk, spec
from topkspec.targets.base import Rejected, Target
from topkspec.targets.validator import every_breakable_rule


class AcceptsEveryDescriptor(Target):
    name = "accepts-every-descriptor"
    validates = True
    validates_tables = ("dml",)
    descriptor_rules = every_breakable_rule()

    def check_descriptor(self, descriptor):
        return {"accepted": True, "detail": "S_OK"}

    def run(self, case, x):
        if spec.validate(spec.descriptor(case)):
            raise Rejected("invalid")
        values, indices = reference_topk(x, axis=case.norm_axis, k=case.k,
                                         largest=case.largest if case.op == "TOP_K1" else True)
        return values, indices.astype(case.index_dtype)
'''


@pytest.fixture
def checks(tmp_path):
    path = tmp_path / "my_checks.py"
    path.write_text(CHECKS)
    return path


def fuzz(capsys, *args):
    code = main(["fuzz", "--settings", "ci", "--quiet", *args])
    out, err = capsys.readouterr()
    return code, out, err


def run_repro(folder):
    return subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=120)


# -- resolution -------------------------------------------------------------------------------

def test_a_one_parameter_function_is_a_validator_and_a_topk_function_is_not(checks):
    assert isinstance(get_target(f"{checks}:validate"), ValidatorTarget)

    def with_options(descriptor, strict=False):
        return None

    def topk_positional(x, axis, k, largest):
        return None

    def takes_k(descriptor, k=1):
        return None

    from topkspec.targets.registry import as_target
    assert isinstance(as_target(with_options), ValidatorTarget), "optional parameters keep it a validator"
    assert isinstance(as_target(topk_positional), CallableTarget)
    assert isinstance(as_target(takes_k), CallableTarget), "a parameter named k makes it a topk function"


def test_a_validator_target_made_in_user_code_is_taken_as_it_is(tmp_path):
    path = tmp_path / "explicit.py"
    path.write_text("from topkspec.targets.validator import ValidatorTarget\n\n"
                    "def check(descriptor, extra):\n    raise ValueError('no')\n\n"
                    "TARGET = ValidatorTarget(lambda descriptor: check(descriptor, 1), name='explicit')\n")
    target = get_target(f"{path}:TARGET")
    assert isinstance(target, ValidatorTarget) and target.name == "explicit"
    assert target.check_descriptor(VALID) == {"accepted": False, "detail": "ValueError: no"}


def test_a_validator_runs_in_this_process_even_when_isolation_is_asked_for(checks):
    notes = []
    target = resolve_target(f"{checks}:validate", isolate=True, timeout=5, notes=notes)
    assert isinstance(target, ValidatorTarget), f"expected the validator itself, got {target!r}"
    assert notes and "only judges descriptors" in notes[0], notes


# -- its verdicts -----------------------------------------------------------------------------

def test_check_descriptor_maps_a_return_to_acceptance_and_a_raise_to_a_refusal():
    def refuses(descriptor):
        if descriptor["k"] > 1:
            raise Rejected("K above 1")
        if descriptor["k"] < 1:
            raise ValueError("K below 1")

    target = ValidatorTarget(refuses)
    assert target.check_descriptor({**VALID, "k": 1}) == {"accepted": True, "detail": "returned None"}
    assert target.check_descriptor({**VALID, "k": 2}) == {"accepted": False, "detail": "Rejected: K above 1"}
    assert target.check_descriptor({**VALID, "k": 0}) == {"accepted": False, "detail": "ValueError: K below 1"}


def test_a_bug_of_the_function_is_an_adapter_error_and_a_library_refusing_is_a_refusal():
    def broken(descriptor):
        return descriptor["k"] + undefined_name  # noqa: F821

    def wrong_signature(descriptor, other):
        return None

    def library_refuses(descriptor):
        json.dumps(object())  # TypeError raised inside json: the library refusing

    with pytest.raises(AdapterError, match="NameError"):
        ValidatorTarget(broken).check_descriptor(VALID)
    with pytest.raises(AdapterError, match="TypeError"):
        ValidatorTarget(wrong_signature).check_descriptor(VALID)
    verdict = ValidatorTarget(library_refuses).check_descriptor(VALID)
    assert verdict["accepted"] is False and verdict["detail"].startswith("TypeError: "), verdict
    with pytest.raises(AdapterError, match="computes no results"):
        ValidatorTarget(library_refuses).run(None, None)


def test_every_breakable_rule_reaches_a_validator():
    rules = ValidatorTarget(lambda descriptor: None).descriptor_rules
    for profile in ("dml:2.1", "dml:5.0", "onnx:1", "onnx:24"):
        missing = set(breakable_rules(profile)) - rules
        assert not missing, f"{profile}: {sorted(missing)} do not reach a validator"


# -- the run ----------------------------------------------------------------------------------

def test_a_validator_that_refuses_what_spec_validate_refuses_holds(capsys, checks):
    code, out, err = fuzz(capsys, "--target", f"{checks}:validate", "--max-examples", "300", "--seed", "0")
    assert code == 0, f"exit code: expected 0, got {code}\n{out}{err}"
    assert "accepts" in out and "invalid" in out, f"the groups a validator gets: {out}"
    assert "out.valid_accepted" in out and "out.invalid_rejected" in out, out


def test_a_validator_that_accepts_k_zero_is_reported_under_the_rule_with_a_repro(capsys, checks, tmp_path):
    reports = tmp_path / "reports"
    code, out, err = fuzz(capsys, "--target", f"{checks}:accepts_k_zero", "--spec", "dml:5.0", "--max-examples",
                          "300", "--seed", "0", "--report-dir", str(reports))
    assert code == 1, f"exit code: expected 1, got {code}\n{out}{err}"
    assert "Traceback" not in out + err, err
    assert "[accepts an invalid one] dml.k.positive" in out, out
    folders = [f for f in os.listdir(reports) if "dml-k-positive" in f]
    assert len(folders) == 1, os.listdir(reports)
    folder = reports / folders[0]
    report = (folder / "report.md").read_text()
    assert '"K": 0' in report, "report.md shows the descriptor JSON"
    program = (folder / "repro.py").read_text()
    assert "topkspec" not in program.split('"""', 2)[2], "repro.py imports no topkspec of its own"
    run = run_repro(folder)
    assert run.returncode == 1, f"repro.py: expected exit 1 while the bug is there\n{run.stdout}{run.stderr}"
    assert "accepts_k_zero was called" in run.stdout and "actual:   accepted" in run.stdout, run.stdout

    checks.write_text(CHECKS.replace('if not f.rule.endswith("k.positive")', ""))  # the fix
    fixed = run_repro(folder)
    assert fixed.returncode == 0, f"repro.py: expected exit 0 once fixed\n{fixed.stdout}{fixed.stderr}"
    assert "fixed: refused with ValueError: dml.k.positive" in fixed.stdout, fixed.stdout


def test_a_validator_that_refuses_a_valid_descriptor_rejects_a_valid_descriptor(capsys, checks, tmp_path):
    reports = tmp_path / "reports"
    code, out, err = fuzz(capsys, "--target", f"{checks}:refuses_uint8", "--spec", "onnx:11", "--max-examples",
                          "300", "--seed", "0", "--report-dir", str(reports))
    assert code == 1, f"exit code: expected 1, got {code}\n{out}{err}"
    assert "[rejects a valid descriptor] out.valid_accepted" in out, out
    (folder,) = [reports / f for f in os.listdir(reports) if "rejects-a-valid-descriptor" in f]
    report = (folder / "report.md").read_text()
    assert "refused (ValueError: uint8 is not lowered)" in report, report
    assert '"dtype": "uint8"' in report, "report.md shows the descriptor JSON"
    run = run_repro(folder)
    assert run.returncode == 1, f"repro.py: expected exit 1\n{run.stdout}{run.stderr}"
    assert "expected: acceptance" in run.stdout and "uint8 is not lowered" in run.stderr, run.stdout + run.stderr


@slow
def test_a_target_that_accepts_broken_descriptors_as_written_gets_a_summary_and_reports(capsys, tmp_path):
    path = tmp_path / "descriptor_target.py"
    path.write_text(DESCRIPTOR_TARGET)
    reports = tmp_path / "reports"
    code, out, err = fuzz(capsys, "--target", f"{path}:AcceptsEveryDescriptor", "--spec", "dml:5.0",
                          "--max-examples", "200", "--seed", "0", "--report-dir", str(reports))
    assert code == 1, f"exit code: expected 1, got {code}\n{out}{err}"
    assert "Traceback" not in out + err, err
    assert "failures by class:" in out, f"the summary is printed: {out}"
    folders = sorted(os.listdir(reports))
    # dml.desc.fields: a member is missing, so no Case describes the descriptor (a stand-in does)
    (missing,) = [reports / f for f in folders if "dml-desc-fields" in f]
    assert "member" in (missing / "report.md").read_text()
    document = json.loads((missing / "case.json").read_text())
    assert document["invalid_rules"] == ["dml.desc.fields"], document["invalid_rules"]
    for folder in folders:
        assert (reports / folder / "repro.py").is_file(), folder
    run = run_repro(missing)
    assert run.returncode == 1 and "actual:   accepted" in run.stdout, run.stdout + run.stderr


def test_a_valid_descriptor_is_the_json_form_spec_validate_reads():
    from hypothesis import given, settings

    from topkspec.fuzz.validator_groups import valid_descriptors

    @settings(max_examples=40, derandomize=True, database=None)
    @given(valid_descriptors("onnx:11"))
    def each(drawn):
        assert drawn.x is None
        assert spec.validate(drawn.descriptor) == [], drawn.descriptor
        assert spec.case_from_descriptor(drawn.descriptor) == drawn.case

    each()


# The first example of docs/validators.md as it was: it compares K before checking its kind.
COMPARES_K_UNCHECKED = '''
def check_topk(descriptor):
    if descriptor["Desc"]["K"] < 1:
        raise ValueError("K must be positive")
'''


def test_a_validator_gets_a_wrong_kind_as_drawn_and_breaking_on_it_is_an_adapter_error_never_fixed(tmp_path):
    from topkspec.fuzz import RunConfig, run_fuzz
    from topkspec.fuzz.summary import format_summary

    path = tmp_path / "my_checks.py"
    path.write_text(COMPARES_K_UNCHECKED)
    # Valid descriptors arrive well-formed: the accepts group never breaks it.
    result = run_fuzz(RunConfig(target=f"{path}:check_topk", profile="dml:5.0", max_examples=200, seed=0,
                                settings="ci", groups=("accepts",), report_dir=None))
    assert result.ok and result.held["out.valid_accepted"], format_summary(result)
    # A broken descriptor arrives as drawn ("K": "1"), and the TypeError on it is the function's.
    target = get_target(f"{path}:check_topk")
    bad = spec.descriptor(spec.Case("dml:5.0", "TOP_K1", "float32", (4,), 0, 1))
    bad["Desc"]["K"] = "1"
    with pytest.raises(AdapterError, match="TypeError"):
        target.check_descriptor(bad)
    # Its report is an adapter error's: not filed under the documents, and repro.py exits 1
    # until the function gives a verdict, then 0.
    from topkspec.fuzz import Failure, RunResult
    from topkspec.fuzz.context import ADAPTER_RULE
    from topkspec.properties import failures
    from topkspec.properties.failures import Violation
    from topkspec.report import write_report
    from topkspec.strategies.invalid.registry import InvalidDraw

    case = spec.Case("dml:5.0", "TOP_K1", "float32", (4,), 0, 1)
    draw = InvalidDraw(descriptor=bad, rules=frozenset({"dml.desc.fields"}), profile="dml:5.0", how="K = '1'")
    violation = Violation(ADAPTER_RULE, "the adapter broke", failure_class=failures.ADAPTER_ERROR,
                          expected="a result or a refusal (Rejected)", actual="TypeError")
    failure = Failure(target="check_topk", group="invalid", violation=violation, case=case, x=None, calls=[],
                      outputs=[], draw=draw)
    result = RunResult(target="check_topk", version="v", profile="dml:5.0", settings="ci", seed=0, max_examples=1)
    folder = write_report(failure, result, str(tmp_path / "reports"), target_spec=f"{path}:check_topk")
    title = (tmp_path / "reports" / os.path.basename(folder) / "report.md").read_text().splitlines()[0]
    assert "documents" not in title and "adapter error" in title and "K = '1'" in title, title
    run = run_repro(folder)
    assert run.returncode == 1 and "fixed" not in run.stdout and "still broken" in run.stdout, run.stdout + run.stderr
    path.write_text(COMPARES_K_UNCHECKED.replace('descriptor["Desc"]["K"] < 1', 'str(descriptor["Desc"]["K"]) < "1"'))
    run = run_repro(folder)
    assert run.returncode == 0 and run.stdout.startswith("fixed: the adapter gives a verdict"), run.stdout + run.stderr
