"""One verdict per rule: each kind of verdict from a planted bug, independent bugs found
apart, known deviations, --documents-only, and probes that refuse or break."""
import os

import pytest
from slow import slow

from topkspec.fuzz import RunConfig, format_summary, run_fuzz
from topkspec.fuzz.matrix import format_matrix
from topkspec.fuzz.verdicts import (
    BROKEN, BROKEN_BY_READING, HOLDS, KNOWN, NOT_EVALUATED, UNSUPPORTED, verdict_of,
)
from topkspec.properties import failures

HERE = os.path.dirname(__file__)
PLANTED = os.path.join(HERE, "planted_bugs.py")
VERDICTS = os.path.join(HERE, "planted_verdicts.py")


def _run(target, **options):
    options.setdefault("max_examples", 200)
    return run_fuzz(RunConfig(target=target, seed=0, settings="ci", **options))


@slow
def test_two_independent_bugs_in_one_group_are_each_found_and_shrunk_on_their_own_rule():
    result = _run(f"{VERDICTS}:ties_reversed_and_long_axis_kth", max_examples=400, groups=("valid",))
    by_rule = {f.rule: f for f in result.failures}
    assert {"out.ties.index_order", "out.values.select"} <= set(by_rule), \
        f"failures: {[(f.rule, f.case.describe()) for f in result.failures]}"
    ties, select = by_rule["out.ties.index_order"], by_rule["out.values.select"]
    assert ties.group == select.group == "valid"
    assert ties.case.axis_size <= 4, f"the tie bug shrunk off short axes: {ties.case.describe()}"
    assert select.case.axis_size > 200, f"the long-axis bug is reported on: {select.case.describe()}"
    summary = format_summary(result)
    assert "out.nan.unspecified" not in {f.rule for f in result.failures}, summary


def test_holds_is_said_only_of_rules_checked_and_kept():
    # negates_integers breaks the gathered values, the selected multiset and exactness alike:
    # none of them may be said to hold.
    result = _run(f"{VERDICTS}:negates_integers", groups=("valid",))
    kinds = {rule: verdict_of(result, rule).kind for rule in ("out.values.gather", "out.values.select")}
    assert kinds == {"out.values.gather": BROKEN, "out.values.select": BROKEN}, kinds
    assert verdict_of(result, "out.exact").kind != HOLDS or result.held["out.exact"] > 0
    assert verdict_of(result, "out.shape").kind == HOLDS, verdict_of(result, "out.shape")
    assert verdict_of(result, "out.shape").count == result.held["out.shape"] > 0


def test_a_rule_no_example_reaches_is_not_evaluated():
    result = _run(f"{PLANTED}:CORRECT", max_examples=60)
    verdict = verdict_of(result, "out.unsorted.set")  # DirectML profiles have no sorted=0
    assert verdict.kind == NOT_EVALUATED, verdict
    assert result.exit_code == 0, format_summary(result)


def test_a_target_that_expresses_nothing_leaves_its_rules_unsupported():
    result = _run(f"{VERDICTS}:ExpressesNothing", max_examples=40)
    verdict = verdict_of(result, "out.values.select")
    assert verdict.kind == UNSUPPORTED and "expresses no case" in verdict.detail, verdict
    assert result.exit_code == 3, format_summary(result)


@slow
def test_our_reading_broken_is_its_own_verdict_and_only_a_note_with_documents_only():
    plain = _run(f"{PLANTED}:signed_zero_order", groups=("valid",), max_examples=1500)
    assert [f.rule for f in plain.failures] == ["out.ties.signed_zero"], [f.rule for f in plain.failures]
    assert verdict_of(plain, "out.ties.signed_zero").kind == BROKEN_BY_READING
    assert verdict_of(plain, "out.ties.index_order").kind == HOLDS, verdict_of(plain, "out.ties.index_order")
    assert plain.exit_code == 1
    documents = _run(f"{PLANTED}:signed_zero_order", groups=("valid",), documents_only=True, max_examples=1500)
    assert documents.failures == [] and documents.exit_code == 0, format_summary(documents)
    assert verdict_of(documents, "out.ties.signed_zero").kind == BROKEN_BY_READING
    summary = format_summary(documents)
    assert "note: out.ties.signed_zero (our reading) broke" in summary, summary


def test_a_known_deviation_is_counted_never_fails_and_an_unseen_entry_is_listed(tmp_path):
    known = tmp_path / "known.toml"
    known.write_text('[[known]]\nrule = "out.ties.index_order"\nclass = "wrong result"\n'
                     'reason = "ties come out last index first"\nurl = "https://example.org/issue/1"\n\n'
                     '[[known]]\nrule = "out.values.select"\nreason = "an old bug, fixed since"\n')
    result = _run(f"{VERDICTS}:ties_reversed", groups=("valid", "metamorphic"), known=str(known))
    # Reversed ties also break the prefix relation, keep the later tied elements at the K-th
    # place and order -0.0 against +0.0 (our readings): none is declared, so each may be
    # reported; the declared tie order never is.
    assert {f.rule for f in result.failures} <= {"out.prefix", "out.ties.kth_place", "out.ties.signed_zero"}, \
        [f.rule for f in result.failures]
    verdict = verdict_of(result, "out.ties.index_order")
    assert verdict.kind == KNOWN and verdict.count > 0 and "last index first" in verdict.detail, verdict
    assert result.examples["valid"] >= result.budgets["valid"], "a known deviation ended the group"
    summary = format_summary(result)
    assert "known, not seen" in summary and "an old bug, fixed since" in summary, summary
    assert "out.exact" not in {f.rule for f in result.failures}, "exactness broke only through the known ties"


@slow
def test_report_known_shrinks_and_reports_a_known_deviation_without_failing(tmp_path):
    known = tmp_path / "known.toml"
    known.write_text('[[known]]\nrule = "out.ties.index_order"\nreason = "planted"\n\n'
                     '[[known]]\nrule = "out.ties.kth_place"\nreason = "planted: the later ones kept"\n\n'
                     '[[known]]\nrule = "out.ties.signed_zero"\nreason = "planted: zeros of both signs tie"\n')
    result = _run(f"{VERDICTS}:ties_reversed", groups=("valid",), known=str(known), report_known=True,
                  report_dir=str(tmp_path / "reports"))
    assert result.failures == [] and result.exit_code == 0, format_summary(result)
    assert {f.rule for f in result.known_failures} <= {"out.ties.index_order", "out.ties.kth_place",
                                                       "out.ties.signed_zero"}
    for failure in result.known_failures:
        assert failure.case.axis_size <= 4 and failure.report_dir and os.path.isdir(failure.report_dir)


def test_a_runtime_refusing_a_valid_value_type_is_a_finding_per_type_and_skipped_when_invalid():
    result = _run(f"{VERDICTS}:RefusesFloat16", max_examples=300, profile="onnx:11")
    refused = [f for f in result.failures if f.failure_class == failures.REJECTS_VALID]
    assert [f.case.dtype for f in refused] == ["float16"], [(f.rule, f.case.describe()) for f in result.failures]
    assert refused[0].rule == "out.valid_accepted" and "no kernel for float16" in refused[0].violation.actual
    assert not [f for f in result.failures if f.failure_class == failures.ACCEPTS_INVALID]
    # counted as what they are: invalid float16 cases set aside, not the valid ones the finding counts
    assert any(reason.startswith("invalid float16 cases: ") and "refusal proves nothing" in reason
               for reason in result.unsupported), dict(result.unsupported)


def test_a_probe_broken_in_the_adapter_is_an_adapter_error_not_a_refusal():
    result = _run(f"{VERDICTS}:ProbeBreaks", max_examples=200, profile="onnx:11", groups=("valid",))
    classes = {f.failure_class for f in result.failures}
    assert classes == {failures.ADAPTER_ERROR}, [(f.rule, f.failure_class) for f in result.failures]
    assert "KeyError" in result.failures[0].violation.actual


def test_the_matrix_shows_the_same_verdicts_as_the_summary():
    result = _run(f"{PLANTED}:signed_zero_order", groups=("valid",), max_examples=1500)
    table = format_matrix({"planted": result})
    row = next(line for line in table.splitlines() if line.startswith("| `out.ties.signed_zero`"))
    assert "our reading" in row and BROKEN_BY_READING in row, row
    row = next(line for line in table.splitlines() if line.startswith("| `out.shape`"))
    assert f"holds ({result.held['out.shape']})" in row, row


@pytest.mark.parametrize("bad, message", [
    ('[[known]]\nrule = "out.no_such_rule"\n', "out.no_such_rule"),
    ("[[known]\n", "known.toml"),
])
def test_a_bad_known_file_is_bad_usage(tmp_path, capsys, bad, message):
    from topkspec.cli import main

    known = tmp_path / "known.toml"
    known.write_text(bad)
    assert main(["fuzz", "--target", f"{PLANTED}:CORRECT", "--known", str(known), "--max-examples", "5",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def test_an_entry_whose_profile_or_versions_leave_this_run_out_is_listed_as_not_applying(tmp_path):
    known = tmp_path / "known.toml"
    known.write_text('[[known]]\nrule = "out.order"\nprofile = "onnx:1"\nreason = "an opset-1 bug"\n\n'
                     '[[known]]\nrule = "out.exact"\nversions = "<0.0.1"\nreason = "a bug of long ago"\n')
    result = _run("reference", max_examples=50, groups=("valid",), known=str(known))
    summary = format_summary(result)
    assert "none listed" not in summary, summary
    assert f"known, does not apply to this run (it is for onnx:1, this run is at {result.profile}): out.order" \
        in summary, summary
    assert "known, does not apply to this run (it is for versions <0.0.1, this run's is " in summary, summary
    assert "a bug of long ago" in summary, summary
