"""How a DirectML TopK call lays its three tensors out in memory, and what it asks of DirectML
beyond the operator's descriptor: the strides of each tensor, the bytes bound before and after
each one (a binding offset, guard bytes), the execution flags and whether the operator is
compiled alone or inside a small graph. Standard library only at import (offset_array and
outside_mask load numpy when called).

A `Layout` rides on a DirectML Case (`with_layout`, `layout_of`); a case without one is packed,
bound at offset 0, compiled alone, with no flags: what every DirectML case was before layouts.
The arithmetic here (element offsets, TotalTensorSizeInBytes, the bytes of a binding) is what
DirectML's pages state; the rules that hold a runtime to it are in `layout_rules`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from topkspec.spec.strides import packed_strides, total_size

#: DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT: a binding's Offset is a multiple of it.
MINIMUM_ALIGNMENT = 16
#: DML_EXECUTION_FLAGS by short name.
EXECUTION_FLAGS = {"ALLOW_HALF_PRECISION_COMPUTATION": 0x1, "DISABLE_META_COMMANDS": 0x2,
                   "DESCRIPTORS_VOLATILE": 0x4}
HALF_PRECISION = EXECUTION_FLAGS["ALLOW_HALF_PRECISION_COMPUTATION"]
#: The layouts a campaign draws for the input and for the outputs (coverage counts them by name).
INPUT_LAYOUTS = ("packed", "broadcast", "permuted", "padded")
OUTPUT_LAYOUTS = ("packed", "padded", "slice")
#: The byte every output buffer is filled with before a call: a byte no output element is
#: asked to hold everywhere, so a write outside the elements shows.
GUARD_BYTE = 0xA5
TENSORS = ("InputTensor", "OutputValueTensor", "OutputIndexTensor")


@dataclass(frozen=True)
class Layout:
    """One call's memory layout and execution (see the module text).

    - input, output: the layouts' names (INPUT_LAYOUTS, OUTPUT_LAYOUTS);
    - strides: per tensor (input, values, indices) its Strides in elements, or None (packed);
    - offsets: per tensor the binding's Offset in bytes (a multiple of MINIMUM_ALIGNMENT);
    - tails: per tensor the bytes bound after TotalTensorSizeInBytes (guard bytes);
    - flags: the DML_EXECUTION_FLAGS bits; graph: compiled inside a graph (an identity before
      and after the TopK) with IDMLDevice1::CompileGraph, not alone with CompileOperator.
    """

    input: str = "packed"
    output: str = "packed"
    strides: tuple = (None, None, None)
    offsets: tuple = (0, 0, 0)
    tails: tuple = (0, 0, 0)
    flags: int = 0
    graph: bool = False
    extra: tuple = field(default=(), compare=True)

    @property
    def is_plain(self) -> bool:
        """Packed, bound at 0 with nothing after, no flags, alone: the call before layouts."""
        return self == Layout()

    @property
    def flag_names(self) -> list[str]:
        return [name for name, bit in EXECUTION_FLAGS.items() if self.flags & bit]

    def words(self) -> str:
        """'input permuted, outputs slice, flags DISABLE_META_COMMANDS, in a graph'."""
        parts = [f"input {self.input}", f"outputs {self.output}"]
        if any(self.offsets):
            parts.append("offsets " + "/".join(str(o) for o in self.offsets))
        parts.append("flags " + ("|".join(self.flag_names) or "none"))
        parts.append("in a graph" if self.graph else "alone")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        return {"input": self.input, "output": self.output,
                "strides": [list(s) if s is not None else None for s in self.strides],
                "offsets": list(self.offsets), "tails": list(self.tails),
                "flags": self.flag_names, "graph": self.graph}

    @classmethod
    def from_dict(cls, data: dict) -> "Layout":
        flags = 0
        for name in data.get("flags", ()):
            flags |= EXECUTION_FLAGS[str(name).replace("DML_EXECUTION_FLAG_", "")]
        return cls(input=data.get("input", "packed"), output=data.get("output", "packed"),
                   strides=tuple(tuple(s) if s is not None else None for s in data.get("strides", (None,) * 3)),
                   offsets=tuple(data.get("offsets", (0, 0, 0))), tails=tuple(data.get("tails", (0, 0, 0))),
                   flags=flags, graph=bool(data.get("graph", False)))


def layout_of(case) -> Layout:
    """The case's layout (a plain one when it carries none)."""
    found = dict(getattr(case, "extra", ()) or ()).get("layout")
    return found if isinstance(found, Layout) else Layout()


def with_layout(case, layout: Layout | None):
    """The case with `layout` (None or a plain layout: without one)."""
    kept = tuple(item for item in case.extra if item[0] != "layout")
    return replace(case, extra=kept + ((("layout", layout),) if layout is not None and not layout.is_plain else ()))


# -- arithmetic: topkspec.spec.strides ----------------------------------------------------------

def tensor_sizes(case) -> tuple:
    """(input sizes, output sizes) of a DirectML case."""
    out = tuple(case.out_shape) if 0 <= case.norm_axis < case.rank else tuple(case.shape)
    return tuple(case.shape), out


def buffer_plan(case, layout: Layout | None = None) -> list[dict]:
    """Per tensor (input, values, indices): {"sizes", "strides", "itemsize", "total" (its
    TotalTensorSizeInBytes), "offset", "buffer" (the bound buffer's bytes: offset + total +
    tail)}."""
    from topkspec.spec.dtypes import itemsize

    layout = layout or layout_of(case)
    in_sizes, out_sizes = tensor_sizes(case)
    plan = []
    for t, (sizes, dtype) in enumerate(((in_sizes, case.dtype), (out_sizes, case.dtype),
                                        (out_sizes, case.index_dtype))):
        size = itemsize(dtype)
        strides = layout.strides[t]
        total = total_size(sizes, strides, size)
        plan.append({"sizes": sizes, "strides": strides, "itemsize": size, "total": total,
                     "offset": layout.offsets[t], "buffer": layout.offsets[t] + total + layout.tails[t]})
    return plan


def offset_array(entry):
    """element_offsets of a plan entry as a numpy array (numpy is loaded here, not at import)."""
    import numpy as np

    sizes = entry["sizes"]
    strides = entry["strides"] if entry["strides"] is not None else packed_strides(sizes)
    offsets = np.zeros((), dtype=np.int64)
    for size, stride in zip(sizes, strides):
        offsets = offsets[..., None] + np.arange(size, dtype=np.int64) * stride
    return offsets.reshape(-1)


def outside_mask(entry, length: int):
    """Per byte of a bound buffer of `length` bytes: True where none of the tensor's elements lies."""
    import numpy as np

    outside = np.ones(length, dtype=bool)
    inside = (entry["offset"] + offset_array(entry)[:, None] * entry["itemsize"]
              + np.arange(entry["itemsize"])).reshape(-1)
    outside[inside[inside < length]] = False
    return outside
