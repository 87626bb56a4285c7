"""The validator reads each descriptor field exactly as the export's `input_forms` says: every
case is derived from that section (tests/input_form_cases.py), and a planted reader that takes
more than it says (Python's own int() and str.strip()) is caught by the same cases."""
import json

import pytest

from topkspec import spec
from topkspec.spec import forms
from input_form_cases import cases

EXPORTED = json.loads(json.dumps(spec.export()))
CASES = cases(EXPORTED)


def _view_value(view, label):
    field = label.split(" ")[0]
    if field == "Desc.<tensor>.DataType":
        return view["Desc"]["InputTensor"]["DataType"]
    if field == "Desc.AxisDirection":
        return view["Desc"]["AxisDirection"]
    if field == "X.dtype,":
        return view["X"]["dtype"]
    if field == "K.dtype":
        return view["K"]["dtype"]
    return view.get({"Type": "Type", "FeatureLevel": "FeatureLevel", "opset": "opset"}.get(field, ""))


def outcome(validator, desc):
    """("error",) or ("judged", {rule ids found}, view)."""
    try:
        found = {f.rule for f in validator.validate(desc)}
    except (spec.DescriptorError, spec.ProfileError):
        return ("error",)
    return ("judged", found, spec.normalise(desc)[0])


def disagreement(label, expect, got) -> str | None:
    if expect[0] == "error":
        return None if got[0] == "error" else f"{label}: expected an error, got findings {sorted(got[1])}"
    if got[0] == "error":
        return f"{label}: expected {expect}, got an error"
    _, found, view = got
    if expect[0] == "finding":
        return None if expect[1] in found else f"{label}: expected {expect[1]}, got {sorted(found)}"
    if expect[1] in found:
        return f"{label}: a form input_forms accepts, but {expect[1]} was reported"
    if expect[2] is not None and _view_value(view, label) != expect[2]:
        return f"{label}: expected it read as {expect[2]!r}, read as {_view_value(view, label)!r}"
    return None


def test_the_cases_cover_every_kind_of_outcome():
    kinds = {expect[0] for _, _, expect in CASES}
    assert kinds == {"accepted", "finding", "error"}, kinds
    assert len(CASES) > 500, len(CASES)


def test_every_field_reads_as_input_forms_says():
    validator = spec.Validator(EXPORTED)
    wrong = [w for label, desc, expect in CASES
             if (w := disagreement(label, expect, outcome(validator, desc))) is not None]
    assert not wrong, f"{len(wrong)} of {len(CASES)} cases disagree with input_forms:\n" + "\n".join(wrong[:20])


@pytest.mark.parametrize("planted", ["python int() for an opset", "str.strip() for names"])
def test_a_reader_that_takes_more_than_input_forms_says_is_caught(monkeypatch, planted):
    # a local, undone patch of the reading functions: what a port that used the host language's
    # own number and trimming rules would do (with a cache of its own, dropped after)
    monkeypatch.setattr(forms, "_LEVELS_READ", {})
    if planted == "python int() for an opset":
        def lax_opset(value):
            try:
                value = int(str(value).strip())
            except ValueError:
                return None
            return value if value >= 1 else None
        monkeypatch.setattr(forms, "opset", lax_opset)
        import topkspec.spec.checks as checks
        monkeypatch.setattr(checks, "opset", lax_opset)
    else:
        monkeypatch.setattr(forms, "TRIM", None)  # str.strip(None): every Unicode space
    validator = spec.Validator(EXPORTED)
    wrong = [w for label, desc, expect in CASES
             if (w := disagreement(label, expect, outcome(validator, desc))) is not None]
    assert wrong, f"the planted reader ({planted}) passed every case"


def test_integer_means_no_fraction_and_no_exponent():
    words = EXPORTED["input_forms"]["terms"]["integer"]
    assert "2.0" in words and "2e0" in words, words
    for text, is_integer in (("2", True), ("-1", True), ("2.0", False), ("2e0", False), ("true", False)):
        desc = json.loads('{"op_type": "TopK", "opset": %s, "X": {"dtype": "float", "shape": [3]}, "k": 1}' % text)
        found = [f.rule for f in spec.validate(desc)]
        assert (found != ["onnx.desc.fields"]) == (is_integer and text != "-1"), f"opset {text}: {found}"


def test_with_a_profile_a_missing_opset_is_filled_and_a_malformed_one_still_reported():
    desc = {"op_type": "TopK", "X": {"dtype": "float32", "shape": [3, 4]}, "k": 2}
    assert spec.validate(desc, "onnx:11") == []
    assert [f.rule for f in spec.validate(desc)] == ["onnx.desc.fields"]
    desc["opset"] = "11"
    found = spec.validate(desc, "onnx:11")
    assert [f.rule for f in found] == ["onnx.desc.fields"] and "'11'" in found[0].message, found
