"""The directml target against DirectML.dll itself, through the worker.

These tests need the target set up (`topkspec directml setup`). Without it they are skipped
with the exact reason; where directml is required (TOPKSPEC_REQUIRE_TARGETS names it, as CI does)
they fail instead, so a CI run cannot pass without ever reaching DirectML."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from slow import slow

from topkspec import spec
from topkspec.properties import failures
from topkspec.targets.isolation import TargetCrashed, TargetHung
from topkspec.spec.reference import reference_topk
from topkspec.fuzz import RunConfig, run_fuzz
from topkspec.spec import Case, tables
from topkspec.targets.runtimes import directml as directml_hooks
from topkspec.targets.base import Rejected
from topkspec.directml_tools.analyses import compare
from topkspec.directml.worker import protocol
from topkspec.targets.runtimes import directml_repro as repro_writer
from topkspec.spec.observations import load as load_observations
from topkspec.targets.runtimes.directml import DirectMLTarget
from topkspec.targets.listing import describe_target

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from directml_needed import need  # noqa: E402


@pytest.fixture(scope="module")
def dml():
    target = need(DirectMLTarget())
    yield target
    target.close()


def level(dml):
    return f"dml:{dml.feature_level >> 12}.{(dml.feature_level >> 8) & 0xF}"


def reference(case, x):
    values, indices = reference_topk(x, axis=case.norm_axis, k=case.k,
                                     largest=case.largest if case.op == "TOP_K1" else True)
    return values, indices.astype(case.index_dtype)


# -- the device ---------------------------------------------------------------------------------

def test_the_device_and_the_stack_are_named(dml):
    info = dml.device
    assert dml.feature_level >= 0x5000, f"feature level {dml.feature_level:#x}"
    assert set(info["types"]) == {str(t) for t in range(1, 12)}, info["types"]
    version = dml.version()
    assert f"DirectML {dml.stack.dll_version}" in version and info["adapter"] in version, version
    stack = directml_hooks.report_stack(dml)
    assert stack["directml"] and stack["adapter"] and stack["feature_level"], stack
    if dml.stack.under_wine:
        assert "vkd3d" in version and "Mesa" in version and stack["wine"] and stack["mesa"], version
        details = repro_writer.stack(dml, Case(level(dml), "TOP_K1", "float32", (4,), 0, 2)).details
        assert any("translation layers" in line for line in details), details
    row = describe_target(dml)
    assert row["available"] and row["default_profile"] == level(dml)
    assert "float32" in row["support"]["dml:5.0"]["supported"], row["support"]


# -- CreateOperator on the fixed descriptor set -------------------------------------------------------

@pytest.fixture(scope="module")
def comparison(dml):
    dml.close()  # compare() makes its own target
    result = compare.compare()
    return result


def test_createoperator_agrees_with_the_documents_but_where_recorded(comparison):
    (name, run), = comparison["directml"].items()
    classes = {}
    for row in comparison["rows"]:
        verdict = row["verdicts"][name]
        classes.setdefault(verdict["class"], []).append(row["name"])
        if verdict["class"] == "agree":
            assert verdict["accepted"] == (not row["rules_at_device"]), row["name"]
    assert "documents forbid, DirectML accepts" not in classes, classes.get("documents forbid, DirectML accepts")
    k_equal_n = [r["name"] for r in comparison["rows"] if r["strict_rules"] == ["dml.k.max_strict"] and not r["rules"]]
    assert sorted(classes["the text forbids, DirectML accepts"]) == sorted(k_equal_n), \
        "K equal to the axis size is accepted (S_OK), as measured before"
    # DirectML refuses every GuaranteedBaseOffsetAlignment below 16, which the text allows from the
    # element size up (a power of two "at least as large as the element size").
    assert sorted(classes.get("documents allow, DirectML refuses", [])) == [
        "Flags = 1 on an output", "GuaranteedBaseOffsetAlignment = 4", "GuaranteedBaseOffsetAlignment = 8"], classes
    assert len(classes["agree"]) > 100
    refused = {rule for row in comparison["rows"] if not row["verdicts"][name]["accepted"]
               for rule in row["rules_at_device"]}
    assert {"dml.k.positive", "dml.k.max", "dml.axis.range", "dml.direction.enum", "dml.rank.supported",
            "dml.dtype.value_supported", "dml.dtype.index_supported", "dml.dtype.same", "dml.rank.same",
            "dml.shape.output_values", "dml.shape.output_indices", "dml.tensor.sizes_positive",
            "dml.tensor.total_size", "dml.tensor.alignment", "dml.tensor.fields"} <= refused


def test_the_recorded_observations_are_what_directml_does_now(comparison):
    (name, run), = comparison["directml"].items()
    recorded = load_observations()["rules"]
    now = compare.observations(comparison)["rules"]
    for rule, notes in recorded.items():
        for note in notes:
            if note["implementation"] != f"DirectML {name}":
                continue
            match = [n for n in now.get(rule, []) if n["observed"] == note["observed"]]
            assert match and match[0]["descriptors"] == note["descriptors"], \
                f"{rule}: observations.json is stale; rerun `topkspec directml compare --observations`"


def test_the_docs_table_is_the_comparison_output(comparison):
    (name, run), = comparison["directml"].items()
    if name != "1.15.4":
        pytest.skip(f"the table in docs/directml.md is DirectML 1.15.4's; this is {name}")
    page = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "directml.md")).read()
    block = compare.README_BLOCK.search(page).group(3)
    rows = [line for line in compare.markdown(comparison).splitlines() if line.startswith("| ")]
    assert rows == [line for line in block.splitlines() if line.startswith("| ")], \
        "docs/directml.md is stale: run `topkspec directml compare --readme docs/directml.md`"


# -- results -------------------------------------------------------------------------------------

# TOP_K always selects the largest: it has the DECREASING examples only.
@pytest.mark.parametrize("example, op", [(e, op) for e in tables.DML_WORKED_EXAMPLES for op in ("TOP_K1", "TOP_K")
                                         if op == "TOP_K1" or e["direction"] == "DECREASING"],
                         ids=lambda v: v["name"] if isinstance(v, dict) else v)
def test_the_worked_examples_are_exact(dml, example, op):
    case = Case(level(dml), op, "float32", tuple(example["sizes"]), example["axis"], example["k"],
                largest=example["direction"] == "DECREASING")
    values, indices = dml.run(case, np.array(example["input"], np.float32))
    assert values.tolist() == example["values"] and indices.tolist() == example["indices"], \
        f"{example['name']}: got {values.tolist()} / {indices.tolist()}"
    assert values.dtype == np.float32 and indices.dtype == np.uint32


SHAPES = [((7,), 0, 3), ((3, 5), 1, 5), ((4, 6), 0, 2), ((2, 3, 17), 2, 4), ((1, 1, 8, 300), 3, 100),
          ((2, 1, 3, 2, 9), 4, 9)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32",
                                   "uint16", "uint8"])
def test_random_cases_match_the_reference_bit_for_bit(dml, dtype):
    rng = np.random.default_rng(sum(map(ord, dtype)))
    for i, (shape, axis, k) in enumerate(SHAPES):
        for largest in (True, False):
            for index in ("uint32", "uint64"):
                case = Case(level(dml), "TOP_K1", dtype, shape, axis, k, largest=largest, index_dtype=index)
                if dml.supports(case):
                    pytest.skip(dml.supports(case))
                if np.dtype(dtype).kind == "f":
                    x = rng.choice(np.array([-0.0, 0.0, 1.5, -2.25, 1e-3, 7.0], dtype), size=shape)
                else:
                    info = np.iinfo(dtype)
                    pool = np.array([info.min, info.max, 0, 1, info.max - 1, 3], dtype)
                    x = rng.choice(pool, size=shape) if i % 2 else rng.integers(info.min, info.max, shape, dtype,
                                                                                endpoint=True)
                values, indices = dml.run(case, x)
                expected_values, expected_indices = reference(case, x)
                assert np.array_equal(values.view(f"u{values.itemsize}"),
                                      expected_values.view(f"u{values.itemsize}")), (case.describe(), x, values)
                assert np.array_equal(indices, expected_indices), (case.describe(), x, indices)
                assert indices.dtype == np.dtype(index)


def test_onnx_cases_are_lowered_to_top_k1(dml):
    x = np.array([[5, 1, 9, 3], [2, 2, 8, 0]], np.float32)
    case = Case("onnx:11", "TopK", "float32", (2, 4), -1, 3, largest=False, sorted=False, index_dtype="int64")
    values, indices = dml.run(case, x)
    assert values.tolist() == [[1, 3, 5], [0, 2, 2]] and indices.tolist() == [[1, 3, 0], [3, 0, 1]]
    assert indices.dtype == np.int64, "lower.indices: UINT32 widened to int64"
    assert "lower.dtype" in dml.supports(case.with_(dtype="float64"))
    with pytest.raises(Rejected):
        dml.run(case.with_(axis=-3), x)  # no UINT holds the axis: refused before DirectML


def test_refusals_name_the_hresult_and_gaps_are_unsupported(dml):
    case = Case(level(dml), "TOP_K1", "float32", (1, 1, 3, 4), 3, 2)
    with pytest.raises(Rejected, match=r"CreateOperator returned E_INVALIDARG \(0x80070057\)"):
        dml.run(case.with_(k=0), np.zeros((1, 1, 3, 4), np.float32))
    with pytest.raises(Rejected, match="E_INVALIDARG"):
        dml.run(case.with_(index_dtype="int32"), np.zeros((1, 1, 3, 4), np.float32))
    assert dml.supports(case.with_(dtype="bfloat16")) == "DirectML has no bfloat16 tensor type (values)"
    gap = dml.supports(case.with_(profile="dml:2.1", shape=(3, 4), axis=1))
    assert gap and "cannot speak to dml:2.1" in gap, gap
    verdict = dml.check_descriptor(spec.descriptor(case))
    assert verdict["accepted"] and verdict["detail"] == "S_OK (0x00000000)", verdict
    assert dml.check_descriptor({"Type": "TOP_K1", "Desc": {}}) is None


def test_validate_against_directml(dml, tmp_path):
    k_equal_n = spec.descriptor(Case("dml:3.1", "TOP_K1", "float32", (1, 1, 3, 4), 3, 4))
    too_big = spec.descriptor(Case("dml:3.1", "TOP_K1", "float32", (1, 1, 3, 4), 3, 5))
    missing_k = json.loads(json.dumps(k_equal_n))
    del missing_k["Desc"]["K"]
    onnx_node = {"op_type": "TopK", "opset": 11, "X": {"dtype": "float32", "shape": [3, 4]}, "k": 2,
                 "attributes": {"axis": -1, "largest": 0}}
    path = tmp_path / "descriptors.json"
    path.write_text(json.dumps([k_equal_n, too_big, missing_k, onnx_node]))
    out = subprocess.run([sys.executable, "-m", "topkspec", "validate", str(path), "--against", "directml",
                          "--strict-doc"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stderr
    items = json.loads(out.stdout)["items"]
    against = [item["against"] for item in items]
    assert [a["target"] for a in against] == ["directml"] * 4
    assert [a["accepted"] for a in against] == [True, False, False, True], against
    assert against[1]["detail"] == "E_INVALIDARG (0x80070057)"
    assert against[2]["detail"].startswith("not expressible") and "member K is missing" in against[2]["detail"]
    assert against[3]["detail"].startswith("lowered to DML_TOP_K1: S_OK")
    assert [item["valid"] for item in items] == [False, False, False, True], "--strict-doc forbids K = n"


# -- the fuzzer ------------------------------------------------------------------------------------

@slow
def test_a_bounded_fuzz_run_checks_examples_in_every_group(dml, tmp_path):
    dml.close()
    result = run_fuzz(RunConfig(target="directml", max_examples=200, seed=0, settings="ci",
                                report_dir=str(tmp_path)))
    assert not result.errors, result.errors
    assert set(result.examples) == {"valid", "nan", "metamorphic", "invalid", "deterministic", "self", "layout"}, \
        result.examples
    assert result.checks["same_layout"] > 0 and result.checks["no_write_outside"] > 0, result.checks
    assert result.total_examples >= 150, result.examples
    assert result.checks["exact"] > 30 and result.checks["rejects_invalid"] > 15, result.checks
    # Known (docs/runtimes.md, "What the runtimes here do"): with NaN in a sequence, DirectML (under Wine,
    # lavapipe) may return a smaller non-NaN value than the largest one, or an index twice.
    # Any other failure is new.
    # Both are filed under the documented rule no placement of NaN keeps.
    known = {"out.values.select", "out.order", "out.indices.range_distinct"}
    bad = [f for f in result.failures if f.failure_class != failures.WRONG_RESULT or f.rule not in known
           or not np.isnan(np.asarray(f.x, np.float64)).any()]
    assert not bad, [f"{f.failure_class}: {f.violation.message}" for f in bad]
    for found in result.failures:
        assert np.isnan(found.x).any(), found.violation.message
        # The report names the stack and its repro replays the case through the worker.
        report = open(os.path.join(found.report_dir, "report.md")).read()
        assert f"DirectML {dml.stack.dll_version}" in report and "CreateOperator" in report, report[:400]
        if dml.stack.under_wine:
            assert "translation layers" in report and "vkd3d" in report
        out = subprocess.run([sys.executable, "repro.py"], cwd=found.report_dir, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 1, out.stdout + out.stderr


class PlantedCrash(DirectMLTarget):
    """DirectML, with the worker made to crash or hang whenever K is above 1 (most drawn cases)."""

    def __init__(self, how):
        super().__init__()
        self.how = how

    def run(self, case, x):
        if case.k > 1:
            if self.how == "crash":
                self.crash()
            self._worker_started().call(protocol.CMD_HANG, doing="hanging on purpose")
        return super().run(case, x)


@pytest.mark.parametrize("how", ["crash", "hang"])
@slow
def test_a_dying_or_silent_worker_is_reported_and_the_run_carries_on(how):
    target = need(PlantedCrash(how))
    try:
        result = run_fuzz(RunConfig(target=target, max_examples=40, seed=1, settings="ci",
                                    groups=("valid", "deterministic"), timeout=2.0))
    finally:
        target.close()
    kind = failures.CRASH if how == "crash" else failures.HANG
    found = [f for f in result.failures if f.failure_class == kind]
    assert found, [f.violation.message for f in result.failures]
    assert found[0].case.k > 1, f"the reported case: expected K above 1, got {found[0].case.describe()}"
    assert result.examples["deterministic"] > 1, "the run went on after the crash"
    assert target.restarts >= 1


def test_crash_and_hang_by_hand_then_a_fresh_worker(dml):
    case = Case(level(dml), "TOP_K1", "float32", (4,), 0, 2)
    x = np.array([3, 1, 4, 1], np.float32)
    before = dml.restarts
    with pytest.raises(TargetCrashed, match="unhandled exception 0xc0000005"):
        dml.crash()
    assert dml.run(case, x)[0].tolist() == [4.0, 3.0]
    with pytest.raises(TargetHung, match="did not answer within 2s"):
        dml.hang(timeout=2.0)
    assert dml.run(case, x)[1].tolist() == [2, 0]
    assert dml.restarts == before + 2


# -- reports --------------------------------------------------------------------------------------

def repro_of(tmp_path, dml, case, x, *, name, rule="out.exact", failure_class=failures.WRONG_RESULT, outputs=None):
    """The report package's repro.py for a recorded finding of the directml target, run."""
    from topkspec.fuzz import Failure, RunResult
    from topkspec.properties.failures import Violation
    from topkspec.report import write_report

    violation = Violation(rule, f"{rule}: recorded", failure_class=failure_class, expected="e", actual="a")
    failure = Failure(target=dml.name, group="valid", violation=violation, case=case, x=x, calls=[(case, x)],
                      outputs=[outputs])
    result = RunResult(target=dml.name, version=dml.version(), profile=case.profile, settings="ci",
                       seed=0, max_examples=1)
    folder = write_report(failure, result, str(tmp_path / name), target_spec=dml)
    return subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300)


def test_the_repro_replays_through_the_worker_and_passes_where_directml_is_right(dml, tmp_path):
    case = Case(level(dml), "TOP_K1", "float32", (1, 1, 3, 4), 3, 2)
    x = np.array(tables.DML_WORKED_EXAMPLES[0]["input"], np.float32)
    out = repro_of(tmp_path, dml, case, x, name="holds")
    assert out.returncode == 0, f"DirectML is exact here: expected exit 0, got {out.returncode}\n{out.stdout}{out.stderr}"
    out = repro_of(tmp_path, dml, case.with_(k=5), x, name="k", rule="dml.k.max",
                   failure_class=failures.ACCEPTS_INVALID, outputs=(x[..., :2], np.zeros((1, 1, 3, 2), np.uint32)))
    assert out.returncode == 0, f"DirectML refuses K above the axis: expected exit 0, got {out.returncode}\n{out.stdout}{out.stderr}"


def test_setup_again_finds_everything_in_place(dml):
    out = subprocess.run([sys.executable, "-m", "topkspec", "directml", "setup", "--dll", str(dml.stack.dll)],
                         capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "already" in out.stdout and "the four worked examples are exact" in out.stdout, out.stdout
