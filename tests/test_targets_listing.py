"""`topkspec targets`: every known target with availability, version, profile and matrix."""
import json
import os

import pytest

from topkspec.targets import BUILTIN_TARGETS, get_target
from topkspec.targets.listing import describe_targets, format_targets, support_matrix, tiny_case
from slow import slow

FILE_PLUGIN = os.path.join(os.path.dirname(__file__), "plugins", "file_plugin.py")


@pytest.fixture(scope="module")
def rows():
    return describe_targets()


def test_every_builtin_is_listed_with_its_fields(rows):
    by_name = {row["name"]: row for row in rows}
    assert list(by_name)[:len(BUILTIN_TARGETS)] == list(BUILTIN_TARGETS)
    for row in rows:
        assert set(row) >= {"name", "available", "reason", "version", "default_profile", "validates", "support"}
        if row["available"]:
            assert row["reason"] == "" and row["support"], f"{row['name']}: available needs a matrix"
        else:
            assert row["reason"] and row["support"] == {}, f"{row['name']}: unavailable needs a reason"
    json.dumps(rows)  # `topkspec targets --json` prints them


def test_reference_supports_every_type_the_spec_allows(rows):
    from topkspec import spec

    matrix = next(r for r in rows if r["name"] == "reference")["support"]
    assert matrix["dml:5.0"]["supported"] == spec.value_types("dml:5.0", "TOP_K1")
    assert matrix["onnx:24"]["supported"] == spec.value_types("onnx:24", "TopK")
    assert all(not cell["unsupported"] for cell in matrix.values())


def test_matrix_splits_types_by_supports():
    class NoUnsigned(type(get_target(f"{FILE_PLUGIN}:instance"))):
        def supports(self, case):
            return "no unsigned types" if case.dtype.startswith("u") else None

    matrix = support_matrix(NoUnsigned(), profiles=["dml:3.1", "onnx:10"])
    assert matrix["dml:3.1"]["supported"] == ["float32", "float16", "int32", "int16", "int8"]
    assert matrix["dml:3.1"]["unsupported"] == {t: "no unsigned types" for t in ("uint32", "uint16", "uint8")}
    assert matrix["onnx:10"] == {"supported": ["float64", "float32", "float16"], "unsupported": {}}


def test_tiny_cases_are_valid_at_their_profile():
    from topkspec import spec

    for profile in ("dml:2.1", "dml:5.0", "onnx:1", "onnx:24"):
        case = tiny_case(profile, "float32")
        assert spec.validate(case) == [], f"{profile}: {spec.validate(case)}"


def test_format_shows_reasons_and_matrix(rows):
    text = format_targets(rows)
    for row in rows:
        assert row["name"] in text
        if not row["available"]:
            assert f"needs: {row['reason']}" in text
    assert "onnx:24" in text and "validates: yes" in text


def test_each_missing_type_is_one_line_with_the_profiles_it_is_missing_at():
    rows = [{"name": "t", "available": True, "reason": "", "version": "1", "default_profile": "onnx:11",
             "validates": False, "validates_tables": (), "index_dtype": None,
             "support": {"dml:3.1": {"supported": ["float32"], "unsupported": {"uint16": "no kernel\nsecond line"}},
                         "onnx:11": {"supported": ["float32"], "unsupported": {"uint16": "no kernel at 11",
                                                                                 "int8": "x" * 500}}}}]
    lines = format_targets(rows).splitlines()
    uint16 = [line for line in lines if "no uint16" in line]
    assert uint16 == ["    no uint16 (dml:3.1, onnx:11): no kernel"], f"uint16 lines: {uint16}"
    int8 = [line for line in lines if "no int8" in line]
    assert len(int8) == 1 and len(int8[0]) < 200 and int8[0].endswith("…"), f"a long reason is cut: {int8}"


# -- runtimes that are not installed --------------------------------------------------------

ABSENT = {  # the module a shim replaces, and what is missing with it
    "only the base install": ("torch", "jax", "jaxlib", "openvino", "redis"),
    "no runtime at all": ("torch", "jax", "jaxlib", "openvino", "redis", "onnxruntime", "onnx"),
}


def _without(tmp_path, modules, error="ModuleNotFoundError"):
    """An environment where importing `modules` fails as it does when they are not installed
    (or, with error="OSError", when an installed one cannot load its native libraries)."""
    import subprocess
    import sys

    shims = tmp_path / "shims"
    for module in modules:
        (shims / module).mkdir(parents=True)
        (shims / module / "__init__.py").write_text(f"raise {error}(\"No module named '{module}'\")\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shims), os.path.dirname(os.path.dirname(__file__))]))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "topkspec", *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300)
    return run


@slow
@pytest.mark.parametrize("what, error", [(what, "ModuleNotFoundError") for what in ABSENT]
                         + [("only the base install", "OSError")])
def test_the_listing_works_with_any_subset_installed(tmp_path, what, error):
    run = _without(tmp_path, ABSENT[what], error)
    done = run("targets")
    assert done.returncode == 0, f"{what}: targets exited {done.returncode}\n{done.stderr}"
    assert "Traceback" not in done.stderr, f"{what}: targets printed a traceback:\n{done.stderr}"
    assert "reference  [available]" in done.stdout, f"{what}: the reference target is not listed:\n{done.stdout}"
    for name in ("jax", "torch", "openvino"):
        assert f"{name}  [unavailable]" in done.stdout, f"{what}: {name} not listed as unavailable:\n{done.stdout}"


@pytest.mark.parametrize("error", ["ModuleNotFoundError", "OSError"])
@pytest.mark.parametrize("target", ["jax", "torch", "openvino", "onnxruntime", "onnx-reference"])
def test_fuzzing_an_absent_runtime_is_one_line_and_exit_2(tmp_path, target, error):
    run = _without(tmp_path, ABSENT["no runtime at all"], error)
    done = run("fuzz", "--target", target, "--max-examples", "5", "--quiet")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, f"{target}: expected exit 2, got {done.returncode}\n{done.stderr}"
    assert len(lines) == 1 and lines[0].startswith("topkspec: error:"), f"{target}: stderr {done.stderr!r}"
    assert "cannot run here" in lines[0], f"{target}: {lines[0]!r}"
