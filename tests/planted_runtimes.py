"""The built-in targets of the shipped workflows' matrix, each with one planted bug: its indices
come back one-based. Each keeps its name, so `--known` reads the runtime's shipped list and
counts what is known upstream; only the planted bug is new. Named by file path, e.g.
`tests/planted_runtimes.py:torch`, as a workflow's matrix names a user's own target."""
from __future__ import annotations

import numpy as np

from topkspec.targets.registry import get_target


def _one_based(name):
    """The built-in target `name`, whose run returns every index one too high."""
    target = get_target(name)
    base = type(target)

    class OneBased(base):
        def run(self, case, x):
            values, indices = base.run(self, case, x)
            return values, np.asarray(indices) + 1

    OneBased.__name__ = OneBased.__qualname__ = f"OneBased{base.__name__}"
    target.__class__ = OneBased  # the runtime's own object, made by its own factory
    return target


def reference():
    return _one_based("reference")


def onnx_reference():
    return _one_based("onnx-reference")


def onnxruntime():
    return _one_based("onnxruntime")


def torch():
    return _one_based("torch")


def jax():
    return _one_based("jax")
