"""Every TopK constraint as a rule: stable id, statement, sources, status, and its check.

Descriptor rules carry a `check`: a named check kind with parameters (the kinds are defined
in `checks.CHECK_KINDS` and exported with their meaning), so another validator can
re-implement them from the JSON export alone. Output rules have no check: the property
functions in `topkspec.properties` enforce them and name them by id.

Sources are citations (`citations.quote`): a public document, a section and the deciding
sentence quoted. Statuses: "documented" (the text says so), "interpretation" (the text is
ambiguous or silent and we chose; `reason` says why), "unspecified" (no guarantee;
properties must not assume one).
"""
from __future__ import annotations

from topkspec.spec.record import Record
from topkspec.spec.citations import BUFFER, K1, LEVELS, ONNX, TOPK, section_title
from topkspec.spec.layout_rules import LAYOUT_RULES
from topkspec.spec.tables import DOCUMENTS

# Rules whose breakage leaves nothing any TopK can compute (K or the axis out of range): every
# implementation that validates at all must refuse them, whatever tables it follows.
IMPOSSIBLE_RULES = frozenset({"dml.k.positive", "dml.k.max", "dml.axis.range",
                              "onnx.k.positive", "onnx.k.max", "onnx.axis.range"})

DOCUMENTED = "documented"
INTERPRETATION = "interpretation"
UNSPECIFIED = "unspecified"


_FIELDS = ("id", "statement", "sources", "status", "scope", "ops", "check", "requires", "reason", "strict_only",
           "lenient_only", "breakable_alone", "co_broken", "documented_from")


class Rule(Record):
    """One rule: an immutable record (see record.Record), with slots.

    sources: citations ({"doc", "section", "quote", ["versions"], ["note"]}, ...); scope: "dml",
    "onnx" (descriptor), "output" (results) or "lowering"; ops: the operators a descriptor rule
    applies to; check: a descriptor rule's `{"kind": ..., **params}`; requires: checked only when
    these rules hold (guards); reason: why, for interpretations; strict_only: active only under
    strict_doc; lenient_only: inactive under strict_doc; breakable_alone: False when no descriptor
    breaks this rule alone, `co_broken` then lists the other rules a minimal breaking descriptor
    also breaks (an output of the wrong size always differs from the other output too, so the
    older revision's same-Sizes rule goes with it); documented_from: for an interpretation that
    some spec versions state outright, the first profile of each family whose documents state
    it (("dml:1.0", "onnx:11")): at it and later ones of its family the rule is documented.
    """

    __slots__ = (*_FIELDS, "__weakref__")
    _fields = __match_args__ = _FIELDS

    def __init__(self, id: str, statement: str, sources: tuple, status: str, scope: str, ops: tuple = (),
                 check: dict | None = None, requires: tuple = (), reason: str = "", strict_only: bool = False,
                 lenient_only: bool = False, breakable_alone: bool = True, co_broken: tuple = (),
                 documented_from: tuple = ()):
        self._set(id, statement, sources, status, scope, ops, check, requires, reason, strict_only, lenient_only,
                  breakable_alone, co_broken, documented_from)

    def __str__(self) -> str:
        return self.id

    @property
    def source(self) -> str:
        """The sources as one line: 'title, section; title, section'."""
        return "; ".join(f"{DOCUMENTS[s['doc']]['title']}, {section_title(s)}" for s in self.sources)

    def sources_for(self, family: str, op: str | None = None, version: str | None = None) -> list:
        """The citations a report on one spec family quotes: that family's documents only, for the
        operator (DirectML) and the TopK version (ONNX) when given, when any match them."""
        from topkspec.spec.citations import applicable

        return applicable(self.sources, family, op=op, version=version)

    @property
    def observations(self) -> list:
        """What implementations were observed to do where they and this rule's documents
        differ (DirectML, by version: topkspec/spec/observations.json)."""
        from topkspec.spec.observations import observations_for
        return observations_for(self.id)

    def to_dict(self) -> dict:
        data = {
            "id": self.id,
            "statement": self.statement,
            "sources": [dict(s) for s in self.sources],
            "source": self.source,
            "status": self.status,
            "scope": self.scope,
            "ops": list(self.ops),
            "check": self.check,
            "requires": list(self.requires),
            "reason": self.reason,
            "strict_only": self.strict_only,
            "lenient_only": self.lenient_only,
            "breakable_alone": self.breakable_alone,
            "co_broken": list(self.co_broken),
            "documented_from": list(self.documented_from),
            "observations": self.observations,
        }
        return data


_BOTH = ("TOP_K", "TOP_K1")
_T3 = ("InputTensor", "OutputValueTensor", "OutputIndexTensor")

RULE_LIST = [
    # ---- DirectML descriptors -------------------------------------------------------
    Rule("dml.desc.fields",
         "The descriptor has every member of its operator's struct, each of the right JSON type, and no other.",
         (K1.SYNTAX, TOPK.SYNTAX), DOCUMENTED, "dml", _BOTH,
         check={"kind": "dml_fields"}),
    Rule("dml.tensor.fields",
         "Each tensor desc has DataType and Sizes (a list of non-negative integers); Strides, TotalTensorSizeInBytes, GuaranteedBaseOffsetAlignment and Flags are optional and nothing else is allowed.",
         (BUFFER.SYNTAX, BUFFER.STRIDES_OPTIONAL), DOCUMENTED, "dml", _BOTH,
         check={"kind": "dml_tensor_fields", "tensors": list(_T3)}, requires=("dml.desc.fields",)),
    Rule("dml.operator.available",
         "The operator exists at the feature level: TOP_K from DML_FEATURE_LEVEL_2_0, TOP_K1 from DML_FEATURE_LEVEL_2_1.",
         (K1.AVAILABILITY, TOPK.AVAILABILITY, LEVELS.CUMULATIVE), DOCUMENTED, "dml", _BOTH,
         check={"kind": "dml_operator_available", "table": "dml_support"}, requires=("dml.desc.fields",),
         reason="Each operator's page says when it was introduced: TOP_K 'in DML_FEATURE_LEVEL_2_0' (its oldest support table is 2_0 too), TOP_K1 in 2_1. Other sources suggest TOP_K is older: the DirectML feature level history lists no TOP_K among 2_0's additions, and DirectML.h declares DML_OPERATOR_TOP_K before its DML_TARGET_VERSION >= 0x2000 block, that is in DirectML 1.0 (feature level 1_0). We follow the operator's own page. DirectML itself cannot settle it: CreateOperator takes no feature level and judges by its device's (every release compared, from 1.5.1, accepts TOP_K)."),
    Rule("dml.tensor.sizes_positive",
         "Every size of InputTensor is at least 1 (the output sizes follow from it and K).",
         (BUFFER.SIZES,), DOCUMENTED, "dml", _BOTH,
         check={"kind": "sizes_min", "tensors": ["InputTensor"], "min": 1},
         requires=("dml.desc.fields", "dml.tensor.fields"),
         reason="The page: 'Specifying a size of zero in any dimension is invalid, and will result in an error.' Checked on InputTensor: the output sizes follow from it and K, which is at least 1."),
    Rule("dml.rank.same",
         "InputTensor, OutputIndexTensor and OutputValueTensor have the same DimensionCount.",
         (K1.SAME_RANK, TOPK.SAME_RANK), DOCUMENTED, "dml", _BOTH,
         check={"kind": "same_rank", "tensors": list(_T3)},
         requires=("dml.desc.fields", "dml.tensor.fields")),
    Rule("dml.rank.supported",
         "Each tensor's DimensionCount is one the support table allows at the feature level (4 at 2_1; 1 to 8 from 3_1).",
         (K1.SUPPORT_5_0, K1.SUPPORT_3_1, K1.SUPPORT_2_1, TOPK.SUPPORT, LEVELS.CUMULATIVE), DOCUMENTED, "dml", _BOTH,
         check={"kind": "rank_in_table", "tensors": list(_T3), "table": "dml_support"},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.operator.available")),
    Rule("dml.dtype.value_supported",
         "InputTensor and OutputValueTensor have a value type the support table allows at the feature level (INT64/UINT64 from 5_0; FLOAT64 never).",
         (K1.SUPPORT_5_0, K1.SUPPORT_3_1, K1.SUPPORT_2_1, TOPK.SUPPORT, LEVELS.CUMULATIVE), DOCUMENTED, "dml", _BOTH,
         check={"kind": "dtype_in_table", "tensors": ["InputTensor", "OutputValueTensor"],
                "table": "dml_support", "column": "value_types"},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.operator.available")),
    Rule("dml.dtype.index_supported",
         "OutputIndexTensor has an index type the support table allows (UINT32; UINT64 too from 5_0).",
         (K1.SUPPORT_5_0, K1.SUPPORT_3_1, K1.SUPPORT_2_1, TOPK.SUPPORT, LEVELS.CUMULATIVE), DOCUMENTED, "dml", _BOTH,
         check={"kind": "dtype_in_table", "tensors": ["OutputIndexTensor"],
                "table": "dml_support", "column": "index_types"},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.operator.available")),
    Rule("dml.dtype.same",
         "InputTensor and OutputValueTensor have the same DataType.",
         (K1.SAME_DTYPE, TOPK.SAME_DTYPE), DOCUMENTED, "dml", _BOTH,
         check={"kind": "same_dtype", "tensors": ["InputTensor", "OutputValueTensor"]},
         requires=("dml.desc.fields", "dml.tensor.fields")),
    Rule("dml.axis.range",
         "Axis is less than the DimensionCount of InputTensor.",
         (K1.AXIS, TOPK.AXIS), DOCUMENTED, "dml", _BOTH,
         check={"kind": "axis_below_rank", "tensor": "InputTensor"},
         requires=("dml.desc.fields", "dml.tensor.fields")),
    Rule("dml.k.positive",
         "K is greater than 0.",
         (K1.K, TOPK.K), DOCUMENTED, "dml", _BOTH,
         check={"kind": "k_min", "min": 1}, requires=("dml.desc.fields",)),
    Rule("dml.k.max",
         "K is at most the size of InputTensor along Axis.",
         (K1.K, TOPK.K), INTERPRETATION, "dml", _BOTH,
         check={"kind": "k_max_axis_size", "tensor": "InputTensor", "inclusive": True},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.axis.range"), lenient_only=True,
         reason="The text says 'less than' the axis size, but Microsoft's own code and ONNX Runtime's DirectML tests use K equal to the axis size, and ONNX allows it; strict_doc applies the literal text (dml.k.max_strict)."),
    Rule("dml.k.max_strict",
         "K is less than the size of InputTensor along Axis (the literal text; active under strict_doc).",
         (K1.K, TOPK.K), DOCUMENTED, "dml", _BOTH,
         check={"kind": "k_max_axis_size", "tensor": "InputTensor", "inclusive": False},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.axis.range"), strict_only=True),
    Rule("dml.direction.enum",
         "AxisDirection is DML_AXIS_DIRECTION_INCREASING (0) or DML_AXIS_DIRECTION_DECREASING (1).",
         (K1.DIRECTION_ENUM, K1.DIRECTION), DOCUMENTED, "dml", ("TOP_K1",),
         check={"kind": "enum", "field": "AxisDirection", "values": [0, 1]}, requires=("dml.desc.fields",)),
    Rule("dml.shape.output_values",
         "OutputValueTensor has the sizes of InputTensor except along Axis, where its size is K.",
         (K1.VALUE_SHAPE, TOPK.VALUE_SHAPE), DOCUMENTED, "dml", _BOTH,
         check={"kind": "output_sizes", "tensor": "OutputValueTensor", "input": "InputTensor"},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.rank.same", "dml.axis.range"),
         breakable_alone=False, co_broken=("dml.shape.outputs_same_sizes",)),
    Rule("dml.shape.output_indices",
         "OutputIndexTensor has the sizes of InputTensor except along Axis, where its size is K.",
         (K1.INDEX_SHAPE, TOPK.INDEX_SHAPE), DOCUMENTED, "dml", _BOTH,
         check={"kind": "output_sizes", "tensor": "OutputIndexTensor", "input": "InputTensor"},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.rank.same", "dml.axis.range"),
         breakable_alone=False, co_broken=("dml.shape.outputs_same_sizes",)),
    Rule("dml.shape.outputs_same_sizes",
         "OutputIndexTensor and OutputValueTensor have the same Sizes (stated by the older revision only; implied by the two output shape rules).",
         (K1.SAME_SIZES_2021,), DOCUMENTED, "dml", _BOTH,
         check={"kind": "same_sizes", "tensors": ["OutputValueTensor", "OutputIndexTensor"]},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.rank.same"),
         breakable_alone=False, co_broken=("dml.shape.output_values",)),
    Rule("dml.tensor.strides",
         "Strides, when given, has one entry per dimension.",
         (BUFFER.STRIDES,), DOCUMENTED, "dml", _BOTH,
         check={"kind": "strides_length", "tensors": list(_T3)},
         requires=("dml.desc.fields", "dml.tensor.fields")),
    Rule("dml.tensor.total_size",
         "TotalTensorSizeInBytes, when given, is at least the tensor's minimum implied size: (1 + sum((size-1)*stride)) elements, packed strides when none are given, rounded up to 4 bytes.",
         (BUFFER.TOTAL_SIZE,), DOCUMENTED, "dml", _BOTH,
         check={"kind": "total_size_min", "tensors": list(_T3), "round_to": 4},
         requires=("dml.desc.fields", "dml.tensor.fields", "dml.tensor.strides",
                   "dml.tensor.sizes_positive", "dml.dtype.value_supported", "dml.dtype.index_supported")),
    Rule("dml.tensor.alignment",
         "GuaranteedBaseOffsetAlignment, when given and nonzero, is a power of two at least as large as the element size of the tensor's DataType.",
         (BUFFER.ALIGNMENT, BUFFER.ALIGNMENT_16), DOCUMENTED, "dml", _BOTH,
         check={"kind": "alignment", "tensors": list(_T3)},
         requires=("dml.desc.fields", "dml.tensor.fields"),
         reason="The page: 'If specified, this value must be a power of two that is at least as large as the element size.' Its 'Buffer tensors always have a minimum alignment of 16 bytes' is about binding the buffer, not a bound on this member. DirectML 1.15.4 is stricter than the text: CreateOperator refuses every value below 16 (E_INVALIDARG), whatever the element size, and accepts powers of two from 16 (measured, recorded as an observation; no valid case the fuzzer draws sets this member)."),

    # ---- ONNX nodes ------------------------------------------------------------------
    Rule("onnx.desc.fields",
         "The node has op_type TopK, an integer opset of at least 1, X with dtype and shape (non-negative integers), k, and attributes as an object.",
         (ONNX.X, ONNX.K, ONNX.K_ATTRIBUTE), DOCUMENTED, "onnx", ("TopK",),
         check={"kind": "onnx_fields"}),
    Rule("onnx.attr.allowed",
         "Only the attributes the opset's version defines appear (axis and k at 1; axis at 10; axis, largest and sorted from 11).",
         tuple(ONNX.ATTRIBUTES.values()), DOCUMENTED, "onnx", ("TopK",),
         check={"kind": "onnx_attrs_allowed", "table": "onnx_versions"}, requires=("onnx.desc.fields",)),
    Rule("onnx.attr.k_matches",
         "At opset 1, k is the required attribute: when the attributes give k it equals the descriptor's k.",
         (ONNX.K_ATTRIBUTE,), DOCUMENTED, "onnx", ("TopK",),
         check={"kind": "onnx_k_attribute_matches", "table": "onnx_versions"},
         requires=("onnx.desc.fields", "onnx.attr.allowed")),
    Rule("onnx.dtype.T",
         "X has a type in the version's constraint T (float16/float/double at 1 and 10; every numeric type from 11; bfloat16 too from 24).",
         (ONNX.T_FLOAT, ONNX.T_11, ONNX.T_24), DOCUMENTED, "onnx", ("TopK",),
         check={"kind": "onnx_dtype_in_table", "table": "onnx_versions", "column": "T"},
         requires=("onnx.desc.fields",)),
    Rule("onnx.axis.range",
         "axis is in [-r, r-1] where r is the rank of X.",
         (ONNX.AXIS_11, ONNX.AXIS_1), INTERPRETATION, "onnx", ("TopK",),
         check={"kind": "signed_axis_in_range"}, requires=("onnx.desc.fields",),
         reason="TopK-11 (and 24) state it: 'Negative value means counting dimensions from the back. Accepted range is [-r, r-1]'. TopK-1 and TopK-10 say only 'Dimension on which to do the sort' with the default -1: no range, and no meaning for a negative axis beyond what that default implies. We hold them to TopK-11's range.",
         documented_from=("onnx:11",)),
    Rule("onnx.k.single",
         "K is a 1-D int64 tensor holding a single value (the JSON k is one integer or a one-element list; `K`, when given, is the input tensor as a model declares it).",
         (ONNX.K,), DOCUMENTED, "onnx", ("TopK",),
         check={"kind": "k_single"}, requires=("onnx.desc.fields",)),
    Rule("onnx.k.positive",
         "k is positive.",
         (ONNX.K, ONNX.K_ATTRIBUTE), INTERPRETATION, "onnx", ("TopK",),
         check={"kind": "k_min", "min": 1}, requires=("onnx.desc.fields", "onnx.k.single"),
         reason="TopK-10 and later state it: K is 'a single positive value'. TopK-1's attribute k is only the 'Number of top elements to retrieve', with no bound; we hold it to the same (k = 0 retrieves nothing).",
         documented_from=("onnx:10",)),
    Rule("onnx.k.max",
         "k is at most the size of X along axis.",
         (ONNX.VALUES, ONNX.K, ONNX.K_ATTRIBUTE), INTERPRETATION, "onnx", ("TopK",),
         check={"kind": "k_max_axis_size", "tensor": "X", "inclusive": True},
         requires=("onnx.desc.fields", "onnx.k.single", "onnx.axis.range"),
         reason="The text never bounds k above; outputs of size k taken from a sequence shorter than k cannot exist, and ONNX Runtime and the reference evaluator reject it."),
    Rule("onnx.attr.boolean",
         "largest and sorted are 0 or 1.",
         (ONNX.LARGEST_ATTR, ONNX.SORTED_ATTR, ONNX.LARGEST, ONNX.SORTED), INTERPRETATION, "onnx", ("TopK",),
         check={"kind": "onnx_bool_attrs", "attributes": ["largest", "sorted"], "values": [0, 1]},
         requires=("onnx.desc.fields", "onnx.attr.allowed"),
         reason="The attributes are INTs described as yes/no switches with default 1; any other value has no meaning in the text."),

    # ---- Output guarantees (enforced by topkspec.properties) ----------------------------
    Rule("out.shape",
         "Values and Indices have the input's shape with the axis dimension replaced by K.",
         (K1.VALUE_SHAPE, K1.INDEX_SHAPE, TOPK.VALUE_SHAPE, TOPK.INDEX_SHAPE, ONNX.VALUES, ONNX.INDICES), DOCUMENTED, "output"),
    Rule("out.dtype.values",
         "Values have the input's type.",
         (K1.SAME_DTYPE, TOPK.SAME_DTYPE, ONNX.T_FLOAT, ONNX.T_11, ONNX.T_24), DOCUMENTED, "output"),
    Rule("out.dtype.indices",
         "Indices have the index type: the OutputIndexTensor's DataType (UINT32/UINT64) for DirectML, int64 for ONNX.",
         (K1.SUPPORT_5_0, K1.SUPPORT_3_1, TOPK.SUPPORT, ONNX.I), DOCUMENTED, "output"),
    Rule("out.values.select",
         "The values are the K largest (DECREASING, largest=1) or K smallest (INCREASING, largest=0) of each sequence, as a multiset.",
         (K1.SELECT, K1.DIRECTION, TOPK.SUMMARY, ONNX.SUMMARY_11, ONNX.LARGEST, ONNX.SUMMARY_1), DOCUMENTED, "output"),
    Rule("out.order",
         "Values are sorted descending for DECREASING/largest=1 and ascending for INCREASING/largest=0 (ONNX: when sorted=1).",
         (K1.ORDER, TOPK.ORDER, ONNX.SORTED, ONNX.SUMMARY_1), INTERPRETATION, "output",
         reason="DirectML states it ('guaranteed to be sorted descending' or ascending by AxisDirection), and so does ONNX TopK-11 for sorted=1 ('the resulting k elements will be sorted'). TopK-1 and TopK-10 never say their output is sorted, only that of two equivalent values the lower index appears first; we hold them to sorted output, what TopK-11 made explicit with sorted's default of 1.",
         documented_from=("dml:1.0", "onnx:11")),
    Rule("out.ties.index_order",
         "Equal values come out in ascending index order, whatever the direction.",
         (K1.TIES, TOPK.TIES, ONNX.TIES), DOCUMENTED, "output"),
    Rule("out.ties.kth_place",
         "Among equal values competing for the last places of the top K, the lower indices are the ones selected.",
         (K1.TIES, TOPK.TIES, ONNX.TIES), INTERPRETATION, "output",
         reason="DirectML orders the tied elements that are in the top K ('the indices of both elements are included, and are guaranteed to be ordered by ascending element index') but never says which of several equal elements gets into the top K when only some fit. ONNX states it: the indices along the axis are 'a tiebreaker', so the lower index wins the place.",
         documented_from=("onnx:1",)),
    Rule("out.ties.signed_zero",
         "-0.0 and +0.0 compare equal (IEEE), so they tie and follow the tie rule.",
         (K1.TIES, TOPK.TIES, ONNX.TIES), INTERPRETATION, "output",
         reason="Neither text defines the comparison; IEEE equality is what both imply by 'the same value', and what comparison-based implementations do."),
    Rule("out.indices.base",
         "Indices count from 0 at the start of each sequence, not of the tensor.",
         (K1.INDEX_BASE, TOPK.INDEX_BASE, ONNX.ORIGINAL_INDICES), DOCUMENTED, "output"),
    Rule("out.indices.range_distinct",
         "Each sequence's indices lie in [0, axis size) and are distinct.",
         (K1.INDEX_BASE, TOPK.INDEX_BASE, ONNX.INDICES), INTERPRETATION, "output",
         reason="Both texts return the indices of selected elements of the sequence; an element selected twice or outside the sequence is no element of it."),
    Rule("out.values.gather",
         "Each value equals the input element at its index in the same sequence, bit for bit.",
         (K1.SUMMARY, TOPK.SUMMARY, ONNX.VALUES, ONNX.INDICES), DOCUMENTED, "output"),
    Rule("out.exact",
         "With NaN-free input, values and indices equal the reference result exactly, bit for bit (signed zeros included).",
         (K1.SELECT, K1.ORDER, K1.TIES, TOPK.ORDER, TOPK.TIES, ONNX.SORTED, ONNX.TIES), INTERPRETATION, "output",
         reason="Selection, order and the tie rule together fix one answer for NaN-free data; the values are copies of input elements, so no rounding is allowed."),
    Rule("out.nan.unspecified",
         "Where NaN is, neither text says how it orders; with NaN present only the policy-free guarantees hold: no crash, indices in range and distinct, values gathered from the input, and the non-NaN values returned are the top non-NaN values in order.",
         (K1.ORDER, TOPK.ORDER, ONNX.SUMMARY_11, ONNX.SUMMARY_1), INTERPRETATION, "output",
         reason="Neither DirectML nor ONNX defines an order for NaN, so where NaN goes (and how many NaNs are returned) is unspecified and no property assumes it. The rest is our reading, stated by neither text: the selection, order and gather rules still hold for what they can compare, so the non-NaN values returned are the top non-NaN values in order."),
    Rule("out.nan.order",
         "Where the runtime promises an order for NaN (its contract, or a run's --nan-order: largest, IEEE 754 totalOrder or smallest), values and indices with NaN present equal the reference under that order.",
         (K1.ORDER, TOPK.ORDER, ONNX.SUMMARY_11, ONNX.SUMMARY_1), INTERPRETATION, "output",
         reason="Neither DirectML nor ONNX orders NaN (out.nan.unspecified); a runtime that promises an order of its own, as numpy's and torch's sort order puts every NaN above every number, is held to that promise, which the report quotes. Where no order is promised this rule is not in force."),
    Rule("out.unsorted.set",
         "ONNX sorted=0: the order is undefined, so Values and Indices are compared as a set of (index, value) pairs per sequence.",
         (ONNX.UNSORTED,), DOCUMENTED, "output"),
    Rule("out.topk_equals_topk1",
         "DML_TOP_K gives the same result as DML_TOP_K1 with DML_AXIS_DIRECTION_DECREASING.",
         (K1.REMARKS,), DOCUMENTED, "output"),
    Rule("out.prefix",
         "For the same input, the result for a smaller K is a prefix of the result for a larger K.",
         (K1.ORDER, K1.TIES, TOPK.ORDER, TOPK.TIES, ONNX.SORTED, ONNX.TIES), INTERPRETATION, "output",
         reason="Follows from sorted output and the tie rule, which fix the whole order of each sequence. With NaN present each call may place NaN as it likes, so each result is held on its own to out.nan.unspecified, which makes its non-NaN values a prefix of the top non-NaN values in order: the relation then holds, and a result that breaks it is named as that rule's failure."),
    Rule("out.axis_moves",
         "Moving the axis of the input (a transpose) moves the result the same way.",
         (K1.SEQUENCE, TOPK.SEQUENCE, ONNX.AXIS_11, ONNX.AXIS_1), INTERPRETATION, "output",
         reason="Each sequence is treated on its own; where it lies in memory cannot change its result. With NaN present each call may place NaN as it likes, so each result is held on its own to out.nan.unspecified (which fixes what the relation would compare); with sorted=0 the order is undefined, so the (index, value) pairs are compared as a set."),
    Rule("out.deterministic",
         "The same input gives the same output, bit for bit, every time.",
         (K1.ORDER, K1.TIES, TOPK.ORDER, TOPK.TIES, ONNX.SORTED, ONNX.TIES), INTERPRETATION, "output",
         reason="The outputs are fully determined by the rules above, so any variation breaks one of them. Where the rules leave a choice (where NaN goes, the order under sorted=0) each call may choose anew, so only what they fix is compared: with NaN, each result is held on its own to out.nan.unspecified and the two must agree in shape and types."),
    # ---- Self-consistency: where the contract leaves a point open, two calls must agree ----
    Rule("self.batch",
         "A sequence gets the same answer alone and inside a batch, whatever other sequences stand beside it and at whichever position it stands.",
         (K1.SEQUENCE, TOPK.SEQUENCE, ONNX.AXIS_11), INTERPRETATION, "output",
         reason="Needs no document: the texts cited define a sequence and say each is treated on its own, but the rule stands without them, as two answers to one input cannot both be the runtime's choice. Where the contract leaves a point open (where NaN goes, which of tied values comes first, how subnormals compare) any answer it allows is accepted for each call, so both calls are compared position by position: values bit for bit (two NaNs of one sign match) and indices exactly. Checked where the answer is open: on input with NaN or subnormals, and on any input when the contract leaves ties or signed zeros open."),
    Rule("self.prefix",
         "With sorted output, the result for K-1 gives the same values as the first K-1 places of the result for K.",
         (K1.ORDER, TOPK.ORDER, ONNX.SORTED), INTERPRETATION, "output",
         reason="Needs no document: the texts cited say the output is sorted, but the rule stands without them, as a runtime whose choice for NaN or ties does not depend on K answers both calls alike. Where ties are open, tied values may come from other places of the input in the two calls, so only the values are compared: numbers by value (-0.0 equals 0.0, which tie), NaN by its sign. Checked on input with NaN or subnormals, and on any input when the contract leaves out.prefix open."),
    Rule("self.axis",
         "Moving the axis (a transpose) moves the result the same way, where the contract leaves the answer open too.",
         (K1.SEQUENCE, TOPK.SEQUENCE, ONNX.AXIS_11), INTERPRETATION, "output",
         reason="Needs no document: the sequences are the same whatever the layout, so a runtime that makes one choice for NaN and ties answers both calls alike. Compared after moving the axis back: values bit for bit (two NaNs of one sign match), indices exactly; with sorted=0, as sets of (index, value) pairs. Checked on input with NaN or subnormals, and on any input when the contract leaves out.axis_moves open."),
    Rule("self.k_input",
         "K compiled into the model as a constant and K given as an input give the same result.",
         (ONNX.K,), INTERPRETATION, "output",
         reason="Needs no document: ONNX's K is an input that may be a constant or not, and the runtime's answer cannot depend on which, as nothing else about the call differs. Compared position by position: values bit for bit (two NaNs of one sign match), indices exactly. Checked for targets whose adapter can pass K both ways (Target.k_forms), on every input."),
    Rule("self.repeat",
         "The same call repeated gives the same answer, bit for bit, where the contract leaves the answer open too.",
         (K1.ORDER, TOPK.ORDER, ONNX.SORTED), INTERPRETATION, "output",
         reason="Needs no document: a runtime that makes one choice for NaN and ties answers a repeated call alike. Compared bit for bit: values (NaN payloads included) and indices. Checked on input with NaN or subnormals, and on any input when the contract leaves out.deterministic open."),
    Rule("out.valid_accepted",
         "An implementation accepts every descriptor the spec allows at its profile.",
         (K1.SUPPORT_5_0, K1.SUPPORT_3_1, K1.SUPPORT_2_1, TOPK.SUPPORT, ONNX.T_FLOAT, ONNX.T_11, ONNX.T_24), INTERPRETATION, "output",
         reason="The support tables and type constraints list what an implementation must handle."),
    Rule("out.invalid_rejected",
         "An implementation that validates rejects a descriptor that breaks a rule, rather than returning a result.",
         (K1.K, K1.AXIS, TOPK.K, TOPK.AXIS, ONNX.K, ONNX.AXIS_11), INTERPRETATION, "output",
         reason="The texts state requirements on the caller; an implementation that checks them must refuse what breaks them rather than compute an answer the spec does not define."),

    # ---- Lowering ONNX TopK onto DML_TOP_K1 ---------------------------------------------
    Rule("lower.axis",
         "The ONNX axis is normalised to 0..r-1 (a negative axis counts from the back) to become Axis.",
         (ONNX.AXIS_11, K1.AXIS), DOCUMENTED, "lowering"),
    Rule("lower.direction",
         "largest=1 becomes DML_AXIS_DIRECTION_DECREASING and largest=0 DML_AXIS_DIRECTION_INCREASING (opsets 1 and 10 have no largest: DECREASING).",
         (ONNX.LARGEST, K1.DIRECTION), DOCUMENTED, "lowering"),
    Rule("lower.sorted",
         "sorted is not passed on: DML output is always sorted, which is a valid answer to sorted=0.",
         (ONNX.UNSORTED, K1.ORDER), INTERPRETATION, "lowering",
         reason="sorted=0 leaves the order undefined, so a sorted result satisfies it."),
    Rule("lower.indices",
         "DML writes UINT32 (or UINT64 from 5_0) indices, which the runtime widens to ONNX's int64.",
         (ONNX.I, K1.SUPPORT_5_0, K1.SUPPORT_3_1), INTERPRETATION, "lowering",
         reason="ONNX requires int64 indices and DML offers none; indices are non-negative and below 2**32 for any tensor DML accepts, so widening is exact."),
    Rule("lower.k_constant",
         "K is a UINT in the DML descriptor, so the ONNX K must be known when the operator is compiled (a constant or initializer).",
         (K1.SYNTAX, ONNX.K), DOCUMENTED, "lowering"),
    Rule("lower.dtype",
         "The ONNX value type must be one the DML table allows at the feature level (no double or bfloat16; int64/uint64 from 5_0), or the node cannot run on DirectML.",
         (K1.SUPPORT_5_0, K1.SUPPORT_3_1, ONNX.T_24), DOCUMENTED, "lowering"),
    Rule("lower.rank",
         "The rank must be one the DML table allows at the feature level (1 to 8 from 3_1); at 2_1 ranks below 4 are padded with leading 1s and larger ranks cannot run.",
         (ONNX.X, K1.SUPPORT_3_1, K1.SUPPORT_2_1), INTERPRETATION, "lowering",
         reason="Leading dimensions of size 1 change no sequence, so padding to 4-D is exact at 2_1."),
]

RULE_LIST += [Rule(**fields) for fields in LAYOUT_RULES]  # strides, bindings, flags, graphs (layout_rules)

RULES = {rule.id: rule for rule in RULE_LIST}


def rule(rule_id: str) -> Rule:
    return RULES[rule_id]
