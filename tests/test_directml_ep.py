"""onnxruntime-directml off Windows: ONNX Runtime's Windows build with the DirectML EP under
Wine, through topk_ort_worker.exe, and the three layers side by side (DirectML.dll, the EP, the
CPU provider of the same onnxruntime.dll).

These tests need `topkspec directml setup`. Without it they are skipped with the exact reason;
where CI requires the target (TOPKSPEC_REQUIRE_TARGETS) they fail instead."""
import collections
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from topkspec.spec import Case
from topkspec.targets.base import Rejected
from topkspec.directml_tools.analyses import layers
from topkspec.targets.runtimes.directml_ep import WineOrtTarget
from topkspec.targets.isolation import TargetCrashed, TargetHung
from topkspec.targets.registry import get_target

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from directml_needed import need  # noqa: E402
from target_checks import assert_exact, recorded_report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def ep():
    target = need(WineOrtTarget("dml"))
    yield target
    target.close()


@pytest.fixture(scope="module")
def cpu():
    target = need(WineOrtTarget("cpu"))
    yield target
    target.close()


def onnx(shape, k, dtype="float32", *, axis=-1, largest=True):
    return Case("onnx:11", "TopK", dtype, tuple(shape), axis, k, largest=largest, index_dtype="int64")


def test_the_registered_target_is_the_ep_under_wine_off_windows():
    target = get_target("onnxruntime-directml")
    try:
        assert isinstance(target, WineOrtTarget) == (os.name != "nt")
    finally:
        target.close()


def test_version_names_onnxruntime_the_ep_and_the_directml_it_loaded(ep):
    info = ep.info
    version = ep.version()
    assert info["provider"] == "DmlExecutionProvider" and "DmlExecutionProvider" in info["providers"], info
    assert f"onnxruntime {info['onnxruntime']} (DmlExecutionProvider" in version, version
    assert f"DirectML {ep.stack.dll_version}" in version, version
    # the DirectML.dll the EP loaded is the one beside onnxruntime.dll, not the directml target's
    assert info["directml_dll"].lower().replace("\\", "/").endswith("/directml.dll"), info
    assert os.path.dirname(info["directml_dll"]) == os.path.dirname(info["onnxruntime_dll"]), info
    if ep.stack.under_wine:
        assert "vkd3d" in version and "Mesa" in version, version


@pytest.mark.parametrize("dtype,x", [
    ("int64", np.array([2**62 + 3, -(2**62), 2**62 + 1, 7, 2**62 + 2], np.int64)),
    ("uint64", np.array([2**63 + 5, 3, 2**63 + 9, 2**63 + 5], np.uint64)),
    ("uint8", np.array([200, 3, 255, 0, 200], np.uint8)),
    ("float16", np.array([-0.0, 0.0, 1.5, -np.inf, 1.5], np.float16)),
])
@pytest.mark.parametrize("largest", [True, False])
def test_exact_on_the_ep(ep, dtype, x, largest):
    assert_exact(ep, onnx(x.shape, 3, dtype, largest=largest), x)


def test_exact_on_two_dimensions_and_a_long_axis(ep):
    rng = np.random.default_rng(1)
    assert_exact(ep, onnx((6, 33), 5, axis=0), rng.standard_normal((6, 33)).astype(np.float32))
    assert_exact(ep, onnx((3, 5000), 100), rng.permutation(15000).reshape(3, 5000).astype(np.float32))


def test_one_session_per_signature_with_k_as_an_input(ep):
    before = ep.sessions_built
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for k in (1, 2, 3, 4):
        assert_exact(ep, onnx((3, 4), k, axis=1), x)
    assert_exact(ep, onnx((7, 4), 2, axis=1), np.arange(28, dtype=np.float32).reshape(7, 4))
    assert ep.sessions_built - before <= 1, "one TopK-11 float32 session serves every K and shape"


def test_what_the_ep_cannot_place_is_unsupported_in_onnxruntimes_words(ep):
    why = ep.supports(onnx((4,), 2, "float64"))
    assert why and "fallback to CPU EP has been explicitly disabled" in why and "lower.dtype" in why, why
    with pytest.raises(Rejected, match=r"\[ONNXRuntimeError\] : 1 : FAIL : This session contains graph nodes"):
        ep.run(onnx((4,), 2, "float64"), np.arange(4.0))


def test_k_above_the_axis_size_is_refused(ep):
    with pytest.raises(Rejected, match="80070057"):
        ep.run(onnx((4,), 5), np.arange(4, dtype=np.float32))


def test_a_crash_and_a_hang_end_the_worker_and_the_next_call_starts_afresh(ep):
    from topkspec.directml.worker import protocol

    x = np.array([3, 1, 2], np.float32)
    assert_exact(ep, onnx((3,), 1), x)
    worker = ep._worker_started()
    starts = worker.starts
    with pytest.raises(TargetCrashed, match="onnxruntime-directml: the worker"):
        worker.call(protocol.CMD_CRASH, doing="crashing on purpose")
    assert_exact(ep, onnx((3,), 1), x)  # the cached session loads its model again in the new worker
    with pytest.raises(TargetHung, match="did not answer within 2s"):
        worker.call(protocol.CMD_HANG, timeout=2.0, doing="hanging on purpose")
    assert_exact(ep, onnx((3,), 1), x)
    assert worker.starts == starts + 2


def test_both_directml_findings_reach_the_ep_and_not_the_cpu_provider(ep, cpu):
    """findings/directml-nan-*: the EP returns what DirectML.dll returns; this fails once fixed."""
    x = np.array([1, np.nan, 0.5], np.float32)
    assert ep.run(onnx((3,), 1), x)[0].tolist() == [0.5]
    assert cpu.run(onnx((3,), 1), x)[0].tolist() == [1.0]
    zeros = np.zeros(257, np.float32)
    zeros[1] = np.nan
    twice = lambda target: sorted(i for i, n in collections.Counter(
        target.run(onnx((257,), 256), zeros)[1].tolist()).items() if n > 1)
    assert twice(ep) == [80, 81, 144, 145, 208, 209]
    assert twice(cpu) == []


def test_a_report_is_what_a_windows_user_files_with_the_linux_replay_beside_it(ep, tmp_path):
    case = Case("dml:5.0", "TOP_K1", "float32", (3,), 0, 1, index_dtype="int64")
    folder = recorded_report(tmp_path, "onnxruntime-directml", case, np.array([1, np.nan, 0.5], np.float32),
                             rule="out.nan.unspecified")
    source = open(os.path.join(folder, "repro.py")).read()
    assert not re.search(r"^\s*(import|from) topkspec", source, re.MULTILINE), "repro.py stands alone"
    assert 'providers=["DmlExecutionProvider"]' in source
    assert '"session.disable_cpu_ep_fallback", "1"' in source
    report = open(os.path.join(folder, "report.md")).read()
    assert "`topkspec directml layers DIR`" in report and "onnxruntime (Windows build)" in report, report
    # the replay command the report names runs this very folder through the three layers
    done = subprocess.run([sys.executable, "-m", "topkspec", "directml", "layers", folder], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith(f"| {os.path.basename(folder)}"))
    assert row.count("**breaks** `out.nan.unspecified`, `out.values.select` (values [0.5] indices [2])") == 2 \
        and "| holds |" in row, row


# -- the three layers ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def differential(ep, cpu):
    from topkspec.targets.runtimes.directml import DirectMLTarget

    dml = need(DirectMLTarget())
    try:
        yield layers.run_layers(layers.fixed_cases(), {"directml": dml, "onnxruntime-directml": ep,
                                                       "onnxruntime-windows-cpu": cpu})
    finally:
        dml.close()


def test_which_layer_answers_the_directml_pages_limits(differential):
    rows = {row["name"]: row for row in differential}
    k0 = rows["K = 0 (the page: K > 0)"]
    assert k0["directml"]["outcome"] == "refused" and k0["onnxruntime-directml"]["outcome"] == "accepts"
    full = rows["K = axis size (the page: K < size)"]
    assert {full[layer]["outcome"] for layer, _ in layers.LAYERS} == {"holds"}
    f64 = rows["FLOAT64 (no DML type)"]
    assert f64["onnxruntime-directml"]["outcome"] == "refused" and f64["onnxruntime-windows-cpu"]["outcome"] == "accepts"
    assert "fallback to CPU EP has been explicitly disabled" in f64["onnxruntime-directml"]["detail"]
    nan = rows["NaN: [1, NaN, 0.5], K = 1"]
    assert [nan[layer]["outcome"] for layer, _ in layers.LAYERS] == ["breaks", "breaks", "holds"]
    assert layers.differ(nan) and not layers.differ(rows["ordinary: float32[2, 4], K = 2"])
    assert set(layers.per_rule(differential)) >= {"dml.k.positive", "out.nan.unspecified", "out.indices.range_distinct"}


def test_the_docs_table_is_the_layers_output(differential, ep):
    if not ep.version().startswith("onnxruntime 1.24.4 (DmlExecutionProvider, Windows build), DirectML 1.15.4"):
        pytest.skip(f"the table in docs/directml.md is ONNX Runtime 1.24.4's with DirectML 1.15.4; this is {ep.version()}")
    page = open(os.path.join(ROOT, "docs", "directml.md")).read()
    table = re.search(r"<!-- directml-layers -->\n(.*?)<!-- /directml-layers -->", page, re.S).group(1)
    assert layers.markdown(differential) in table, \
        "docs/directml.md is stale: run `topkspec directml layers --readme docs/directml.md`"


def test_an_empty_cache_says_exactly_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("TOPKSPEC_DIRECTML_CACHE", str(tmp_path))
    monkeypatch.delenv("TOPKSPEC_ORT_DLL", raising=False)
    target = WineOrtTarget()
    ok, why = target.available()
    assert not ok and why.startswith("topkspec directml setup (Wine, lavapipe"), why
    assert "onnxruntime.dll with the DirectML execution provider is not installed" in why, why
    assert "topk_ort_worker.exe is not built for this source" in why, why
    assert target.version() == "onnxruntime (Windows build; not set up)"
    target.close()


def test_layers_of_a_folder_that_is_no_report_is_bad_usage():
    done = subprocess.run([sys.executable, "-m", "topkspec", "directml", "layers", "/nonexistent-report"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 2 and "is not a bug report's folder (case.json, inputs.npz)" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
