"""The `torch` and `torch-cuda` targets: torch.topk on one device.

torch.topk takes the dimension, `largest` and `sorted` directly, so ONNX cases pass
through and DirectML cases run sorted. It returns int64 indices. Its documentation does
not promise an order for tied values; the target reports what it does.
"""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target, first_line, selects_largest
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts


def to_torch(x: np.ndarray, device: str):
    """numpy array to a tensor on `device` (bfloat16 travels as its 16 bits)."""
    import torch

    x = np.ascontiguousarray(x)
    if dtypes.name_of(x.dtype) == "bfloat16":
        return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16).to(device)
    return torch.from_numpy(x).to(device)


def to_numpy(t) -> np.ndarray:
    import torch

    t = t.cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(dtypes.numpy_dtype("bfloat16"))
    return t.numpy()


class TorchTarget(Target):
    contract = runtime_contracts.TORCH
    index_dtype = "int64"
    default_profile = "onnx:24"  # dim, largest and sorted, bfloat16 included
    native = True
    validates = True  # refuses K above the size and an out-of-range dim (accepts K=0)

    def __init__(self, name: str, device: str):
        self.name = name
        self.device = device
        self._support: dict = {}

    def version(self) -> str:
        try:
            import torch
        except ImportError:
            return "not installed"
        return f"torch {torch.__version__} ({self.device})"

    def available(self):
        try:
            import torch
        except ImportError as exc:
            return False, f"the torch package (pip install torch): {exc}"
        if self.device == "cuda" and not torch.cuda.is_available():
            return False, (f"torch built with CUDA and an NVIDIA GPU: torch.cuda.is_available() is "
                           f"False (torch {torch.__version__})")
        return True, ""

    def supports(self, case):
        """Probes each value type once: torch lacks topk kernels for some types. A type
        torch.topk refuses is refused in every case (Rejected: a valid descriptor rejected,
        unless declared known); the conversion to a tensor is the adapter's own code."""
        if case.dtype not in self._support:
            import torch

            probe = to_torch(np.arange(3).astype(dtypes.numpy_dtype(case.dtype)), self.device)
            try:
                torch.topk(probe, 1)
                self._support[case.dtype] = None
            except Exception as exc:
                first = first_line(exc, empty="")
                self._support[case.dtype] = (f"torch.topk on {self.device} has no kernel for "
                                             f"{case.dtype}: {type(exc).__name__}: {first}")
        if self._support[case.dtype]:
            raise Rejected(self._support[case.dtype])
        return None

    def run(self, case, x):
        import torch

        sorted_ = case.sorted if case.family == "onnx" else True
        tensor = to_torch(x, self.device)  # the adapter's own conversion: its failure is the adapter's
        try:
            with torch.no_grad():
                values, indices = torch.topk(tensor, int(case.k), dim=case.axis,
                                             largest=selects_largest(case), sorted=bool(sorted_))
        except Exception as exc:  # torch refused the call
            raise Rejected(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        return to_numpy(values), to_numpy(indices)


def cpu() -> TorchTarget:
    return TorchTarget("torch", "cpu")


def cuda() -> TorchTarget:
    return TorchTarget("torch-cuda", "cuda")


def _repro_fill(target, case, _spec) -> dict:
    device = getattr(target, "device", "cpu")
    to = "" if device == "cpu" else f'.to("{device}")'
    if case.dtype == "bfloat16":  # numpy has no bfloat16: its 16 bits travel as int16
        to_torch = f"torch.from_numpy(x.view(np.int16)).view(torch.bfloat16){to}"
        from_torch = "values.cpu().view(torch.int16).numpy().view(x.dtype)"
    else:
        to_torch, from_torch = f"torch.from_numpy(x){to}", "values.cpu().numpy()"
    return {"to_torch": to_torch, "from_torch": from_torch, "largest": selects_largest(case),
            "sorted": case.sorted if case.family == "onnx" else True}


def _repro_stack(target, case, _spec=None) -> RuntimeStack:
    return RuntimeStack("PyTorch", "torch.topk", getattr(target, "device", "cpu").upper(), versions("torch"))


register_repro_writer("torch", ReproWriter("torch.tmpl", "numpy and torch", _repro_fill, _repro_stack),
                      target_class=TorchTarget)
