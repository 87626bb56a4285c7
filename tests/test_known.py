"""Known-deviation lists: the TOML format, how an entry matches a failure, the lists shipped
for the built-in runtimes, and the verdicts `validate --against` gives besides accepted and
refused."""
import json
import os

import pytest

from topkspec import spec
from topkspec.known import KnownError, load_known, shipped_targets, version_in
from topkspec.properties.failures import FAILURE_CLASSES

HERE = os.path.dirname(__file__)
PLANTED = os.path.join(HERE, "planted_bugs.py")
BROKEN = os.path.join(HERE, "plugins", "broken_adapters.py")

# Every built-in runtime that can deviate ships a list (the reference is the oracle itself).
RUNTIMES = ("onnxruntime", "torch", "torch-cuda", "jax", "openvino", "onnx-reference", "directml", "tract",
            "keras-numpy", "iree", "onnx-checker", "mindspore", "tensorflow")
FINDINGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "findings")


def is_link(url: str) -> bool:
    """A public page, or a finding's report in the repository's findings register."""
    if url.startswith("https://"):
        return True
    parts = url.split("/")
    return (len(parts) == 3 and parts[0] == "findings" and parts[2] == "report.md"
            and os.path.isfile(os.path.join(FINDINGS, parts[1], "report.md")))


def _list(tmp_path, text):
    path = tmp_path / "known.toml"
    path.write_text(text)
    return load_known(str(path), "mine")


def test_an_entry_matches_by_rule_class_type_profile_and_version(tmp_path):
    known = _list(tmp_path, '[[known]]\nrule = "out.nan.unspecified"\nclass = "wrong result"\ndtype = "float32"\n'
                            'profile = "onnx:13"\nversions = ">=1.16,<1.32"\nreason = "r"\n')
    [entry] = known
    hit = ("out.nan.unspecified", "wrong result", "float32", "onnx:11", "onnxruntime 1.31.1 (CPUExecutionProvider)")
    assert known.match(*hit) is entry, "opset 13 and opset 11 are both TopK-11"
    for position, other in ((0, "out.order"), (1, "crash"), (2, "float16"), (3, "onnx:24"),
                            (4, "onnxruntime 1.32.0 (CPUExecutionProvider)")):
        miss = list(hit)
        miss[position] = other
        assert known.match(*miss) is None, f"matched with {other!r} in place of {hit[position]!r}"


def test_a_family_profile_and_a_rule_pattern_match_broadly(tmp_path):
    known = _list(tmp_path, '[[known]]\nrule = "out.*"\nclass = "wrong result"\nprofile = "onnx"\n')
    assert known.match("out.values.gather", "wrong result", "int64", "onnx:24", "x 1.0") is not None
    assert known.match("onnx.k.positive", "wrong result", "int64", "onnx:24", "x 1.0") is None
    assert known.match("out.values.gather", "wrong result", "int64", "dml:5.0", "x 1.0") is None


def test_versions_are_read_from_the_targets_version_string():
    assert version_in("torch 2.13.0+cpu (cpu)", ">=2.13")
    assert not version_in("onnxruntime 1.32.0 (CPUExecutionProvider)", "<1.32")
    assert version_in("DirectML 1.15.4 (adapter llvmpipe)", "==1.15.*")
    assert not version_in("callable my.topk", ">=0"), "no version: a versioned entry does not match"


@pytest.mark.parametrize("text, message", [
    ('[[known]]\nreason = "no rule"\n', "needs a rule"),
    ('[[known]]\nrule = "out.nope"\n', "no rule 'out.nope'"),
    ('[[known]]\nrule = "out.order"\nclass = "slow"\n', "class 'slow'"),
    ('[[known]]\nrule = "out.order"\nprofile = "cuda:1"\n', "cuda:1"),
    ('[[known]]\nrule = "out.order"\nversions = "1.2.3"\n', "PEP 440"),
    ('[[known]]\nrule = "out.order"\ndtype = "uint61"\n', "dtype 'uint61' is no value type"),
    ('[[known]]\nrule = "out.order"\nurl = 3\n', "url must be a string"),
    ('[[known]]\nrule = "out.order"\nticket = "x"\n', "unknown field(s) ticket"),
    ('rule = "out.order"\n', "unknown top-level key(s) rule"),
    ('[[known]\n', "not TOML"),
])
def test_a_bad_list_says_what_is_wrong(tmp_path, text, message):
    with pytest.raises(KnownError) as info:
        _list(tmp_path, text)
    assert message in str(info.value), str(info.value)
    assert isinstance(info.value, ValueError), "bad usage: exit 2 in the command line, a usage error in pytest"


def test_a_missing_file_is_bad_usage(tmp_path):
    with pytest.raises(KnownError, match="cannot read it"):
        load_known(str(tmp_path / "absent.toml"), "mine")


def test_a_target_without_a_shipped_list_gets_an_empty_one_that_says_so():
    known = load_known(None, "my-npu")
    assert len(known) == 0 and "ships no list for my-npu" in known.source


@pytest.mark.parametrize("target", RUNTIMES)
def test_each_built_in_runtime_ships_a_list_of_reasoned_entries(target):
    assert target in shipped_targets()
    known = load_known(None, target)
    assert len(known) > 0
    for entry in known:
        assert entry.reason, f"{target}: {entry.rule} has no reason"
        assert entry.failure_class is None or entry.failure_class in FAILURE_CLASSES
        assert entry.url == "" or is_link(entry.url), entry.url
        assert any(rule == entry.rule or entry.rule.endswith("*") for rule in spec.RULES), entry.rule


@pytest.mark.parametrize("target", sorted(shipped_targets()))
def test_every_shipped_entry_links_its_upstream_report_or_its_finding(target):
    # "Known upstream" means a public page of this very behaviour, or, where nobody has
    # reported it, the finding's report in findings/ (docs/develop.md).
    for entry in load_known(None, target):
        assert entry.url, f"{target}: {entry.rule} ({entry.dtype or 'any type'}) links nothing"
        assert is_link(entry.url), f"{target}: {entry.url} is neither a public page nor a finding's report"


def _validate_against(target, descriptors, tmp_path, capsys):
    from topkspec.cli import main

    path = tmp_path / "descriptors.json"
    path.write_text(json.dumps(descriptors))
    code = main(["validate", str(path), "--against", target])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, [item["against"] for item in json.loads(out)["items"]]


def _onnx(shape, k):
    return {"op_type": "TopK", "opset": 11, "X": {"dtype": "float32", "shape": shape}, "k": k,
            "attributes": {"axis": -1, "largest": 1, "sorted": 1}}


def test_validate_against_gives_a_crash_a_hang_and_an_adapter_error_verdicts_of_their_own(tmp_path, capsys):
    _, crash = _validate_against(f"{PLANTED}:segfaults_on_long_axis", [_onnx([2000], 1), _onnx([4], 2)],
                                 tmp_path, capsys)
    assert [a["outcome"] for a in crash] == ["crash", "accepted"], crash
    assert crash[0]["accepted"] is None and crash[1]["accepted"] is True
    _, hang = _validate_against(f"{PLANTED}:hangs_when_k_equals_n", [_onnx([3], 3)], tmp_path, capsys)
    assert hang[0]["outcome"] == "hang" and hang[0]["accepted"] is None, hang
    _, broken = _validate_against(f"{BROKEN}:attribute_error", [_onnx([3], 1)], tmp_path, capsys)
    assert broken[0]["outcome"] == "adapter error" and "no_such_attribute" in broken[0]["detail"], broken
    _, refused = _validate_against(f"{PLANTED}:CORRECT", [_onnx([3], 4)], tmp_path, capsys)
    assert refused[0]["outcome"] == "refused" and refused[0]["accepted"] is False, refused


def test_a_target_that_compiles_gets_the_time_limit_it_asks_for():
    from topkspec.fuzz.resolve import resolve_target

    notes = []
    target = resolve_target(os.path.join(HERE, "plugins", "slow_compiler.py") + ":SlowCompiler",
                            isolate=True, timeout=5.0, notes=notes)
    try:
        assert target.timeout == 42.0, target.timeout
        assert any("up to 42 s" in note for note in notes), notes
    finally:
        target.close()
    notes = []
    target = resolve_target(os.path.join(HERE, "plugins", "slow_compiler.py") + ":SlowCompiler",
                            isolate=True, timeout=90.0, notes=notes)
    try:
        assert target.timeout == 90.0 and not notes, (target.timeout, notes)
    finally:
        target.close()


def test_a_report_of_a_shipped_deviation_says_so_first_with_its_link_without_known(tmp_path):
    import sys

    sys.path.insert(0, HERE)
    from target_checks import recorded_report

    from topkspec.properties import failures
    from topkspec.spec import Case

    import numpy as np

    case = Case("onnx:24", "TopK", "float32", (1,), 0, 0, index_dtype="int64")
    x = np.zeros(1, np.float32)
    folder = recorded_report(tmp_path, "onnxruntime", case, x, rule=("out.invalid_rejected", "onnx.k.positive"),
                             failure_class=failures.ACCEPTS_INVALID)
    with open(os.path.join(folder, "report.md")) as handle:
        first = handle.read().splitlines()[:5]  # the title, the kind, then what declares it
    assert first[4].startswith("**Known upstream**") and "https://github.com/microsoft/onnxruntime/pull/909" in first[4], first
    with open(os.path.join(folder, "case.json")) as handle:
        assert "pull/909" in json.load(handle)["known"]
    # A user's own target is in no list of topkspec's, whatever its name.
    folder = recorded_report(tmp_path, f"{PLANTED}:CORRECT", case, x, rule=("out.invalid_rejected", "onnx.k.positive"),
                             failure_class=failures.ACCEPTS_INVALID, name="mine")
    with open(os.path.join(folder, "report.md")) as handle:
        assert "Known upstream" not in handle.read()


def test_a_report_of_a_deviation_nobody_reported_points_to_its_finding_not_upstream(tmp_path):
    import sys

    sys.path.insert(0, HERE)
    from target_checks import recorded_report

    from topkspec.properties import failures
    from topkspec.spec import Case

    import numpy as np

    # ONNX Runtime's missing uint16 kernel is topkspec's own finding: no tracker has it.
    case = Case("onnx:24", "TopK", "uint16", (3,), -1, 2, index_dtype="int64")
    folder = recorded_report(tmp_path, "onnxruntime", case, np.array([1, 60000, 7], np.uint16),
                             rule="out.valid_accepted", failure_class=failures.REJECTS_VALID)
    with open(os.path.join(folder, "report.md")) as handle:
        first = handle.read().splitlines()[4]  # after the title and the kind
    assert first.startswith("**Known to topkspec, not reported upstream**"), first
    assert "findings/onnxruntime-uint16-uint32-not-implemented/report.md" in first and "Known upstream" not in first


def test_an_entry_with_k_declares_that_k_alone(tmp_path):
    from topkspec.known import load_known

    path = tmp_path / "k.toml"
    path.write_text('[[known]]\nrule = "out.values.select"\nclass = "wrong result"\nk = 1\nreason = "k = 1 only"\n')
    known = load_known(str(path), "reference")
    assert known.match("out.values.select", "wrong result", "float32", "onnx:24", "1", k=1) is not None
    assert known.match("out.values.select", "wrong result", "float32", "onnx:24", "1", k=2) is None
    assert "K = 1" in known.entries[0].describe()
    path.write_text('[[known]]\nrule = "out.values.select"\nk = "1"\n')
    with pytest.raises(Exception, match="k must be a whole number"):
        load_known(str(path), "reference")


def test_a_report_names_the_entry_that_declares_another_rule_the_result_breaks():
    """A NaN result filed under out.order is declared by tvm's entry for the NaN rule: the
    report's known-upstream line finds it as the run's count does (known.rules_declaring)."""
    from types import SimpleNamespace

    from topkspec.known import known_upstream, rules_declaring
    from topkspec.properties.failures import ACCEPTS_INVALID, Violation

    violation = Violation(("out.order", "out.nan.unspecified"), "the non-NaN values are out of order")
    failure = SimpleNamespace(known=None, rule="out.order", failure_class=violation.failure_class,
                              case=SimpleNamespace(dtype="float32", k=4), violation=violation)
    result = SimpleNamespace(profile="onnx:24", version="0.22.0")
    entry, source = known_upstream(failure, result, "tvm")
    assert entry.rule == "out.nan.unspecified" and entry.url.endswith("tvm-nan-unsorts-the-rest/report.md")
    refused = Violation(("out.invalid_rejected", "onnx.k.positive"), "accepted", failure_class=ACCEPTS_INVALID)
    assert rules_declaring("onnx.k.positive", refused) == ("onnx.k.positive",), "an accepted descriptor: its own rule"
