"""A validator in another language, written from the JSON export alone (tests/port/
topk_validator.mjs: JavaScript, run by node), agrees with topkspec's own on the descriptors
topkspec's strategies draw, on the same with unknown (null) values, and on every case derived
from `input_forms`: the same errors, rules broken in the same order with the same status, the
same rules not checked."""
import json
import os
import pathlib
import random
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from topkspec import spec
from topkspec.strategies import invalid_descriptors, valid_cases
from input_form_cases import cases

PORT = pathlib.Path(__file__).parent / "port" / "topk_validator.mjs"
NODE = shutil.which("node")
# CI's machines have node; elsewhere a missing node skips (and on CI it fails, in port_says)
pytestmark = pytest.mark.skipif(NODE is None and not os.environ.get("CI"), reason="node is not installed")


def drawn(n: int) -> list:
    """n descriptors drawn by topkspec's strategies, valid and invalid, at every standard profile."""
    out = []

    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck),
              derandomize=True)
    @given(st.data())
    def collect(data):
        profile = data.draw(st.sampled_from(spec.STANDARD_PROFILES))
        if data.draw(st.booleans()):
            out.append(spec.descriptor(data.draw(valid_cases(profile))))
        else:
            out.append(data.draw(invalid_descriptors(profile)).descriptor)

    collect()
    return out


def with_unknowns(descs: list, seed=0) -> list:
    """ONNX descriptors with some of their dimensions, their rank or k made null (unknown)."""
    rng, out = random.Random(seed), []
    for desc in descs:
        x = desc.get("X")
        if "op_type" not in desc or not isinstance(x, dict) or not isinstance(x.get("shape"), list):
            continue
        copy = json.loads(json.dumps(desc))
        what = rng.choice(["dim", "rank", "k", "dim and k"])
        if "dim" in what and copy["X"]["shape"]:
            copy["X"]["shape"][rng.randrange(len(copy["X"]["shape"]))] = None
        if what == "rank":
            copy["X"]["shape"] = None
        if "k" in what:
            copy["k"] = None
        out.append(copy)
    return out


def python_says(validator, desc) -> dict:
    try:
        verdict = validator.judge(desc)
    except (spec.DescriptorError, spec.ProfileError):
        return {"error": True}
    return {"findings": [[f.rule, f.status] for f in verdict.findings],
            "not_checked": [n["rule"] for n in verdict.not_checked]}


def port_says(tmp_path, descs: list) -> list:
    assert NODE is not None, "node is not installed, and the port runs on it"
    (tmp_path / "spec.json").write_text(json.dumps(spec.export()))
    done = subprocess.run([NODE, str(PORT), str(tmp_path / "spec.json")], capture_output=True, text=True,
                          input="".join(json.dumps(d) + "\n" for d in descs), timeout=120)
    assert done.returncode == 0, done.stderr
    return [{"error": True} if "error" in r else r for r in map(json.loads, done.stdout.splitlines())]


def test_the_port_agrees_with_topkspec_validate(tmp_path):
    exported = json.loads(json.dumps(spec.export()))
    strategy_drawn = drawn(300)
    descs = strategy_drawn + with_unknowns(strategy_drawn) + [d for _, d, _ in cases(exported)]
    validator = spec.Validator(exported)
    ours = [python_says(validator, d) for d in descs]
    theirs = port_says(tmp_path, descs)
    assert len(theirs) == len(descs)
    wrong = [f"{json.dumps(d)}\n  topkspec: {a}\n  port: {b}" for d, a, b in zip(descs, ours, theirs) if a != b]
    assert not wrong, f"{len(wrong)} of {len(descs)} disagree:\n" + "\n".join(wrong[:10])
    # the comparison covers what it claims: findings, unknowns, errors and statuses other than the rule's own
    assert sum(bool(o.get("findings")) for o in ours) > 200
    assert sum(bool(o.get("not_checked")) for o in ours) > 50
    assert sum("error" in o for o in ours) > 20
    assert any(f[1] == "documented" and spec.RULES[f[0]].status == "interpretation"
               for o in ours for f in o.get("findings", ()))


def test_a_port_that_reads_json_numbers_as_javascript_does_is_caught(tmp_path):
    """JSON.parse reads 11.0 as 11: the same comparison finds the difference."""
    planted = tmp_path / "planted.mjs"
    planted.write_text(PORT.read_text().replace("if (m[2] || m[3]) return new JFloat(m[0]);", ""))
    descs = [{"op_type": "TopK", "opset": 11.0, "X": {"dtype": "float32", "shape": [3, 4]}, "k": 2},
             {"op_type": "TopK", "opset": 11, "X": {"dtype": "float32", "shape": [3, 4]}, "k": 2.0}]
    (tmp_path / "spec.json").write_text(json.dumps(spec.export()))
    done = subprocess.run([NODE, str(planted), str(tmp_path / "spec.json")], capture_output=True, text=True,
                          input="".join(json.dumps(d) + "\n" for d in descs), timeout=60)
    validator = spec.Validator(spec.export())
    theirs = [json.loads(line) for line in done.stdout.splitlines()]
    ours = [python_says(validator, d) for d in descs]
    assert [o["findings"] for o in ours] == [[["onnx.desc.fields", "documented"]]] * 2, ours
    assert all(t["findings"] == [] for t in theirs), theirs
