"""ONNX cases inside small graphs (Case.context, spec.graphs): every context builds a model ONNX's
checker accepts and that hands the TopK the drawn X and K, so ONNX Runtime and ONNX's evaluator
give the one-node result; campaigns of the targets that build ONNX models draw each context and
the coverage lines show each share, a case shrinks to the one-node model; a planted runtime that
mishandles a K computed from the input's shape is found within 1000 examples and its report's
repro.py rebuilds the graph (exit 1 with the bug, 0 without)."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from slow import slow

from topkspec import reference_topk, spec
from topkspec.spec import Case, graphs

pytest.importorskip("onnx")
HERE = os.path.dirname(os.path.abspath(__file__))
BUG = "PLANTED_BACKEND_BUG"

# (value type, shape, axis, K): K below and at the axis size, a negative axis, rank 1 and 3
SHAPES = [("float32", (3, 5, 4), 1, 2), ("float32", (6,), -1, 6), ("int8", (2, 7), -2, 1),
          ("float16", (4, 3), -1, 3)]


def _cases():
    for profile in ("onnx:1", "onnx:10", "onnx:11", "onnx:24"):
        opset = int(profile.split(":")[1])
        for context in graphs.contexts_at(opset):
            for dtype, shape, axis, k in SHAPES:
                if dtype in spec.value_types(profile, "TopK"):
                    yield Case(profile, "TopK", dtype, shape, axis, k, index_dtype="int64").with_context(context)


def _input(case):
    values = np.random.default_rng(len(case.shape)).permutation(int(np.prod(case.shape))) % 50 - 20
    return values.reshape(case.shape).astype(case.dtype)


def test_contexts_are_drawn_only_where_their_opset_has_the_ops():
    assert graphs.contexts_at(1) == ("x_transpose",), graphs.contexts_at(1)
    assert "k_shape_min" not in graphs.contexts_at(11), "Min takes int64 from opset 12 only"
    assert set(graphs.contexts_at(24)) == set(graphs.CONTEXTS), graphs.contexts_at(24)
    assert all(graphs.CONTEXTS[c][0] >= 10 for c in graphs.CONTEXTS if graphs.computes_k(c)), \
        "K is an input from opset 10 only"


@pytest.mark.parametrize("target_name", ["onnx-reference", "onnxruntime"])
def test_every_context_gives_the_one_node_result_and_passes_the_checker(target_name):
    import onnx

    from topkspec.targets.onnx_builder import build_case_model, onnx_form
    from topkspec.targets.registry import get_target

    target = get_target(target_name)
    if not target.available()[0]:
        pytest.skip(target.available()[1])
    ran = 0
    for case in _cases():
        x = _input(case)
        if case.profile == "onnx:1" and case.dtype == "float16" and target_name == "onnxruntime":
            continue  # ONNX Runtime's own opset-1 float16 failure, in its known list
        model, feeds = build_case_model(onnx_form(case), case, x)
        onnx.checker.check_model(model, full_check=True)
        values, indices = target.run(case, x)
        want_values, want_indices = reference_topk(x, axis=case.axis, k=case.k, largest=True)
        assert np.array_equal(values, want_values) and np.array_equal(indices, want_indices), \
            f"{target_name}, {case.describe()}: expected {want_values.tolist()} at {want_indices.tolist()}, " \
            f"got {np.asarray(values).tolist()} at {np.asarray(indices).tolist()}"
        if graphs.computes_k(case.context):
            assert "K" not in feeds, f"{case.context}: K is computed in the graph, yet fed: {list(feeds)}"
        ran += 1
    assert ran >= 3 * len(graphs.CONTEXTS), f"only {ran} cases ran"


def test_a_case_keeps_its_context_through_json_and_names_it():
    case = Case("onnx:24", "TopK", "float32", (3,), 0, 1, index_dtype="int64").with_context("k_shape")
    again = Case.from_dict(case.to_dict())
    assert again == case and again.context == "k_shape", (case.to_dict(), again)
    assert "in graph k_shape" in case.call_text() and "in graph k_shape" in case.describe(), case.describe()
    assert case.with_context(None).context is None and case.with_context(None).extra == (), case.with_context(None)


def test_onnx_campaigns_draw_every_context_and_the_coverage_lines_show_each_share():
    from topkspec.fuzz.bench import coverage
    from topkspec.strategies.coverage import format_tally

    lines = {line["coverage"]: line for line in coverage("onnx:24", max_examples=1000, groups={"valid"})}
    shares = lines["valid"]["graphs"]
    assert set(shares) == {graphs.describe(c) for c in (None, *graphs.CONTEXTS)}, shares
    assert all(share > 0 for share in shares.values()), f"a context never drawn: {shares}"
    assert shares[graphs.NO_CONTEXT] == max(shares.values()), f"the one-node model is not the commonest: {shares}"
    table = format_tally("valid", lines["valid"])
    assert f"graph: {graphs.describe('k_shape')}" in table, table
    dml = next(coverage("dml:5.0", max_examples=50, groups={"valid"}))
    assert "graphs" not in dml, f"a DirectML case drew a graph: {dml['graphs']}"


def test_a_drawn_case_shrinks_to_the_one_node_model_and_only_model_building_targets_draw_graphs():
    from hypothesis import find, settings
    from hypothesis.errors import NoSuchExample

    from topkspec.fuzz.groups import plan_groups
    from topkspec.strategies import case_and_input
    from topkspec.targets.registry import get_target

    minimal, _ = find(case_and_input("onnx:24", graph_contexts=True), lambda drawn: True,
                      settings=settings(database=None))
    assert minimal.context is None, minimal
    in_graph, _ = find(case_and_input("onnx:24", graph_contexts=True), lambda drawn: drawn[0].context == "k_tensor",
                       settings=settings(database=None, max_examples=2000))
    assert in_graph.context == "k_tensor" and in_graph.shape == (1,), in_graph
    assert get_target("onnxruntime").graph_contexts and get_target("onnx-reference").graph_contexts
    assert not get_target("reference").graph_contexts, "a target that builds no model draws no graph"
    planned = plan_groups(get_target("reference"), "onnx:24")
    with pytest.raises(NoSuchExample):
        find(planned["valid"][0], lambda drawn: drawn[0].context is not None,
             settings=settings(database=None, max_examples=200))


@pytest.fixture
def planted(tmp_path, monkeypatch):
    path = tmp_path / "planted_backend.py"
    shutil.copy(os.path.join(HERE, "planted_backend.py"), path)
    monkeypatch.delenv(BUG, raising=False)
    return str(path)


def _repro(folder, env=None):
    environment = {k: v for k, v in os.environ.items() if k not in (BUG, "PYTHONPATH")}
    return subprocess.run([sys.executable, os.path.join(folder, "repro.py")], capture_output=True, text=True,
                          timeout=120, env={**environment, **(env or {})})


@slow
def test_a_k_computed_from_the_shape_mishandled_is_found_within_1000_examples_and_its_repro_rebuilds_the_graph(
        planted, tmp_path, monkeypatch):
    from topkspec.fuzz import RunConfig, run_fuzz
    from topkspec.fuzz.summary import graph_lines

    monkeypatch.setenv(BUG, "k-from-shape")
    result = run_fuzz(RunConfig(target=f"onnx-backend:{planted}", max_examples=1000, seed=0, settings="ci",
                                report_dir=str(tmp_path / "reports")))
    found = [f for f in result.failures if graphs.computes_k(f.case.context)]
    assert found and len(found) == len(result.failures), \
        f"expected the K-from-shape bug alone: {[(f.rule, f.case.describe()) for f in result.failures]}"
    assert found[0].case.context.startswith("k_shape"), found[0].case.describe()
    assert any(line.strip().startswith(graphs.describe("k_shape")) for line in graph_lines(result)), \
        graph_lines(result)
    folder = found[0].report_dir
    source = open(os.path.join(folder, "repro.py")).read()
    assert not re.search(r"^\s*(import|from) topkspec", source, re.MULTILINE), "repro.py imports topkspec"
    assert f"def {found[0].case.context}(" in source, f"repro.py builds no {found[0].case.context} graph"
    assert graphs.describe(found[0].case.context) in open(os.path.join(folder, "report.md")).readline()
    done = _repro(folder, {BUG: "k-from-shape"})
    assert done.returncode == 1, f"with the bug: expected exit 1, got {done.returncode}\n{done.stdout}{done.stderr}"
    done = _repro(folder)
    assert done.returncode == 0, f"bug gone: expected exit 0, got {done.returncode}\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("target_name", ["onnxruntime", "onnx-reference", "tract"])
@pytest.mark.parametrize("context", ["k_shape_static", "x_cast", "outputs_consumed"])
def test_a_report_of_a_case_in_a_graph_replays_it_in_the_runtimes_own_api(target_name, context, tmp_path):
    """A report written for a case in a graph (a recorded wrong answer the runtime does not
    give): its repro.py builds the same graph, gets the right answer and exits 0."""
    from topkspec.fuzz import Failure, RunResult
    from topkspec.properties import failures
    from topkspec.properties.failures import Violation
    from topkspec.report import write_report
    from topkspec.targets.registry import get_target

    if not get_target(target_name).available()[0]:
        pytest.skip(get_target(target_name).available()[1])
    case = Case("onnx:24", "TopK", "int8", (2, 3), -1, 2, index_dtype="int64").with_context(context)
    x = np.array([[3, 1, 2], [0, 5, 4]], dtype=np.int8)
    violation = Violation("out.exact", "out.exact: recorded", failure_class=failures.WRONG_RESULT,
                          expected="[3, 2]", actual="[3, 1]")
    failure = Failure(target=target_name, group="valid", violation=violation, case=case, x=x,
                      calls=[(case, x)], outputs=[None])
    result = RunResult(target=target_name, version="test", profile="onnx:24", settings="ci", seed=0, max_examples=1)
    folder = write_report(failure, result, str(tmp_path / "report"), target_spec=target_name)
    source = open(os.path.join(folder, "repro.py")).read()
    assert f"    {context}(x, k, axis, inputs, initializers, feeds, nodes, outputs)" in source, source
    done = _repro(folder)
    assert done.returncode == 0, f"{target_name} {context}: expected exit 0, got {done.returncode}\n" \
                                 f"{done.stdout}{done.stderr}"


def test_a_long_campaign_keeps_few_graph_sessions_and_every_one_node_session():
    from topkspec.targets.onnx_builder import GRAPH_MODELS_KEPT
    from topkspec.targets.registry import get_target

    target = get_target("onnxruntime")
    one_node = Case("onnx:24", "TopK", "float32", (3,), 0, 1, index_dtype="int64")
    target.run(one_node, np.arange(3, dtype=np.float32))
    for n in range(2, GRAPH_MODELS_KEPT + 12):  # one model per sizes: more than are kept
        case = one_node.with_(shape=(n,)).with_context("k_shape_static")
        values, _ = target.run(case, np.arange(n, dtype=np.float32))
        assert values.tolist() == [n - 1], f"n={n}: expected [{n - 1}], got {values.tolist()}"
    kept = [key for key in target._sessions if isinstance(key[-1], tuple)]
    assert len(kept) == GRAPH_MODELS_KEPT, f"expected {GRAPH_MODELS_KEPT} graph sessions kept, found {len(kept)}"
    assert len(target._sessions) == GRAPH_MODELS_KEPT + 1, "the one-node session was dropped"


def test_a_known_entry_can_name_the_graph_it_is_known_in(tmp_path):
    from topkspec.known import KnownError, load_known

    path = tmp_path / "known.toml"
    path.write_text('[[known]]\nrule = "out.valid_accepted"\ncontext = "k_shape_static"\n'
                    'reason = "fails to load K from a static shape"\nurl = "https://example.org/1"\n')
    known = load_known(str(path), "onnxruntime")
    args = ("out.valid_accepted", "rejects a valid descriptor", "float32", "onnx:24", "onnxruntime 1.26.0")
    assert known.match(*args, 3, "k_shape_static") is not None, "the entry's own graph"
    assert known.match(*args, 3, "k_shape") is None and known.match(*args, 3, None) is None, \
        "another graph, or the one-node model, is not this deviation"
    assert "in graph k_shape_static" in known.entries[0].describe(), known.entries[0].describe()
    path.write_text('[[known]]\nrule = "out.valid_accepted"\ncontext = "k_from_nowhere"\n')
    with pytest.raises(KnownError, match="k_from_nowhere"):
        load_known(str(path), "onnxruntime")


def test_onnx_runtime_1_26_fails_to_load_k_from_a_static_shape_as_its_known_list_says():
    """The regression of microsoft/onnxruntime#29072, where `topkspec env setup onnxruntime@1.26`
    made its environment: K = Shape -> Gather of a fixed-size input fails to load, K from the
    same graph with symbolic sizes loads, and the shipped known list declares the first alone."""
    from topkspec.known import load_known
    from topkspec.targets.base import Rejected
    from topkspec.targets.foreign import environments_dir
    from topkspec.targets.registry import get_target

    if not (environments_dir() / "onnxruntime@1.26").is_dir():
        pytest.skip("no onnxruntime@1.26 environment (topkspec env setup onnxruntime@1.26)")
    target = get_target("onnxruntime@1.26")
    try:
        x = np.arange(4, dtype=np.float32)
        case = Case("onnx:24", "TopK", "float32", (4,), -1, 4, index_dtype="int64")
        with pytest.raises(Rejected, match="K input must be a one-dimensional tensor of size 1"):
            target.run(case.with_context("k_shape_static"), x)
        values, _ = target.run(case.with_context("k_shape"), x)
        assert values.tolist() == [3, 2, 1, 0], values.tolist()
        known = load_known(None, "onnxruntime")
        args = ("out.valid_accepted", "rejects a valid descriptor", "float32", "onnx:24", target.version(), 4)
        assert known.match(*args, "k_shape_static").url.endswith("/issues/29072")
        assert known.match(*args, "k_shape") is None
    finally:
        target.close()
