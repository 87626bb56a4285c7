"""The `tinygrad` target: tinygrad's `Tensor.topk` on its CPU device.

tinygrad generates and compiles its own kernels. Its CPU device (DEV=CPU) renders them as C
and compiles them with clang, which must be on PATH (`apt-get install clang`; `CC` names
another compiler): without it tinygrad finds "no usable devices". The adapter sets DEV=CPU
before tinygrad is imported, unless DEV is already set (DEV=PYTHON runs tinygrad's slow
Python emulator instead, needing no compiler).

`Tensor.topk(k, dim, largest, sorted_)` takes the dimension (negative ones too) and the
direction, so ONNX and DirectML cases pass straight through. It implements only sorted
output (sorted_=False raises NotImplementedError, "TODO support False" in tinygrad's tests),
so every case runs with sorted_=True: a sorted result is a valid ONNX sorted=0 result (the
order is undefined), as the lowering rules take it. topk is a bitonic sort along the axis
(padded to a power of two) whose indices are found afterwards by matching values, so tinygrad
returns values computed by the sorting network and int32 indices; the indices are returned as
the case's index type when they all fit it.

tinygrad compiles per shape, type, K, axis and direction: a new one costs about a second for a
short axis and 10 to 20 s for axes of 300 to 4096 on a 2-core machine, a repeated one
milliseconds. tinygrad caches what it built itself, in memory and in its disk cache
(~/.cache/tinygrad/cache.db, compiled kernels by source), so the adapter keeps no cache of its
own beyond the per-type probe. Campaigns against it want `--timeout 60`: with the default 5 s
a first compile is often reported as a hang.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target, as_index_type, first_line, selects_largest
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions
from topkspec.targets.quiet import stderr_captured
from topkspec.targets.runtimes import contracts as runtime_contracts

# tinygrad reads DEV when it picks its device; set it before tinygrad is imported anywhere.
os.environ.setdefault("DEV", "CPU")

_TINYGRAD_TYPES = {  # canonical name -> tinygrad dtype attribute
    "float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "float64": "float64",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
}


def device_name() -> str:
    """The device tinygrad runs on: DEV as set (the adapter's CPU unless the user chose)."""
    return os.environ.get("DEV") or "CPU"


def _uses_clang(device: str) -> bool:
    """The CPU device compiles with clang: its kernels under the default renderer, and its own
    helper programs under every renderer."""
    return device.split(":")[0].upper() == "CPU"


def _compiler() -> str:
    return os.environ.get("CC") or "clang"


@lru_cache(maxsize=None)
def compiler_version(compiler: str) -> str:
    """'clang 14.0.6', or '' when it cannot be asked."""
    try:
        text = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    found = re.search(r"version (\d+(?:\.\d+)+)", text)
    name = os.path.basename(compiler)
    return f"{name} {found.group(1)}" if found else name


def device_label() -> str:
    """'CPU, clang 14.0.6': the device and, for the CPU device, the compiler it uses."""
    device = device_name()
    if _uses_clang(device) and ":" not in device:
        compiler = compiler_version(_compiler()) if shutil.which(_compiler()) else f"no {_compiler()}"
        return f"{device}, {compiler}"
    return device


def to_tinygrad(x: np.ndarray):
    """numpy array to a tinygrad Tensor of the same type (bfloat16 travels as its 16 bits and
    is bitcast, since tinygrad does not read ml_dtypes arrays). The adapter's own code."""
    from tinygrad import Tensor, dtypes as tdtypes

    x = np.ascontiguousarray(x)
    if dtypes.name_of(x.dtype) == "bfloat16":
        return Tensor(x.view(np.uint16)).bitcast(tdtypes.bfloat16)
    return Tensor(x)


def from_tinygrad(values, dtype: str) -> np.ndarray:
    """A realized tinygrad Tensor as numpy (bfloat16 read back as its bits). tinygrad's own
    calls: realizing the Tensor compiles and runs the kernels."""
    from tinygrad import dtypes as tdtypes

    if dtype == "bfloat16":
        return values.bitcast(tdtypes.uint16).numpy().view(dtypes.numpy_dtype("bfloat16"))
    return values.numpy()


def compiler_error(diagnostics: list) -> str:
    """' (<the compiler's first error line>)' from what stderr_captured() caught, else ''."""
    errors = [line.strip() for line in "".join(diagnostics).splitlines() if "error:" in line]
    return f" ({errors[0]})" if errors else ""


class TinygradTarget(Target):
    contract = runtime_contracts.TINYGRAD
    name = "tinygrad"
    default_profile = "onnx:24"  # dim, largest and (sorted) output; every TopK-24 value type
    index_dtype = None  # int32 from tinygrad, returned as the case's index type when they fit
    native = True
    validates = True  # refuses K above the size (ValueError) and an out-of-range dim (IndexError); accepts K=0
    min_timeout = 60.0  # a new shape compiles for up to 20 s on a 2-core machine
    validates_tables = ()
    support_fields = ("dtype", "shape", "axis")  # the type, and whether the axis has one element

    def __init__(self):
        self._support: dict = {}

    def version(self) -> str:
        from importlib import metadata

        try:
            version = metadata.version("tinygrad")
        except metadata.PackageNotFoundError:
            return "not installed"
        return f"tinygrad {version} ({device_label()})"

    def available(self):
        try:
            import tinygrad  # noqa: F401
        except ImportError as exc:
            return False, f"the tinygrad package (pip install tinygrad): {exc}"
        device = device_name()
        if _uses_clang(device) and shutil.which(_compiler()) is None:
            return False, (f"a C compiler for tinygrad's {device} device: `{_compiler()}` is not on PATH "
                           f"(tinygrad compiles its CPU kernels and the device's own helper programs with "
                           f"clang: apt-get install clang, or set CC); DEV=PYTHON selects tinygrad's "
                           f"Python emulator instead")
        try:
            from tinygrad import Device

            Device[device]  # opening the device compiles its helper programs
        except Exception as exc:
            return False, (f"tinygrad's {device} device does not open here: {type(exc).__name__}: "
                           f"{first_line(exc, empty='')}")
        return True, ""

    def supports(self, case):
        """Every canonical value type has a tinygrad dtype, so nothing is unexpressible. Each
        type is probed once (per kind of axis) with a tiny TopK: a type tinygrad cannot run (bfloat16
        with a clang older than 15, which lacks `__bf16` on x86) is refused (Rejected: a valid
        descriptor rejected, unless declared known). The probe has the case's kind of axis: a
        sequence of one element is returned without a sorting kernel (Tensor.sort returns it as
        it is), so it is probed apart, and a refusal's shrunk case is one tinygrad refuses."""
        if case.dtype not in _TINYGRAD_TYPES:
            return f"tinygrad has no type for {case.dtype}"
        try:
            single = case.axis_size == 1
        except IndexError:  # an axis out of range: tinygrad refuses the call itself
            single = False
        key = (case.dtype, single)
        if key not in self._support:
            probe = to_tinygrad(np.array([2] if single else [2, 0, 1]).astype(dtypes.numpy_dtype(case.dtype)))
            with stderr_captured() as diagnostics:  # clang's, kept for the reason, off the run's output
                try:
                    values, indices = probe.topk(1)
                    from_tinygrad(values, case.dtype), indices.numpy()
                    failure = None
                except Exception as exc:
                    failure = f"{type(exc).__name__}: {first_line(exc, empty='')}"
            self._support[key] = failure and (f"tinygrad Tensor.topk on {device_label()} cannot run {case.dtype}: "
                                              f"{failure}" + compiler_error(diagnostics))
        if self._support[key]:
            raise Rejected(self._support[key])
        return None

    def run(self, case, x):
        tensor = to_tinygrad(x)  # the adapter's own conversion: its failure is the adapter's
        with stderr_captured() as diagnostics:  # clang's warnings and errors, off the run's output
            try:
                values, indices = tensor.topk(int(case.k), dim=int(case.axis), largest=selects_largest(case),
                                              sorted_=True)
                values, indices = from_tinygrad(values, case.dtype), indices.numpy()
                refused = None
            except Exception as exc:  # tinygrad refused the call (K above the size, an axis out of range)
                refused = exc
        if refused is not None:
            raise Rejected(f"tinygrad: {type(refused).__name__}: {first_line(refused, empty='')}"
                           + compiler_error(diagnostics)) from refused
        return values, as_index_type(indices, case.index_dtype)


# -- the repro writer for bug reports ----------------------------------------------------------

def _fill(target, case, _spec=None) -> dict:
    return {"device": device_name(), "largest": selects_largest(case), "index_type": case.index_dtype,
            "to_tinygrad": ("Tensor(x.view(np.uint16)).bitcast(dtypes.bfloat16)" if case.dtype == "bfloat16"
                            else "Tensor(x)"),
            "from_tinygrad": ("values.bitcast(dtypes.uint16).numpy().view(x.dtype)" if case.dtype == "bfloat16"
                              else "values.numpy()")}


def _stack(target, case, _spec=None):
    device = device_name()
    details = [f"DEV={device}" + (f": kernels rendered as C and compiled with {compiler_version(_compiler())}"
                                  if _uses_clang(device) and ":" not in device else ""),
               "Tensor.topk(k, dim=axis, largest=..., sorted_=True): tinygrad implements sorted output only, "
               "which is a valid result for ONNX sorted=0 too",
               f"int32 indices returned as {case.index_dtype} (each fits)"]
    return RuntimeStack("tinygrad", "Tensor.topk", device_label(), versions("tinygrad", "numpy"), tuple(details))


register_repro_writer("tinygrad", ReproWriter("tinygrad.tmpl",
                                   needs="numpy and tinygrad (and clang for its CPU device)",
                                   fill=_fill, stack=_stack),
                      target_class=TinygradTarget)
