"""Rule and Profile are plain classes (so the first spec.validate does not import dataclasses),
and behave as frozen dataclasses do: keyword construction with the same defaults,
immutability (dataclasses.FrozenInstanceError), equality, hash, repr, pickling, match."""
import copy
import dataclasses
import json
import pickle
import subprocess
import sys

import pytest

from topkspec.spec.profiles import Profile, level_value, parse_profile
from topkspec.spec.rules import RULE_LIST, RULES, Rule


def test_rule_defaults_and_repr_are_those_of_a_frozen_dataclass():
    rule = Rule(id="x.y", statement="s", sources=(), status="documented", scope="output")
    assert (rule.ops, rule.check, rule.requires, rule.reason, rule.strict_only, rule.lenient_only,
            rule.breakable_alone, rule.co_broken, rule.documented_from) == ((), None, (), "", False, False, True, (), ())
    assert repr(rule) == ("Rule(id='x.y', statement='s', sources=(), status='documented', scope='output', ops=(), "
                          "check=None, requires=(), reason='', strict_only=False, lenient_only=False, "
                          "breakable_alone=True, co_broken=(), documented_from=())")
    assert Rule.__match_args__[:5] == ("id", "statement", "sources", "status", "scope")


def test_rules_are_immutable_and_compare_hash_and_pickle_by_their_fields():
    rule = RULES["out.shape"]
    for change in (lambda: setattr(rule, "id", "other"), lambda: setattr(rule, "new", 1),
                   lambda: delattr(rule, "statement")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            change()
    for r in RULE_LIST:
        for twin in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
            assert twin == r and twin is not r and twin.to_dict() == r.to_dict()
    plain = Rule("x", "s", ("a source",), "documented", "output", ops=("TOP_K",))
    assert hash(plain) == hash(copy.deepcopy(plain))
    with pytest.raises(TypeError):  # its citations (and check) are dicts: unhashable, as the dataclass was
        hash(rule)
    assert RULE_LIST[0] != RULE_LIST[1] and RULE_LIST[0].__eq__(object()) is NotImplemented


def test_profiles_are_immutable_and_compare_hash_and_pickle_by_their_fields():
    prof = parse_profile("dml:3.1")
    assert repr(prof) == "Profile(family='dml', name='dml:3.1', level=12544, opset=None, requested_opset=None)"
    assert str(prof) == "dml:3.1" and prof.level_name == "3_1"
    with pytest.raises(dataclasses.FrozenInstanceError):
        prof.level = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        del prof.name
    for p in (prof, parse_profile("onnx:13"), Profile("onnx", "onnx:1", opset="1", requested_opset=1)):
        for twin in (copy.copy(p), copy.deepcopy(p), *(pickle.loads(pickle.dumps(p, n)) for n in range(6))):
            assert twin == p and hash(twin) == hash(p) and repr(twin) == repr(p)
    assert Profile("dml", "dml:3.1", level=0x3100) == prof != Profile("dml", "dml:3.1", level=0x3000)
    match prof:
        case Profile(family, name, level):
            assert (family, name, level) == ("dml", "dml:3.1", 0x3100)


@pytest.mark.parametrize("text, value", [
    ("3_1", 0x3100), ("3.1", 0x3100), ("0x3100", 0x3100), ("DML_FEATURE_LEVEL_5_0", 0x5000),
    ("dml_feature_level_2.1", 0x2100), (" 4_1 ", 0x4100), (0x6400, 0x6400)])
def test_feature_levels_read_as_before(text, value):
    assert level_value(text) == value


@pytest.mark.parametrize("text", ["0x", "0X3100", "3_", "_1", "3_10", "31", "DML_FEATURE_LEVEL_", "3 _1", True,
                                  "16_0", "0x3g00", "DML_FEATURE_LEVEL_DML_FEATURE_LEVEL_3_1",
                                  "\u0663_\u0661", "3\u00a0_1", "\u00a03_1"])
def test_feature_levels_refused_as_before(text):
    with pytest.raises(ValueError):
        level_value(text)


def test_the_first_validate_loads_neither_dataclasses_nor_pathlib():
    from topkspec.spec.speed import DML_GOLDEN, ONNX_GOLDEN

    code = (f"import sys, json; before = set(sys.modules); import topkspec.spec as spec; "
            f"spec.validate({DML_GOLDEN!r}); spec.validate({ONNX_GOLDEN!r}); "
            f"print(json.dumps(sorted(set(sys.modules) - before)))")
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                           check=True).stdout))
    assert "topkspec.spec.rules" in loaded and "topkspec.spec.observations" in loaded
    assert not loaded & {"dataclasses", "inspect", "pathlib", "re"}, sorted(loaded)
