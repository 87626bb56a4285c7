"""Resolving targets: built-in names, file paths, module paths, entry points; callables
that raise are rejections."""
import os
import sys

import numpy as np
import pytest

from topkspec.spec import Case
from topkspec.targets import (BUILTIN_TARGETS, CallableTarget, Rejected, Target, TargetError,
                              get_target, list_targets)

PLUGINS = os.path.join(os.path.dirname(__file__), "plugins")
FILE_PLUGIN = os.path.join(PLUGINS, "file_plugin.py")
CASE = Case("dml:5.0", "TOP_K1", "float32", (2, 5), 1, 2, largest=True, index_dtype="uint32")
X = np.array([[1, 5, 3, 5, 0], [2, 2, 9, -1, 4]], dtype=np.float32)
EXPECTED_VALUES = np.array([[5, 5], [9, 4]], dtype=np.float32)
EXPECTED_INDICES = np.array([[1, 3], [2, 4]], dtype=np.uint32)


def assert_runs(target):
    values, indices = target.run(CASE, X)
    assert np.array_equal(values, EXPECTED_VALUES), f"values: expected {EXPECTED_VALUES}, got {values}"
    assert np.array_equal(indices, EXPECTED_INDICES), f"indices: expected {EXPECTED_INDICES}, got {indices}"
    assert indices.dtype == np.uint32, f"indices dtype: expected uint32, got {indices.dtype}"


@pytest.mark.parametrize("name", list(BUILTIN_TARGETS))
def test_builtin_names_resolve_to_targets_with_that_name(name):
    target = get_target(name)
    assert isinstance(target, Target)
    assert target.name == name
    ok, reason = target.available()
    assert ok or reason, f"{name}: unavailable targets must say what they need"


def test_list_targets_has_every_builtin():
    names = [t.name for t in list_targets()]
    assert names[:len(BUILTIN_TARGETS)] == list(BUILTIN_TARGETS)


@pytest.mark.parametrize("attr, kind", [
    ("topk", CallableTarget), ("PluginTarget", Target), ("instance", Target),
    ("make_target", CallableTarget),
])
def test_file_path_plugin_resolves_each_form(attr, kind):
    target = get_target(f"{FILE_PLUGIN}:{attr}")
    assert isinstance(target, kind), f"{attr}: got {type(target).__name__}"
    assert_runs(target)


def test_relative_file_path_resolves(monkeypatch):
    monkeypatch.chdir(os.path.dirname(PLUGINS))
    assert_runs(get_target("plugins/file_plugin.py:topk"))


def test_module_path_plugin_resolves(monkeypatch):
    monkeypatch.syspath_prepend(PLUGINS)
    target = get_target("module_plugin:topk")
    assert isinstance(target, CallableTarget)
    assert_runs(target)


def test_entry_point_plugin_resolves(tmp_path, monkeypatch):
    # A minimal installed distribution: a dist-info directory declaring the entry point.
    dist = tmp_path / "topk_demo_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: topk-demo-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[topkspec.targets]\ndemo-numpy = module_plugin:topk\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(PLUGINS)
    target = get_target("demo-numpy")
    assert isinstance(target, CallableTarget)
    assert target.name == "demo-numpy"
    assert_runs(target)
    assert "demo-numpy" in [t.name for t in list_targets()]


def test_callable_that_raises_is_a_rejection_not_a_crash():
    target = get_target(f"{FILE_PLUGIN}:refuses_everything")
    with pytest.raises(Rejected, match="RuntimeError: this implementation refuses every input") as info:
        target.run(CASE, X)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_callable_rejects_k_out_of_range():
    target = get_target(f"{FILE_PLUGIN}:topk")
    assert target.validates
    with pytest.raises(Rejected, match="k 6 out of range"):
        target.run(CASE.with_(k=6), X)


@pytest.mark.parametrize("spec, message", [
    ("no-such-target", "unknown target 'no-such-target': known targets are reference, onnx-reference"),
    ("no_such_module_xyz:topk", "cannot import no_such_module_xyz"),
    ("numpy:no_such_attr", "numpy has no attribute 'no_such_attr'"),
    ("missing/file.py:topk", "no file"),
    (f"{FILE_PLUGIN}:not_a_target", "neither a Target nor a callable"),
    ("", "non-empty string"),
])
def test_bad_names_raise_target_error_with_one_line(spec, message):
    with pytest.raises(TargetError, match=message) as info:
        get_target(spec)
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)


def test_plugin_file_that_fails_to_import_is_a_target_error(tmp_path):
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("import no_such_module_for_topkspec\n")
    with pytest.raises(TargetError, match="importing .*broken_plugin.py failed: ModuleNotFoundError"):
        get_target(f"{broken}:topk")
    assert "topkspec_plugin_broken_plugin" not in sys.modules


# -- a refusal or a broken adapter -------------------------------------------------------------

BROKEN = os.path.join(PLUGINS, "broken_adapters.py")


@pytest.mark.parametrize("attr, message", [
    ("attribute_error", "AttributeError: 'numpy.ndarray' object has no attribute 'no_such_attribute'"),
    ("wrong_signature", "TypeError: wrong_signature() got an unexpected keyword argument 'largest'"),
    # A signature that does not fit is located at the user's definition, not in topkspec.
    ("wrong_signature", f"wrong_signature(x, axis, k) ({BROKEN}:24, in wrong_signature)"),
])
def test_a_plain_function_with_a_bug_of_its_own_is_an_adapter_error(attr, message):
    from topkspec.targets import AdapterError

    target = get_target(f"{BROKEN}:{attr}")
    with pytest.raises(AdapterError) as info:
        target.run(CASE, X)
    assert message in str(info.value), f"{attr}: expected {message!r} in {str(info.value)!r}"
    assert not isinstance(info.value, Rejected), f"{attr}: an adapter error must not count as a refusal"


def test_values_only_from_a_function_whose_contract_returns_indices_is_an_adapter_error():
    """A function returning an array of values is judged by the contract the run holds it to
    (its own or --contract FILE): DirectML's returns indices, so the run says to declare it."""
    from topkspec.fuzz import RunConfig, run_fuzz

    result = run_fuzz(RunConfig(target=f"{BROKEN}:returns_values_only", max_examples=5, seed=0, isolate=False,
                                groups=("valid",)))
    assert [f.failure_class for f in result.failures] == ["adapter error"], result.failures
    message = result.failures[0].violation.message
    assert "returned values only" in message and "declare indices not_returned" in message, message


def test_a_name_error_is_a_bug_only_where_it_happens():
    from topkspec.targets import AdapterError

    target = get_target(f"{BROKEN}:name_error_above_k_2")
    assert_runs(target)  # K = 2 runs
    with pytest.raises(AdapterError, match="NameError: name 'undefined_helper' is not defined"):
        target.run(CASE.with_(k=3), X)


def test_the_same_errors_raised_by_a_library_it_calls_are_a_refusal():
    target = get_target(f"{BROKEN}:refuses_through_a_library")
    assert_runs(target)
    with pytest.raises(Rejected, match="TypeError: k=6 is not a valid count"):
        target.run(CASE.with_(k=6), X)


def test_a_file_target_is_named_by_the_path_the_user_gave_never_by_its_internal_module_name():
    with pytest.raises(TargetError) as info:
        get_target(f"{FILE_PLUGIN}:topkk")
    assert f"{FILE_PLUGIN} has no attribute 'topkk'" in str(info.value) and "topkspec_plugin" not in str(info.value)
    assert get_target(f"{FILE_PLUGIN}:topk").version() == f"callable {FILE_PLUGIN}:topk"
    assert get_target(f"{BROKEN}:attribute_error").version() == f"callable {BROKEN}:attribute_error"
