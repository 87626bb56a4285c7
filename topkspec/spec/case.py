"""One concrete TopK call: what the fuzzer runs and the properties judge.

A Case is the normalised view of a descriptor (DirectML or ONNX): the value type, the
input shape, the axis, K, the direction, whether the output is sorted and the index type,
plus the profile whose rules judge it. `descriptor()` gives the JSON form of docs/spec.md ("Descriptor JSON") and
`Case.from_descriptor` reads it back.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from topkspec.spec import dtypes


@dataclass(frozen=True)
class Case:
    profile: str  # "dml:3.1", "onnx:11", ... (see spec.profiles)
    op: str  # "TOP_K1" or "TOP_K" (DirectML), "TopK" (ONNX)
    dtype: str  # canonical value type name: "float32", "bfloat16", "uint64", ...
    shape: tuple[int, ...]
    axis: int  # as written: ONNX may be negative, DirectML is 0..rank-1
    k: int
    largest: bool = True
    sorted: bool = True
    index_dtype: str = "uint32"  # "uint32"/"uint64" (DirectML) or "int64" (ONNX)
    # Descriptor fields the normalised view cannot carry (explicit output sizes,
    # strides, unknown attributes...). Empty for cases built from the fields above.
    extra: tuple[tuple[str, Any], ...] = field(default=(), compare=True)

    @property
    def family(self) -> str:
        return self.profile.split(":", 1)[0]

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def norm_axis(self) -> int:
        """Axis in 0..rank-1 (negative ONNX axes counted from the back)."""
        return self.axis + self.rank if self.axis < 0 else self.axis

    @property
    def lowered_axis(self) -> int:
        """The axis as DirectML takes it: a valid negative ONNX axis counted from the back, as
        lowering does (rule lower.axis); an invalid axis as drawn, so it stays invalid (unlike
        norm_axis, which turns -2 at rank 1 into -1, an axis numpy and most libraries accept)."""
        return self.axis + self.rank if -self.rank <= self.axis < 0 else self.axis

    @property
    def axis_size(self) -> int:
        return self.shape[self.norm_axis]

    @property
    def out_shape(self) -> tuple[int, ...]:
        shape = list(self.shape)
        shape[self.norm_axis] = self.k
        return tuple(shape)

    def signature(self) -> tuple:
        """What a compiled model or session depends on: K and the sizes are excluded."""
        return (self.profile, self.op, self.dtype, self.rank, self.norm_axis,
                self.largest, self.sorted, self.index_dtype)

    def with_(self, **changes) -> "Case":
        return replace(self, **changes)

    @property
    def k_form(self) -> str | None:
        """How the call passes K where the target can pass it more than one way ("constant":
        compiled into the model; "input": given at run time; Target.k_forms), else None (the
        target's own way)."""
        return dict(self.extra).get("k_form")

    def with_k_form(self, form: str | None) -> "Case":
        """This case asking for K passed as `form` (None: the target's own way)."""
        kept = tuple(item for item in self.extra if item[0] != "k_form")
        return replace(self, extra=kept + ((("k_form", form),) if form else ()))

    @property
    def context(self) -> str | None:
        """The ONNX graph the TopK node sits in (a name of spec.graphs.CONTEXTS), else None (the
        one-node model)."""
        return dict(self.extra).get("context")

    def with_context(self, context: str | None) -> "Case":
        """This case with its TopK inside graph `context` (None: the one-node model)."""
        kept = tuple(item for item in self.extra if item[0] != "context")
        return replace(self, extra=kept + ((("context", context),) if context else ()))

    @property
    def layout(self) -> Layout:
        """How a DirectML call lays its tensors out and runs (spec.layouts); plain by default."""
        from topkspec.spec import layouts  # dataclasses: loaded by the first laid-out case, not by validate

        return layouts.layout_of(self)

    def with_layout(self, layout: Layout | None) -> "Case":
        """This case with `layout` (None: packed, bound at 0, alone, no flags)."""
        from topkspec.spec import layouts

        return layouts.with_layout(self, layout)

    def to_dict(self) -> dict:
        return {
            "profile": self.profile,
            "op": self.op,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "axis": self.axis,
            "k": self.k,
            "largest": self.largest,
            "sorted": self.sorted,
            "index_dtype": self.index_dtype,
            **({"k_form": self.k_form} if self.k_form else {}),
            **({"context": self.context} if self.context else {}),
            **({"layout": self.layout.to_dict()} if not self.layout.is_plain else {}),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Case":
        return cls(
            profile=data["profile"],
            op=data["op"],
            dtype=dtypes.canonical(data["dtype"]),
            shape=tuple(int(s) for s in data["shape"]),
            axis=int(data["axis"]),
            k=int(data["k"]),
            largest=bool(data.get("largest", True)),
            sorted=bool(data.get("sorted", True)),
            index_dtype=data.get("index_dtype", "uint32"),
        ).with_k_form(data.get("k_form")).with_context(data.get("context")).with_layout(
            _layout_from(data.get("layout")))

    def call_text(self) -> str:
        """The call in the words its operator uses, as a failure message ends:
        '[K=3, axis=1, largest, sorted]' (ONNX), '[TOP_K1, K=3, axis=1, DECREASING]' (DirectML,
        whose results are always sorted and whose TOP_K has no direction)."""
        if self.family == "dml":
            words = [self.op, f"K={self.k}", f"axis={self.axis}"]
            if self.op != "TOP_K":  # DML_TOP_K has no direction: it selects the largest
                words.append("DECREASING" if self.largest else "INCREASING")
            if not self.sorted:  # judged as a set: the runtime's contract never promises the order
                words.append("unsorted")
        else:
            words = [f"K={self.k}", f"axis={self.axis}", "largest" if self.largest else "smallest",
                     "sorted" if self.sorted else "unsorted"]
        if self.k_form:
            words.append(f"K as {'a constant' if self.k_form == 'constant' else 'an input'}")
        if self.context:
            words.append(f"in graph {self.context}")
        if not self.layout.is_plain:
            words.append(self.layout.words())
        return f"[{', '.join(words)}]"

    def describe(self) -> str:
        """One line a person reads: op, type, shape, axis, K, direction."""
        direction = "largest" if self.largest else "smallest"
        order = "" if self.sorted else ", unsorted"
        graph = f", in graph {self.context}" if self.context else ""
        return (f"{self.op} [{self.profile}] {self.dtype}{list(self.shape)} "
                f"axis={self.axis} k={self.k} {direction}{order}{graph}")


def selects_largest(case) -> bool:
    """The direction a case asks for: DML_TOP_K has no AxisDirection and always selects the
    largest, whatever `case.largest` says."""
    return True if case.op == "TOP_K" else bool(case.largest)


def _layout_from(data):
    """The Layout a case's dictionary holds (None: packed)."""
    if not data:
        return None
    from topkspec.spec.layouts import Layout

    return Layout.from_dict(data)
