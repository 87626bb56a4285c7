"""The last step of `topkspec directml setup`, and of a setup from a bundle: the stack starts
and computes TopKs whose answers are known (DirectML's worked examples; one TopK on ONNX
Runtime's DirectML EP). Both install.py and from_bundle.py end with it."""
from __future__ import annotations

import time

from topkspec.directml_tools.setup.shell import Log, SetupError


def step_check(log: Log, adapter: str | None = None) -> dict:
    """Starts the worker and runs DirectML's worked examples; returns the target's stack."""
    import numpy as np

    from topkspec.spec import Case, tables
    from topkspec.targets.runtimes.directml import DirectMLTarget

    log.section("check: the worker makes its device and computes DirectML's worked examples")
    target = DirectMLTarget(adapter=adapter)
    try:
        started = time.monotonic()
        ok, why = target.available()
        if not ok:
            raise SetupError(f"the directml target is not available: {why}")
        info = target.device
        log(f"worker started in {time.monotonic() - started:.1f} s: adapter {info.get('adapter')!r}, "
            f"feature level {info.get('feature_level', 0) >> 12}_{(info.get('feature_level', 0) >> 8) & 0xF}")
        unsupported = [env_name for code, env_name in _type_names() if not (info.get("types") or {}).get(code, [True])[0]]
        log("tensor data types the device supports: "
            + ("all 11" if not unsupported else "all but " + ", ".join(unsupported)))
        for example in tables.DML_WORKED_EXAMPLES:
            x = np.array(example["input"], dtype=np.float32)
            case = Case(target.default_profile, "TOP_K1", "float32", tuple(example["sizes"]), example["axis"],
                        example["k"], largest=example["direction"] == "DECREASING")
            try:
                values, indices = target.run(case, x)
            except Exception as exc:  # a crash, a hang or a refusal: the stack cannot run TopK
                raise SetupError(f"{example['name']}: {type(exc).__name__}: {exc}") from None
            if not (np.array_equal(values, np.array(example["values"], np.float32))
                    and np.array_equal(indices, np.array(example["indices"], np.uint32))):
                raise SetupError(f"{example['name']}: DirectML returned {values.ravel().tolist()} / "
                                 f"{indices.ravel().tolist()}, the page says {example['values']} / "
                                 f"{example['indices']}; the Vulkan driver may lack VK_EXT_descriptor_indexing "
                                 f"({target.stack.describe()})")
        log(f"the four worked examples are exact; stack: {target.version()}")
        return target.report_stack()
    finally:
        target.close()


def step_check_ep(log: Log) -> None:
    """Starts the ONNX Runtime worker on the DirectML EP and runs one TopK exactly."""
    import numpy as np

    from topkspec.spec import Case
    from topkspec.targets.runtimes.directml_ep import WineOrtTarget

    log.section("check: ONNX Runtime's DirectML EP (CPU fallback off) computes a TopK")
    target = WineOrtTarget()
    try:
        ok, why = target.available()
        if not ok:
            raise SetupError(f"the onnxruntime-directml target is not available: {why}")
        x = np.array([[1, 3, 2, 3]], np.float32)
        values, indices = target.run(Case("onnx:11", "TopK", "float32", (1, 4), 1, 2, index_dtype="int64"), x)
        if values.tolist() != [[3.0, 3.0]] or indices.tolist() != [[1, 3]]:
            raise SetupError(f"the DirectML EP returned {values.tolist()} / {indices.tolist()} for "
                             f"{x.tolist()}, K = 2; expected [[3.0, 3.0]] / [[1, 3]]")
        log(f"exact; {target.version()}")
    finally:
        target.close()


def _type_names():
    from topkspec.directml.worker.protocol import DATA_TYPES

    return [(str(code), name) for name, code in DATA_TYPES.items()]
