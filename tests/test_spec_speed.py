"""topkspec.spec.speed: the shape of what measure() gives and the report (no timing assertions)."""
from topkspec import spec
from topkspec.spec import speed


def test_measure_gives_positive_figures_for_each_descriptor_and_the_import():
    result = speed.measure(repeat=1, number=50)
    assert set(result) >= {"validate_us", "findings", "import_ms", "repeat", "number", "python", "bytecode_cache"}
    assert (result["repeat"], result["number"]) == (1, 50)
    names = list(result["validate_us"])
    assert names == list(speed.descriptors())
    assert {"dml TOP_K1 golden", "onnx TopK-11 golden"} <= set(names)
    assert any(n.startswith("dml") and "invalid" in n for n in names)
    assert any(n.startswith("onnx") and "invalid" in n for n in names)
    for figures in (result["validate_us"], result["import_ms"]):
        for what, value in figures.items():
            assert isinstance(value, float) and value > 0, (what, value)
    assert set(result["import_ms"]) == {
        "import topkspec.spec", "first spec.validate after it",
        "python -c 'import topkspec.spec' (process, wall)", "python -c pass (start-up, wall)"}
    assert set(result["findings"]) == set(names)
    for name, count in result["findings"].items():
        assert (count == 0) == ("golden" in name), (name, count)
    report = speed.format_report(result)
    for name in (*names, *result["import_ms"]):
        assert name in report


def test_golden_descriptors_are_valid_and_the_invalid_ones_are_not():
    for name, desc in speed.descriptors().items():
        assert spec.is_valid(desc) == ("golden" in name), name


def test_the_spec_loads_lazily_but_gives_every_public_name():
    for name in spec.__all__:
        assert getattr(spec, name) is not None, name
    assert callable(spec.validate) and callable(spec.export)
    assert spec.checks.DML_DATA_TYPE_SIZES["FLOAT32"] == 4
    assert set(spec.__all__) <= set(dir(spec))
