"""`topkspec corpus`: ONNX node tests that onnx's checker, ReferenceEvaluator and ONNX Runtime
agree with, DirectML cases that DirectML itself replays as stored, byte-for-byte determinism,
and counterexamples from reports as regression cases."""
import filecmp
import json
import os
import sys

import numpy as np
import pytest

from topkspec import spec
from topkspec.cli import main
from topkspec.corpus import write_corpus
from topkspec.corpus.valid import unique_result
from topkspec.spec import Case

HERE = os.path.dirname(__file__)
PLANTED = os.path.join(HERE, "planted_bugs.py")
sys.path.insert(0, HERE)
from directml_needed import need  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    counts = write_corpus(str(folder))
    return folder, counts


def _tensors(folder, prefix):
    import onnx
    from onnx import numpy_helper

    data = os.path.join(folder, "test_data_set_0")
    return [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, name)))
            for name in sorted(os.listdir(data)) if name.startswith(prefix)]


def test_the_corpus_is_the_same_byte_for_byte_and_small(corpus, tmp_path):
    folder, counts = corpus
    again = tmp_path / "again"
    write_corpus(str(again))
    compared = filecmp.dircmp(str(folder), str(again))
    stack = [compared]
    while stack:
        node = stack.pop()
        assert not (node.diff_files or node.left_only or node.right_only), (node.left, node.diff_files, node.left_only)
        _, mismatch, errors = filecmp.cmpfiles(node.left, node.right, node.common_files, shallow=False)
        assert not mismatch and not errors, (node.left, mismatch, errors)
        stack += node.subdirs.values()
    size = sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(folder) for name in names)
    assert size < 6 * 2**20, f"the corpus is {size / 2**20:.1f} MiB"
    assert counts["onnx"] >= 100 and counts["dml_valid"] + counts["dml_invalid"] >= 100, counts


def test_every_opset_and_value_type_its_t_allows_has_onnx_cases(corpus):
    folder, _ = corpus
    seen = set()
    for name in os.listdir(folder / "onnx"):
        with open(folder / "onnx" / name / "data.json") as handle:
            case = json.load(handle)["case"]
        seen.add((case["profile"], case["dtype"]))
    for profile in ("onnx:1", "onnx:10", "onnx:11", "onnx:24"):
        for dtype in spec.value_types(profile, "TopK"):
            assert (profile, dtype) in seen, f"no case for {dtype} at {profile}"


def test_onnx_cases_pass_the_checker_and_the_reference_evaluator_and_onnxruntime_give_the_stored_outputs(corpus):
    import onnx
    import onnxruntime as ort
    from onnx.backend.test.loader import load_model_tests
    from onnx.reference import ReferenceEvaluator

    folder, counts = corpus
    tests = load_model_tests(data_dir=str(folder), kind="onnx")
    assert len(tests) == counts["onnx"]
    options = ort.SessionOptions()
    options.log_severity_level = 3  # opset 1 models draw warnings
    ran_on_ort = 0
    for test in tests:
        model = onnx.load(os.path.join(test.model_dir, "model.onnx"))
        onnx.checker.check_model(model, full_check=True)
        feeds = dict(zip([i.name for i in model.graph.input], _tensors(test.model_dir, "input")))
        stored = _tensors(test.model_dir, "output")
        for runtime, outputs in (("ReferenceEvaluator", ReferenceEvaluator(model).run(None, feeds)),
                                 ("onnxruntime", _ort_run(ort, options, model, feeds))):
            if outputs is None:
                continue  # ONNX Runtime has no kernel for the type: it does not load the model
            ran_on_ort += runtime == "onnxruntime"
            for got, want, what in zip(outputs, stored, ("Values", "Indices")):
                assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), \
                    f"{test.name} {what}: {runtime} gives {got.tolist()}, stored {want.tolist()}"
    assert ran_on_ort > counts["onnx"] // 2, f"ONNX Runtime loaded only {ran_on_ort} of {counts['onnx']}"


def _ort_run(ort, options, model, feeds):
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception:
        return None
    return session.run(None, feeds)


def test_dml_cases_are_valid_with_their_outputs_or_break_the_rules_they_name(corpus):
    folder, _ = corpus
    from topkspec.corpus.dml_files import read_tensor
    from topkspec.spec.reference import reference_topk
    from topkspec.targets.base import selects_largest

    rules = set()
    for name in sorted(os.listdir(folder / "dml")):
        with open(folder / "dml" / name) as handle:
            entry = json.load(handle)
        desc, expected = entry["descriptor"], entry["expected"]
        found = sorted({f.rule for f in spec.validate(desc)})
        if expected["outcome"] == "refused":
            assert found == expected["rules"], f"{name}: breaks {found}, stored {expected['rules']}"
            rules.update(found)
            continue
        assert not found, f"{name}: a valid case breaks {found}"
        case = spec.case_from_descriptor(desc)
        x = read_tensor(entry["input"], case.dtype)
        assert unique_result(case, x) is None, name
        values, indices = reference_topk(x, axis=case.axis, k=case.k, largest=selects_largest(case))
        assert values.tobytes() == read_tensor(expected["OutputValueTensor"], case.dtype).tobytes(), name
        assert indices.astype(case.index_dtype).tobytes() == \
            read_tensor(expected["OutputIndexTensor"], case.index_dtype).tobytes(), name
    from topkspec.targets.runtimes.directml import DESCRIPTOR_RULES
    judged = {"dml.axis.range", "dml.k.positive", "dml.k.max", "dml.dtype.value_supported",
              "dml.dtype.index_supported", "dml.rank.supported"} | DESCRIPTOR_RULES - {"dml.shape.outputs_same_sizes"}
    assert judged <= rules, f"no broken descriptor for {sorted(judged - rules)}"


def test_unique_result_leaves_out_what_the_documents_leave_open():
    tie = np.array([3, 1, 3, 2, 3], dtype=np.float32)
    assert unique_result(Case("onnx:11", "TopK", "float32", (5,), 0, 2, index_dtype="int64"), tie) is None
    assert "K-th place" in unique_result(Case("dml:3.1", "TOP_K1", "float32", (5,), 0, 2), tie)
    zeros = np.array([-0.0, 0.0, 1.0], dtype=np.float32)
    assert "-0.0 and +0.0" in unique_result(Case("onnx:11", "TopK", "float32", (3,), 0, 2, index_dtype="int64"), zeros)
    nan = np.array([np.nan, 1.0], dtype=np.float32)
    assert "NaN" in unique_result(Case("onnx:11", "TopK", "float32", (2,), 0, 1, index_dtype="int64"), nan)
    unsorted = Case("onnx:11", "TopK", "float32", (2,), 0, 1, sorted=False, index_dtype="int64")
    assert "sorted=0" in unique_result(unsorted, np.array([1.0, 2.0], dtype=np.float32))
    assert "axis size" in unique_result(Case("dml:3.1", "TOP_K1", "float32", (2,), 0, 2), np.array([1, 2], np.float32))


def test_spec_narrows_the_corpus_and_reports_become_regression_cases(tmp_path, capsys):
    from topkspec.fuzz import RunConfig, run_fuzz

    reports = tmp_path / "reports"
    result = run_fuzz(RunConfig(target=f"{PLANTED}:ignores_direction", max_examples=100, seed=0,
                                settings="ci", groups=("valid",), report_dir=str(reports)))
    assert result.failures, "the planted bug must give a report"
    out = tmp_path / "corpus"
    assert main(["corpus", str(out), "--spec", "dml:3.1", "--from-reports", str(reports)]) == 0
    printed = capsys.readouterr().out
    assert f"from {reports}: " in printed and " cases taken" in printed, printed
    assert not (out / "onnx").exists(), "--spec dml:3.1 writes no ONNX cases"
    names = os.listdir(out / "dml")
    regression = [n for n in names if n.startswith("report_")]
    assert regression, names[:5]
    assert all(json.load(open(out / "dml" / n))["FeatureLevel"] == "DML_FEATURE_LEVEL_3_1"
               for n in names if not n.startswith("report_"))


@pytest.mark.parametrize("args, message", [
    (["--from-reports", "/no/such/folder"], "not a folder"),
    (["--spec", "cuda:1"], "cuda:1"),
])
def test_bad_corpus_options_are_bad_usage(tmp_path, capsys, args, message):
    assert main(["corpus", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def _directml():
    from topkspec.targets.runtimes.directml import DirectMLTarget

    return need(DirectMLTarget())


def test_directml_replays_the_dml_cases_as_stored(corpus):
    from topkspec.corpus.replay import AS_STORED, replay

    target = _directml()
    try:
        result = replay(target, str(corpus[0] / "dml"))
    finally:
        target.close()
    assert not result.mismatches, result.lines()
    assert result.verdicts[AS_STORED] >= 100, result.lines()


def test_the_native_worker_reads_the_same_files_and_tells_a_wrong_expectation(corpus, tmp_path):
    import base64
    import shutil

    from topkspec.directml.client.worker_process import run_replay

    target = _directml()
    try:
        code, output = run_replay(target.stack, str(corpus[0] / "dml"))
        assert code == 0 and "0 not as stored" in output, output[-2000:]
        stored = int(output.strip().splitlines()[-1].split()[0])
        assert stored >= 100, output[-500:]
        # Planted: one valid case expects other values, one broken descriptor is valid after all.
        planted = tmp_path / "planted"
        planted.mkdir()
        names = sorted(os.listdir(corpus[0] / "dml"))
        valid = next(n for n in names if n.startswith("3_1_top_k1_float32_uint32_distinct"))
        broken = next(n for n in names if "invalid_dml_k_max" in n and n.startswith("3_1"))
        for name in (valid, broken):
            shutil.copy(corpus[0] / "dml" / name, planted / name)
        entry = json.loads((planted / valid).read_text())
        data = bytearray(base64.b64decode(entry["expected"]["OutputValueTensor"]["base64"]))
        data[0] ^= 1
        entry["expected"]["OutputValueTensor"]["base64"] = base64.b64encode(bytes(data)).decode()
        (planted / valid).write_text(json.dumps(entry))
        entry = json.loads((planted / broken).read_text())
        entry["descriptor"]["Desc"]["K"] = 2
        for tensor in ("OutputValueTensor", "OutputIndexTensor"):
            entry["descriptor"]["Desc"][tensor]["Sizes"][-1] = 2
        (planted / broken).write_text(json.dumps(entry))
        code, output = run_replay(target.stack, str(planted))
    finally:
        target.close()
    assert code == 1, output
    assert f"NOT AS STORED {valid}: values differ" in output, output
    assert f"NOT AS STORED {broken}: accepted" in output, output


def test_from_reports_says_how_many_cases_it_took_and_why_it_skipped_each_other_report(tmp_path, capsys):
    from topkspec.fuzz import Failure, RunResult
    from topkspec.properties import failures
    from topkspec.properties.failures import Violation
    from topkspec.report import write_report

    reports = tmp_path / "reports"
    result = RunResult(target="onnxruntime", version="test", profile="onnx:24", settings="ci", seed=0, max_examples=1)
    # A value type refused before any call (the quick start's reports 01-04): no input is kept.
    refused = Case("onnx:24", "TopK", "uint16", (1,), 0, 1, index_dtype="int64")
    violation = Violation("out.valid_accepted", "refused", failure_class=failures.REJECTS_VALID,
                          where={"value type": "uint16"}, expected="a result", actual="NOT_IMPLEMENTED")
    write_report(Failure("onnxruntime", "valid", violation, refused, None, [], []), result, str(reports))
    # k = 0 accepted (report 05): an invalid ONNX case, which the backend-test layout cannot hold.
    k_zero = Case("onnx:24", "TopK", "float32", (1,), 0, 0, index_dtype="int64")
    x = np.zeros(1, np.float32)
    violation = Violation(("out.invalid_rejected", "onnx.k.positive"), "accepted", failure_class=failures.ACCEPTS_INVALID)
    write_report(Failure("onnxruntime", "invalid", violation, k_zero, x, [(k_zero, x)], [None]), result,
                 str(reports))
    (reports / "notes").mkdir()
    assert main(["corpus", str(tmp_path / "corpus"), "--spec", "onnx:24", "--from-reports", str(reports)]) == 0
    printed = capsys.readouterr().out
    assert f"from {reports}: 1 cases taken; 2 report folders skipped:" in printed, printed
    assert "02-onnx-k-positive-accepts-an-invalid-one: an invalid ONNX case (it breaks onnx.k.positive)" in printed
    assert "notes: not a report folder" in printed, printed
    assert [n for n in os.listdir(tmp_path / "corpus" / "onnx") if "report_01" in n], "the refused uint16 case is taken"


def test_onnx_cases_inside_graphs_cover_every_context_and_onnxruntime_gives_every_stored_output(corpus):
    """A share of the ONNX cases put the TopK inside each graph context its opset builds
    (spec.graphs): ONNX Runtime loads each and gives every output stored, the graph's own too."""
    import onnx
    import onnxruntime as ort

    from topkspec.spec.graphs import contexts_at

    folder, counts = corpus
    seen, in_graphs = {}, 0
    for name in sorted(os.listdir(folder / "onnx")):
        with open(folder / "onnx" / name / "data.json") as handle:
            case = json.load(handle)["case"]
        if "context" not in case:
            continue
        seen.setdefault(case["profile"], set()).add(case["context"])
        in_graphs += 1
        model = onnx.load(str(folder / "onnx" / name / "model.onnx"))
        feeds = dict(zip([i.name for i in model.graph.input], _tensors(folder / "onnx" / name, "input")))
        stored = _tensors(folder / "onnx" / name, "output")
        assert len(stored) == len(model.graph.output), \
            f"{name}: {len(stored)} outputs stored, the graph has {len(model.graph.output)}"
        got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        for n, (g, want) in enumerate(zip(got, stored)):
            assert g.dtype == want.dtype and g.tobytes() == want.tobytes(), \
                f"{name} output {n}: onnxruntime gives {g.tolist()}, stored {want.tolist()}"
    for profile in ("onnx:1", "onnx:10", "onnx:11", "onnx:24"):
        wanted = set(contexts_at(int(profile.split(":")[1])))
        assert seen.get(profile) == wanted, \
            f"{profile}: graph cases in {sorted(seen.get(profile, ()))}, expected {sorted(wanted)}"
    total = sum(1 for _ in (folder / "onnx").iterdir())
    assert 0.05 < in_graphs / total < 0.25, f"{in_graphs} graph cases of {total}"
