"""The `jittor` target: Jittor's `jt.topk` on the CPU, in jittor's own Python environment.

jittor pins numpy below 2, which the suite's ml_dtypes does not take, so it cannot share the
suite's environment: the target runs it in a worker under another interpreter
(topkspec.targets.foreign), made by `topkspec env setup jittor` or named by
TOPKSPEC_JITTOR_PYTHON. The worker loads kernels/jittor_kernel.py, which imports jittor with
`nvcc_path=""` (no CUDA toolkit looked for, none downloaded) and `use_mkl=0`, and calls
`jt.topk(jt.array(x), k, dim=axis, largest=largest, sorted=sorted)` with every argument as
drawn. jittor compiles its core with the machine's g++ the first time it is imported, for
minutes; JITTOR_HOME keeps that build in `<environments>/jittor-home` between runs.

Its contract: `jt.topk(input, k, dim=None, largest=True, sorted=True)` has no docstring (jittor's
python/jittor/misc.py); its signature and its "Returns the k largest elements"-like use follow
torch.topk, whose users jittor addresses ("a torch-like API"). So the promises are our reading of
that signature: sorted output on request, both directions, indices returned, K above the size
and an axis out of range refused (as torch.topk refuses them); K = 0, ties and NaN unspecified. DirectML cases run as ONNX TopK-11 would.
"""
from __future__ import annotations

import os

import numpy as np

from topkspec.spec import dtypes
from topkspec.spec.contracts import INTERPRETATION, own_contract
from topkspec.targets.base import Rejected, selects_largest
from topkspec.targets.foreign import ForeignTarget, environments_dir
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer

SOURCE_URL = "https://github.com/Jittor/jittor/blob/master/python/jittor/misc.py"
_READING = "jt.topk has no docstring; read from its signature, which is torch.topk's"

CONTRACT = own_contract(
    "jittor.topk", url=SOURCE_URL, title="jittor.misc.topk (python/jittor/misc.py)",
    notes="jt.topk(input, k, dim=None, largest=True, sorted=True) documents nothing beyond its signature.",
    sorted={"value": "optional", "status": INTERPRETATION, "reason": _READING + ": sorted=True asks for order"},
    smallest={"value": "offered", "status": INTERPRETATION, "reason": _READING + ": largest=False"},
    indices={"value": "returned", "status": INTERPRETATION, "reason": _READING + ": (values, indices)"},
    k_above_axis={"value": "refused", "status": INTERPRETATION, "reason": _READING + ": torch.topk refuses it"},
    axis_out_of_range={"value": "refused", "status": INTERPRETATION, "reason": _READING + ": a dim it has"},
)


def jittor_home() -> str:
    """Where jittor caches its compiled core: $JITTOR_HOME, else beside the environments."""
    return os.environ.get("JITTOR_HOME") or str(environments_dir() / "jittor-home")


class JittorTarget(ForeignTarget):
    name = "jittor"
    environment = "jittor"
    kernel = "jittor_kernel.py"
    default_profile = "onnx:11"
    index_dtype = "int32"  # jt.topk's indices (jt.argsort's)
    # torch.topk's signature, so torch's refusals: K above the size and an axis out of range
    # (our reading; jittor refuses the axis, not K: its known list)
    validates = True
    contract = CONTRACT
    support_fields = ("dtype",)
    start_timeout = 1800.0  # the first import compiles jittor's core (minutes on two cores)
    min_timeout = 60.0  # each new signature compiles a kernel

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._probes: dict = {}  # dtype -> None, "narrowed" or jittor's refusal

    def worker_environment(self) -> dict:
        env = dict(os.environ)
        env.update(nvcc_path="", use_mkl="0", log_silent="1", JITTOR_HOME=jittor_home())
        env.pop("PYTHONPATH", None)  # the suite's packages are not jittor's
        return env

    def supports(self, case):
        """bfloat16 cannot reach jittor; a type jt.array narrows is unsupported; otherwise a tiny
        jt.topk of the type is run once, and jittor's refusal of it refuses every such case
        (Rejected: a valid descriptor rejected, a finding unless declared known)."""
        if case.dtype == "bfloat16":
            return "numpy in jittor's environment has no bfloat16 to hand jittor"
        if case.dtype not in self._probes:
            try:
                self._probes[case.dtype] = self.call("probe", dtypes.numpy_dtype(case.dtype).str)
            except Rejected as exc:
                self._probes[case.dtype] = exc
        answer = self._probes[case.dtype]
        if isinstance(answer, Rejected):
            raise Rejected(f"jittor cannot run a tiny jt.topk on {case.dtype}: {answer}")
        if answer == "narrowed":
            return f"jittor has no {case.dtype} type (jt.array changes it)"
        return None

    def run(self, case, x):
        largest = selects_largest(case)
        values, indices = self.call("topk", np.ascontiguousarray(x), int(case.k), int(case.axis), largest,
                                    bool(case.sorted))
        if not isinstance(values, np.ndarray) or not isinstance(indices, np.ndarray):
            raise Rejected(f"jittor: returned {type(values).__name__}, {type(indices).__name__}")
        return values, indices


def _fill(target, case, _spec=None) -> dict:
    return {"largest": selects_largest(case), "sorted": bool(case.sorted)}


def _stack(target, case, _spec=None):
    found = target.runtime_version() if isinstance(target, JittorTarget) else None
    return RuntimeStack("Jittor", "jt.topk", "CPU", {"jittor": (found or "?").split()[1] if found else "?"},
                        ("jt.topk(jt.array(x), k, dim=axis, largest, sorted); nvcc_path=\"\" and use_mkl=0 "
                         "(CPU only, no CUDA toolkit searched), jt.flags.use_cuda = 0",))


register_repro_writer("jittor", ReproWriter("jittor.tmpl", needs="numpy and jittor", fill=_fill, stack=_stack),
                      target_class=JittorTarget)
