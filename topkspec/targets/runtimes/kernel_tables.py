"""The value types a runtime's own kernel table lists for TopK, where the runtime publishes one.

A runtime that implements ONNX promises ONNX TopK's types; where its own table of kernels lists
fewer, a refused type the table leaves out is a feature to ask for, not a bug
(report.kinds: kind feature-request), and the report cites the table. Keyed by target name.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelTable:
    """`title` and `url` name the table; `rows` are ((first opset, last opset or None), types)
    for TopK's value type T; `release` is the runtime release the rows were read from."""

    title: str
    url: str
    release: str
    rows: tuple

    def types_at(self, opset: int) -> tuple | None:
        """The types the table lists at `opset`, or None when no row covers it."""
        for (first, last), types in self.rows:
            if first <= opset and (last is None or opset <= last):
                return types
        return None


_ORT_11 = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8")

#: ONNX Runtime's CPU execution provider, as 1.32.0 registers its TopK kernels
#: (onnxruntime.capi._pybind_state.get_all_opkernel_def(), which docs/OperatorKernels.md is made from).
ONNXRUNTIME_CPU = KernelTable(
    title="ONNX Runtime docs/OperatorKernels.md, CPUExecutionProvider, TopK",
    url="https://github.com/microsoft/onnxruntime/blob/main/docs/OperatorKernels.md",
    release="1.32.0",
    rows=(((1, 10), ("float32", "float64")), ((11, None), _ORT_11)))

KERNEL_TABLES = {"onnxruntime": ONNXRUNTIME_CPU}


def kernel_table(target_name: str) -> KernelTable | None:
    """The kernel table of the target named `target_name`, or None when its runtime has none here."""
    return KERNEL_TABLES.get(target_name)
