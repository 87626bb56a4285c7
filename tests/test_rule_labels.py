"""One label per rule and profile: who states a rule (the documents, our reading of them, or no
rule at all for an adapter error) is the same in a report's title, its body, case.json, the
summary, the matrix's column and cell, and `--documents-only`, for every rule at every profile."""
import json
import os
import re

import numpy as np
import pytest

from topkspec import spec
from topkspec.fuzz import Failure, RunConfig, RunResult, run_fuzz
from topkspec.fuzz.config import ADAPTER_RULE
from topkspec.fuzz.matrix import format_matrix
from topkspec.fuzz.summary import format_summary
from topkspec.fuzz.verdicts import BROKEN, BROKEN_BY_READING
from topkspec.properties import failures
from topkspec.properties.catalogue import RELATION_OF_RULE
from topkspec.properties.failures import Violation
from topkspec.report import write_report
from topkspec.spec import Case
from topkspec.spec.profiles import STANDARD_PROFILES
from topkspec.report.wording import decided_by
from topkspec.spec.queries import stated_by

PLANTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "planted_bugs.py")


def _case(profile: str) -> Case:
    if profile.startswith("onnx"):
        return Case(profile, "TopK", "float32", (4,), -1, 2, index_dtype="int64")
    return Case(profile, "TOP_K1", "float32", (1, 1, 1, 4), 3, 2)


def _rules_at(profile: str) -> list:
    family = profile.split(":")[0]
    return [rule.id for rule in spec.RULE_LIST if rule.scope in (family, "output", "lowering")] + [ADAPTER_RULE]


def _failure(rule: str, case) -> Failure:
    if rule == ADAPTER_RULE:
        violation = Violation(rule, "the adapter broke", failure_class=failures.ADAPTER_ERROR,
                              expected="a result or a refusal (Rejected)", actual="KeyError: 'x'")
    elif rule.startswith(("dml.", "onnx.")):
        violation = Violation(("out.invalid_rejected", rule), f"{rule}: accepted",
                              failure_class=failures.ACCEPTS_INVALID, expected="an error", actual="a result")
    else:
        violation = Violation(rule, f"{rule}: recorded", failure_class=failures.WRONG_RESULT,
                              expected="e", actual="a")
    x = np.arange(4, dtype=np.float32).reshape(case.shape)
    calls = 2 if rule in RELATION_OF_RULE else 1  # a relation between calls replays two
    return Failure(target="reference", group="valid", violation=violation, case=case, x=x,
                   calls=[(case, x)] * calls, outputs=[None] * calls)


@pytest.mark.parametrize("profile", STANDARD_PROFILES)
def test_every_place_gives_a_rule_one_label_at_each_profile(tmp_path, profile):
    case = _case(profile)
    for rule in _rules_at(profile):
        said = stated_by(rule, profile)
        failure = _failure(rule, case)
        result = RunResult(target="reference", version="test", profile=profile, settings="ci", seed=0,
                           max_examples=10)
        result.failures.append(failure)
        result.broken_seen[rule] += 1
        folder = write_report(failure, result, str(tmp_path), target_spec="reference")
        where = f"{rule} at {profile} ({said.status})"

        with open(os.path.join(folder, "report.md")) as handle:
            report = handle.read()
        assert report.splitlines()[0].endswith(decided_by(said)), f"{where}: title {report.splitlines()[0]}"
        if rule != ADAPTER_RULE:
            assert f"Rule `{rule}` ({said.status})" in report, f"{where}: report body"
        for other in re.findall(r"^- `([\w.]+)` \((\w+)\)", report, re.MULTILINE):
            assert other[1] == stated_by(other[0], profile).status, f"{where}: also broken {other}"
        with open(os.path.join(folder, "case.json")) as handle:
            assert json.load(handle)["rule_status"] == said.status, f"{where}: case.json"
        with open(os.path.join(folder, "repro.py")) as handle:
            assert decided_by(said) in handle.readline(), f"{where}: repro.py's title"

        kind = BROKEN_BY_READING if said.is_reading else BROKEN
        summary = format_summary(result)
        assert re.search(rf"^  {re.escape(rule)} +{said.word} +{kind} \(", summary, re.MULTILINE), \
            f"{where}: summary verdict line\n{summary}"
        assert f"] {rule} ({said.word}): " in summary, f"{where}: summary failure line\n{summary}"
        row = next(line for line in format_matrix({"t": result}, str(tmp_path)).splitlines()
                   if line.startswith(f"| `{rule}` |"))
        assert row.startswith(f"| `{rule}` | {said.word} | [**{kind} ("), f"{where}: matrix row {row}"


def test_a_rule_documented_from_a_version_on_is_labelled_so_there_and_not_before():
    assert [stated_by("onnx.axis.range", p).word for p in ("onnx:1", "onnx:10", "onnx:11", "onnx:24")] == \
        ["our reading", "our reading", "documents", "documents"]
    assert [stated_by("onnx.k.positive", p).word for p in ("onnx:1", "onnx:10", "onnx:24")] == \
        ["our reading", "documents", "documents"]
    assert {stated_by("out.order", p).word for p in ("dml:2.1", "dml:5.0", "onnx:11", "onnx:24")} == {"documents"}
    assert {stated_by("out.order", p).word for p in ("onnx:1", "onnx:10")} == {"our reading"}
    assert stated_by(ADAPTER_RULE, "onnx:11").word == "adapter error" and not stated_by(ADAPTER_RULE).is_reading


def test_the_matrix_column_names_the_label_at_each_profile_when_they_differ():
    results = {name: RunResult(target=name, version="test", profile=profile, settings="ci", seed=0, max_examples=1)
               for name, profile in (("a", "onnx:1"), ("b", "onnx:24"))}
    row = next(line for line in format_matrix(results).splitlines() if line.startswith("| `out.order` |"))
    assert "| our reading at onnx:1; documents at onnx:24 |" in row, row


@pytest.mark.parametrize("profile, fails", [("onnx:10", False), ("onnx:11", True)])
def test_documents_only_sets_aside_exactly_the_rules_labelled_our_reading(profile, fails):
    result = run_fuzz(RunConfig(target=f"{PLANTED}:wraps_the_axis", profile=profile, max_examples=60, seed=1,
                                settings="ci", groups=("invalid",), report_dir=None, isolate=False,
                                documents_only=True))
    summary = format_summary(result)
    broke = {f.rule for f in result.failures} | set(result.readings)
    assert "onnx.axis.range" in broke, summary
    assert ("onnx.axis.range" in {f.rule for f in result.failures}) == fails, summary
    assert result.exit_code == (1 if fails else 0), summary
    if not fails:
        assert "failures: none that fail the run (exit 0)" in summary and "--documents-only" in summary, summary
