"""How fast the spec is as a library: `spec.validate` per descriptor, and `import topkspec.spec`.

    from topkspec.spec import speed
    print(speed.format_report(speed.measure()))       # or: python -m topkspec.spec.speed

`measure` times `spec.validate` on the golden descriptors (the DirectML and ONNX examples of
docs/spec.md's "Descriptor JSON") and on one invalid descriptor of each family, best of `repeat`
runs of `number` calls, each call doing the whole work (nothing is cached per descriptor). It
times the import in fresh interpreters (best of `repeat` processes, `time.perf_counter()`
around the import), then the first `spec.validate` in the same process (it loads the rules,
the checks and the tables the import defers), and Python's own start-up (`python -c pass`,
wall time) beside them, so the import figure is not mistaken for the time a command takes.
Standard library only.
"""
from __future__ import annotations

import copy
import os
import subprocess
import sys
import time
import timeit

# The docs/spec.md examples ("Descriptor JSON"), the DirectML one with its elided output tensors filled in.
DML_GOLDEN = {
    "Type": "DML_OPERATOR_TOP_K1", "FeatureLevel": "DML_FEATURE_LEVEL_3_1",
    "Desc": {
        "InputTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [1, 1, 3, 4]},
        "OutputValueTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [1, 1, 3, 2]},
        "OutputIndexTensor": {"DataType": "DML_TENSOR_DATA_TYPE_UINT32", "Sizes": [1, 1, 3, 2]},
        "Axis": 3, "K": 2, "AxisDirection": "DML_AXIS_DIRECTION_DECREASING",
    },
}
ONNX_GOLDEN = {"op_type": "TopK", "opset": 11, "X": {"dtype": "float32", "shape": [3, 4]}, "k": 2,
               "attributes": {"axis": -1, "largest": 1, "sorted": 1}}


def _dml_invalid() -> dict:
    desc = copy.deepcopy(DML_GOLDEN)
    desc["Desc"]["K"] = 0
    desc["Desc"]["OutputIndexTensor"]["DataType"] = "DML_TENSOR_DATA_TYPE_INT8"
    return desc


def _onnx_invalid() -> dict:
    desc = copy.deepcopy(ONNX_GOLDEN)
    desc["k"] = 5
    desc["attributes"]["largest"] = 2
    return desc


def descriptors() -> dict:
    """name -> descriptor, the ones `measure` times."""
    return {
        "dml TOP_K1 golden": copy.deepcopy(DML_GOLDEN),
        "onnx TopK-11 golden": copy.deepcopy(ONNX_GOLDEN),
        "dml TOP_K1 invalid (K 0, INT8 indices)": _dml_invalid(),
        "onnx TopK-11 invalid (k 5 of 4, largest 2)": _onnx_invalid(),
    }


_IMPORT_CODE = """\
import time
t0 = time.perf_counter()
import topkspec.spec as spec
t1 = time.perf_counter()
spec.validate({desc!r})
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, spec.__file__)
"""


def _run(code: str, env: dict) -> tuple[float, str]:
    """(wall seconds, stdout) of a fresh interpreter running `code`."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the timing interpreter failed: {done.stderr.strip()[-500:]}")
    return wall, done.stdout


def _import_times(repeat: int) -> dict:
    """Best of `repeat` fresh interpreters, in ms: the import, the first validate after it, the
    whole process, and `python -c pass`. The interpreters import this very package."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # above topkspec/
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    code = _IMPORT_CODE.format(desc=DML_GOLDEN)
    startup, imports, firsts, processes = [], [], [], []
    for _ in range(repeat):
        startup.append(_run("pass", env)[0])
        wall, out = _run(code, env)
        imported, first, path = out.strip().split(" ", 2)
        if not os.path.abspath(path).startswith(package_root + os.sep):
            raise RuntimeError(f"the timing interpreter imported {path}, not the package under {package_root}")
        imports.append(float(imported))
        firsts.append(float(first))
        processes.append(wall)
    return {
        "import topkspec.spec": min(imports) * 1e3,
        "first spec.validate after it": min(firsts) * 1e3,
        "python -c 'import topkspec.spec' (process, wall)": min(processes) * 1e3,
        "python -c pass (start-up, wall)": min(startup) * 1e3,
    }


def measure(repeat: int = 5, number: int = 20000) -> dict:
    """{"validate_us": {name: best µs per call}, "findings": {name: findings per call},
    "import_ms": {what: best ms}, "repeat", "number", "python", "bytecode_cache"}."""
    from topkspec.spec.validate import validate

    validate_us, findings = {}, {}
    for name, desc in descriptors().items():
        findings[name] = len(validate(desc))  # and a first call, so the plan is made before timing
        timer = timeit.Timer("validate(desc)", globals={"validate": validate, "desc": desc})
        validate_us[name] = min(timer.repeat(repeat=repeat, number=number)) / number * 1e6
    return {
        "validate_us": validate_us,
        "findings": findings,
        "import_ms": _import_times(repeat),
        "repeat": repeat,
        "number": number,
        "python": sys.version.split()[0],
        # Without bytecode files each fresh interpreter compiles the modules it imports.
        "bytecode_cache": not (sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")),
    }


def format_report(result: dict) -> str:
    """A short table of what `measure` returned."""
    width = max(len(k) for k in (*result["validate_us"], *result["import_ms"])) + 2
    lines = [f"spec.validate, µs per call (best of {result['repeat']} x {result['number']} calls):"]
    for name, us in result["validate_us"].items():
        count = result["findings"][name]
        lines.append(f"  {name:<{width}}{us:8.2f}   ({count} finding{'' if count == 1 else 's'})")
    lines.append(f"fresh interpreter, ms (best of {result['repeat']}; Python {result['python']}"
                 f"{'' if result['bytecode_cache'] else ', no bytecode cache: modules compiled at each start'}):")
    for what, ms in result["import_ms"].items():
        lines.append(f"  {what:<{width}}{ms:8.2f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    """python -m topkspec.spec.speed [repeat [number]]"""
    args = list(sys.argv[1:] if argv is None else argv)
    repeat = int(args[0]) if args else 5
    number = int(args[1]) if len(args) > 1 else 20000
    print(format_report(measure(repeat, number)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
