"""The rules about how a DirectML TopK call may lay out its tensors and run: strides on each of
the three tensors, binding offsets, execution flags, the operator inside a graph, and what each
of them may change in the result. As data (fields of rules.Rule), with their citations; rules.py
makes them Rules. Standard library only.

Scopes: "dml" for a descriptor rule with a check (the validator runs it); "dml_call" for what a
call puts around the descriptor (bindings, flags, the graph) and what DirectML owes such a call,
which the layout group of a campaign judges (topkspec.properties.layouts).
"""
from __future__ import annotations

from topkspec.spec.citations import BUFFER, quote
from topkspec.spec.tables import (DML_BUFFER_BINDING_DOC, DML_COMPILE_GRAPH_DOC, DML_CONSTANTS_DOC,
                                  DML_EXECUTION_FLAGS_DOC, DML_STRIDES_DOC)


class STRIDES:
    LAYOUT = quote(DML_STRIDES_DOC, "Summary",
                   "The tensor's strides describe the physical memory layout of the tensor's elements.")
    BROADCAST = quote(DML_STRIDES_DOC, "Broadcasting with strides",
                      "In general, if the stride of a dimension is 0, then all elements in the lower-order "
                      "dimensions are repeated along the broadcasted dimension; for example, if the tensor is "
                      "NCHW and the C-stride is 0, then each channel has the same values along H and W.")
    OVERLAP = quote(DML_STRIDES_DOC, "Broadcasting with strides",
                    "If a tensor's buffer size (in elements) is smaller than the product of its logical "
                    "dimensions, then it follows that there must be some overlapping of elements.")
    PADDED = quote(DML_STRIDES_DOC, "Padding with strides",
                   "A tensor is said to be padded if its physical size is larger than the minimum size needed "
                   "to fit its elements.")
    NHWC = quote(DML_STRIDES_DOC, "DirectML buffer tensor descriptions",
                 "However, if the tensor data is stored in another layout, such as NHWC, then you need strides "
                 "in order to express the transformation from NCHW to that layout.")


class BINDING:
    OFFSET = quote(DML_BUFFER_BINDING_DOC, "Members: Offset",
                   "This offset must be aligned to a multiple of DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT or the "
                   "GuaranteedBaseOffsetAlignment supplied as part of the DML_BUFFER_TENSOR_DESC.")
    RANGE = quote(DML_BUFFER_BINDING_DOC, "Members: Buffer",
                  "The resource must have dimension D3D12_RESOURCE_DIMENSION_BUFFER, and the range described by "
                  "this struct must lie within the bounds of the buffer.")
    MINIMUM = quote(DML_CONSTANTS_DOC, "DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT",
                    "Buffer tensors have a minimum base address alignment requirement of 16 bytes.")


class FLAGS:
    HALF = quote(DML_EXECUTION_FLAGS_DOC, "Constants: DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION",
                 "Allows DirectML to perform computation using half-precision floating-point (FP16), if "
                 "supported by the hardware device.")
    META = quote(DML_EXECUTION_FLAGS_DOC, "Constants: DML_EXECUTION_FLAG_DISABLE_META_COMMANDS",
                 "Forces DirectML execute the operator using DirectCompute instead of meta commands. DirectML "
                 "uses meta commands by default, if available.")
    VOLATILE = quote(DML_EXECUTION_FLAGS_DOC, "Constants: DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE",
                     "Allows changes to bindings after an operator's execution has been recorded in a command "
                     "list, but before it has been submitted to the command queue.")
    GRAPH = quote(DML_COMPILE_GRAPH_DOC, "Summary",
                  "Compiles a graph of DirectML operators into an object that can be dispatched to the GPU.")


_T2 = ["OutputValueTensor", "OutputIndexTensor"]
_BOTH = ("TOP_K", "TOP_K1")
INTERPRETATION, DOCUMENTED = "interpretation", "documented"

#: The fields of each rule (rules.Rule's arguments), in the spec's order after the others.
LAYOUT_RULES = (
    dict(id="dml.tensor.outputs_distinct",
         statement="The Strides of OutputValueTensor and OutputIndexTensor give every element of each output its own address: no stride of 0 along a dimension of size above 1, no two elements at one offset.",
         sources=(STRIDES.OVERLAP, STRIDES.BROADCAST, BUFFER.STRIDES_OPTIONAL), status=INTERPRETATION, scope="dml",
         ops=_BOTH, check={"kind": "outputs_distinct", "tensors": _T2},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.tensor.strides"),
         reason="DirectML's strides page says a tensor whose buffer is smaller than the product of its sizes has overlapping elements and calls that broadcasting, which it describes for data read: each element of a broadcast dimension repeats the same values. Nothing in DirectML's text lets an output overlap, nor says which of two writes to one address would stand, so an output whose elements share an address has no defined result: our reading is that such a descriptor is invalid. Only the outputs: on the input a stride of 0 is the documented broadcast. DirectML agrees: 1.5.1, 1.9.0, 1.13.1 and 1.15.4 refuse at CreateOperator (E_INVALIDARG, measured under Wine on lavapipe) an output with a stride of 0 and one whose rows and columns both step by 1; they accept padded outputs."),
    dict(id="dml.call.input_strides",
         statement="InputTensor may take any Strides whose implied size fits its TotalTensorSizeInBytes: a stride of 0 broadcasts (the elements repeat along that dimension), a permutation of the packed strides reads a transposed view such as NHWC, and strides above the packed ones read padded rows. TopK's sequences are the logical elements those strides address.",
         sources=(STRIDES.LAYOUT, STRIDES.BROADCAST, STRIDES.NHWC, STRIDES.PADDED, BUFFER.TOTAL_SIZE),
         status=INTERPRETATION, scope="dml_call", ops=_BOTH,
         reason="The strides page describes broadcast, transposed and padded layouts for DirectML's buffer tensors, and neither TopK page restricts the strides of its InputTensor; that each of them is valid for TopK's input in particular is our reading of that silence. DirectML 1.9.0, 1.13.1 and 1.15.4 accept and compute each under Wine on lavapipe (strides [6, 6, 1, 2], [0, 0, 0, 1] and [8, 8, 4, 1] on sizes [1, 1, 2, 3]), alone and in a graph, with every flag."),
    dict(id="dml.call.output_strides",
         statement="OutputValueTensor and OutputIndexTensor may take padded Strides (any that keep rule dml.tensor.outputs_distinct) and may be bound inside a larger buffer; each output element is written at the address its strides give.",
         sources=(STRIDES.LAYOUT, STRIDES.PADDED, BINDING.RANGE), status=INTERPRETATION, scope="dml_call", ops=_BOTH,
         reason="The strides page describes padded layouts for DirectML's buffer tensors, inputs and outputs alike, and DML_BUFFER_BINDING binds any range of a buffer; neither TopK page restricts its outputs' strides. That a padded or offset output is valid for TopK is our reading of that silence."),
    dict(id="dml.call.binding_offset",
         statement="Each buffer binding's Offset is a multiple of DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT (16 bytes), or of the tensor's GuaranteedBaseOffsetAlignment when it sets one, and the bound range lies inside the buffer and holds TotalTensorSizeInBytes.",
         sources=(BINDING.OFFSET, BINDING.MINIMUM, BINDING.RANGE, BUFFER.ALIGNMENT_16), status=DOCUMENTED,
         scope="dml_call", ops=_BOTH),
    dict(id="dml.call.execution_flags",
         statement="DML_EXECUTION_FLAG_DISABLE_META_COMMANDS and DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE change how DirectML runs the operator, never what it computes; compiled inside a graph (IDMLDevice1::CompileGraph) the operator computes what it computes alone.",
         sources=(FLAGS.META, FLAGS.VOLATILE, FLAGS.GRAPH), status=INTERPRETATION, scope="dml_call", ops=_BOTH,
         reason="The flags' page says what each changes: the path (DirectCompute instead of a driver's meta commands) and when bindings may change. Neither says a result may differ, and TopK's result is fixed by its rules, so every output rule holds under them as without them. A graph compiles the same operators; an identity before and after the TopK changes no element."),
    dict(id="out.layout.same_answer",
         statement="Under every valid layout (the input's and the outputs' strides, binding offsets, guard bytes), execution flag but ALLOW_HALF_PRECISION_COMPUTATION on floating-point values, and compiled alone or in a graph, the values and indices equal those of the packed case, bit for bit.",
         sources=(STRIDES.LAYOUT, STRIDES.NHWC, FLAGS.META, FLAGS.GRAPH), status=INTERPRETATION, scope="dml_call", ops=_BOTH,
         reason="Strides say where the elements lie, not what they are (the strides page), and the flags and the graph change how DirectML runs the operator (dml.call.execution_flags): the sequences are the same, so the answer is. Where the answer is open (NaN present) both calls are held to the NaN rule on their own and must agree in shape and types."),
    dict(id="out.layout.no_write_outside",
         statement="Every byte of a bound output buffer that is not one of the output's elements (before the binding's Offset, in the gaps of padded strides, after the last element) is the same after the call as before it.",
         sources=(BINDING.RANGE, STRIDES.PADDED, STRIDES.LAYOUT), status=INTERPRETATION, scope="dml_call", ops=_BOTH,
         reason="An operator writes its output tensor: the elements its sizes and strides address in the bound range. Padding and the rest of the buffer belong to the application (the strides page calls padding extra space, and a binding names a range of a larger buffer). No DirectML text says so in words: a write elsewhere corrupts what the application keeps there."),
    dict(id="out.layout.half_precision",
         statement="With DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION a FLOAT32 TopK may compare its values rounded to FLOAT16: indices stay in range and distinct, each value is the input element at its index (exact, or rounded to FLOAT16), and the values rounded to FLOAT16 are the top K of the input rounded to FLOAT16, in order; among elements equal after rounding any order is allowed. Other value types are computed as without the flag.",
         sources=(FLAGS.HALF,), status=INTERPRETATION, scope="dml_call", ops=_BOTH,
         reason="The page allows 'computation using half-precision floating-point (FP16)' and says no more. TopK computes nothing but comparisons and copies, so the most the flag can change is the comparisons (made on FLOAT16 roundings) and the copies (through FLOAT16). Our reading allows both and no more: any answer that is right for the input rounded to FLOAT16 passes, so no implementation is failed for what the flag allows. FLOAT16 values are already half precision and integers are not floating-point, so for them the flag changes nothing."),
)
