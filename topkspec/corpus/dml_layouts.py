"""DirectML corpus cases laid out as applications lay them out (spec.layouts): a few valid cases
again, each under one input layout, output layout, execution flag or a graph, so a harness in
C or C++ replays strides, binding offsets, guard bytes and flags too.

A laid-out case's file adds to the plain form (dml_files):

    "execution": {"flags": [DML_EXECUTION_FLAGS names], "graph": bool (compiled inside a graph:
                  an ELEMENT_WISE_IDENTITY before and after the TopK, IDMLDevice1::CompileGraph),
                  "bindings": [per tensor {"Offset", "SizeInBytes", "BufferBytes"}],
                  "guard_byte": the byte both output buffers hold before the call},
    "input": {..., "buffer_base64": the whole input buffer as bound, laid out through its Strides},

and the descriptor's tensors carry their Strides and TotalTensorSizeInBytes. The expected
outputs are the logical tensors (packed), read through the outputs' Strides from their
buffers; every other byte of both output buffers must still hold the guard byte.
"""
from __future__ import annotations

import base64
from dataclasses import replace

import numpy as np

from topkspec.corpus.valid import file_slug
from topkspec.spec.layouts import EXECUTION_FLAGS, GUARD_BYTE, MINIMUM_ALIGNMENT, Layout, buffer_plan

_META, _HALF, _VOLATILE = (EXECUTION_FLAGS[n] for n in ("DISABLE_META_COMMANDS", "ALLOW_HALF_PRECISION_COMPUTATION",
                                                         "DESCRIPTORS_VOLATILE"))


def _variants(rank: int) -> list:
    """(name, layout function of the sizes) for each layout, flag and the graph, one at a time."""
    def permuted(sizes):
        order = list(range(rank))[::-1]  # stored with the dimensions reversed
        stored = _packed([sizes[d] for d in order])
        strides = [0] * rank
        for place, d in enumerate(order):
            strides[d] = stored[place]
        return Layout(input="permuted", strides=(tuple(strides), None, None))

    def padded(sizes, kind="input"):
        strides, step = [], 1
        for size in reversed(sizes):
            strides.append(step)
            step = step * size + 1
        strides = tuple(reversed(strides))
        return (Layout(input="padded", strides=(strides, None, None)) if kind == "input"
                else Layout(output="padded", strides=(None, strides, strides)))

    return [
        ("input_broadcast", None),  # built from the case: the first slice repeated (see laid_out)
        ("input_permuted", permuted),
        ("input_padded", padded),
        ("output_padded", lambda sizes: padded(sizes, "output")),
        ("output_slice", lambda sizes: Layout(output="slice", offsets=(MINIMUM_ALIGNMENT, 2 * MINIMUM_ALIGNMENT,
                                                                        4 * MINIMUM_ALIGNMENT), tails=(0, 8, 12))),
        ("flag_disable_meta_commands", lambda sizes: Layout(flags=_META)),
        ("flag_allow_half_precision_computation", lambda sizes: Layout(flags=_HALF)),
        ("flag_descriptors_volatile", lambda sizes: Layout(flags=_VOLATILE, output="slice",
                                                            offsets=(0, MINIMUM_ALIGNMENT, MINIMUM_ALIGNMENT),
                                                            tails=(0, 4, 4))),
        ("graph", lambda sizes: Layout(graph=True)),
    ]


def _packed(sizes) -> list:
    out, step = [], 1
    for size in reversed(sizes):
        out.append(step)
        step *= size
    return out[::-1]


def laid_out(item, name: str, make):
    """The corpus item under one layout variant (None where the variant does not fit it)."""
    case, x = item.case, item.x
    if name == "input_broadcast":
        dim = next((d for d in range(case.rank) if d != case.norm_axis and case.shape[d] > 1), None)
        if dim is None:
            return None
        x = np.broadcast_to(np.take(x, [0], axis=dim), x.shape).copy()
        strides = _packed([1 if d == dim else s for d, s in enumerate(case.shape)])
        strides[dim] = 0
        layout = Layout(input="broadcast", strides=(tuple(strides), None, None))
    else:
        layout = make(case.shape if name.startswith("input") else case.out_shape)
    if layout.flags & _HALF and case.dtype == "float32":
        return None  # the flag leaves a float32 answer open (out.layout.half_precision): no unique answer
    if layout.graph and case.dtype not in ("float32", "float16"):
        return None
    rules = ("out.layout.same_answer", "out.layout.no_write_outside") + tuple(item.rules)
    return replace(item, name=f"{item.name}_layout_{file_slug(name)}", case=case.with_layout(layout), x=x,
                   patterns=item.patterns + ("layout", name), rules=rules)


def layout_items(items) -> list:
    """Laid-out copies of a few DirectML items: per variant, the first three that fit it."""
    dml = [i for i in items if i.case.family == "dml" and i.case.rank >= 2 and i.case.op == "TOP_K1"
           and i.case.dtype in ("float32", "float16", "int32")]
    out = []
    for index, name in enumerate(name for name, _ in _variants(1)):
        made = (laid_out(item, name, _variants(item.case.rank)[index][1]) for item in dml)
        out += [item for item in made if item is not None][:3]
    return out


def execution_entry(case, x) -> tuple[dict, str]:
    """(the file's "execution" member, the input buffer as base64) of a laid-out case."""
    from topkspec.directml.client.layout_call import input_buffer

    plan = buffer_plan(case)
    layout = case.layout
    execution = {"flags": ["DML_EXECUTION_FLAG_" + n for n in layout.flag_names], "graph": layout.graph,
                 "bindings": [{"Offset": p["offset"], "SizeInBytes": p["buffer"] - p["offset"], "BufferBytes": p["buffer"]}
                              for p in plan], "guard_byte": GUARD_BYTE}
    return execution, base64.b64encode(input_buffer(case, x, plan)).decode("ascii")


def entry_layout(entry) -> Layout:
    """The Layout a laid-out corpus file describes (its descriptor's Strides, its "execution")."""
    body, execution = entry["descriptor"]["Desc"], entry["execution"]
    strides = tuple(tuple(body[name]["Strides"]) if "Strides" in body[name] else None
                    for name in ("InputTensor", "OutputValueTensor", "OutputIndexTensor"))
    bindings = execution["bindings"]
    sizes = buffer_plan_totals(entry, strides)
    flags = 0
    for name in execution["flags"]:
        flags |= EXECUTION_FLAGS[name.replace("DML_EXECUTION_FLAG_", "")]
    patterns = entry.get("covers", {}).get("patterns", [])
    kind = patterns[-1] if patterns and "layout" in patterns else ""
    return Layout(input=kind[6:] if kind.startswith("input_") else "packed",
                  output="padded" if strides[1] else "slice" if any(bindings[t]["Offset"] or bindings[t]["BufferBytes"]
                                                                     != bindings[t]["Offset"] + sizes[t] for t in (1, 2))
                  else "packed", strides=strides,
                  offsets=tuple(b["Offset"] for b in bindings),
                  tails=tuple(b["BufferBytes"] - b["Offset"] - total for b, total in zip(bindings, sizes)),
                  flags=flags, graph=bool(execution["graph"]))


def buffer_plan_totals(entry, strides) -> list:
    """Each tensor's TotalTensorSizeInBytes: as written, or what its sizes imply."""
    from topkspec.spec.dtypes import canonical, itemsize
    from topkspec.spec.strides import total_size

    body = entry["descriptor"]["Desc"]
    out = []
    for name, tensor_strides in zip(("InputTensor", "OutputValueTensor", "OutputIndexTensor"), strides):
        tensor = body[name]
        size = itemsize(canonical(tensor["DataType"].replace("DML_TENSOR_DATA_TYPE_", "")))
        out.append(tensor.get("TotalTensorSizeInBytes", total_size(tensor["Sizes"], tensor_strides, size)))
    return out
