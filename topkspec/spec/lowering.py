"""Lowering: the DML_TOP_K1 descriptor a DirectML-backed runtime must build for an ONNX TopK node.

Rules lower.*: the axis is normalised, `largest` becomes AxisDirection, `sorted` is dropped
(sorted output answers sorted=0 too), indices come out UINT32 and are widened to int64, K must
be a compile-time constant, and the value type and rank must be in the DML table at the level
(ranks below 4 are padded with leading 1s at 2_1).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from topkspec.spec import dtypes
from topkspec.spec.checks import support_row
from topkspec.spec.descriptors import case_from_descriptor
from topkspec.spec.profiles import dml_profile
from topkspec.spec.rules import RULES
from topkspec.spec.tables import DML_FEATURE_LEVELS, DML_SUPPORT
from topkspec.spec.validate import Finding, validate

_TABLES = {"dml_support": DML_SUPPORT, "dml_feature_levels": DML_FEATURE_LEVELS}


@dataclass
class Lowering:
    descriptor: dict | None  # the DML_TOP_K1 descriptor, or None when it cannot be built
    violations: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the lowering did (padding, widening)

    @property
    def ok(self) -> bool:
        return self.descriptor is not None


def _finding(rule_id: str, message: str) -> Finding:
    rule = RULES[rule_id]
    return Finding(rule_id, message, rule.source, rule.status, rule.sources)


def lower_onnx_to_dml(onnx_desc: dict, level="6_4", *, strict_doc: bool = False) -> Lowering:
    """Map an ONNX TopK node (the JSON of docs/spec.md) to the DML_TOP_K1 descriptor at `level`, or report
    the rules that stop it: the node's own ONNX violations, or lower.dtype / lower.rank."""
    onnx_findings = validate(onnx_desc)
    if onnx_findings:
        return Lowering(None, onnx_findings)
    if isinstance(onnx_desc, dict) and "k" in onnx_desc and onnx_desc["k"] is None:
        return Lowering(None, [_finding("lower.k_constant", "k is unknown (null): DML_TOP_K1 takes K when the "
                                                            "operator is created")])
    case = case_from_descriptor(onnx_desc)
    prof = dml_profile(level)
    row = support_row(_TABLES, "TOP_K1", prof.level)
    if row is None:
        return Lowering(None, [_finding("dml.operator.available",
                                        f"DML_OPERATOR_TOP_K1 does not exist at DML_FEATURE_LEVEL_{prof.level_name}")])
    violations, notes = [], []
    dml_type = case.dtype.upper()
    if dml_type not in row["value_types"]:
        violations.append(_finding("lower.dtype", f"{case.dtype} has no DirectML TOP_K1 form at "
                                   f"DML_FEATURE_LEVEL_{prof.level_name} (supported: {', '.join(row['value_types'])})"))
    shape, axis = list(case.shape), case.norm_axis
    if len(shape) not in row["ranks"]:
        if len(shape) < min(row["ranks"]):
            pad = min(row["ranks"]) - len(shape)
            shape, axis = [1] * pad + shape, axis + pad
            notes.append(f"rank {case.rank} padded with {pad} leading 1s to {len(shape)}-D (lower.rank)")
        else:
            violations.append(_finding("lower.rank", f"rank {case.rank} is more than DML_TOP_K1 supports at "
                                       f"DML_FEATURE_LEVEL_{prof.level_name} ({row['ranks']})"))
    if violations:
        return Lowering(None, violations, notes)
    out = list(shape)
    out[axis] = case.k
    index_type = "UINT32"
    notes.append("sorted is not passed on (lower.sorted); UINT32 indices are widened to int64 (lower.indices)")
    desc = {
        "Type": "DML_OPERATOR_TOP_K1",
        "FeatureLevel": "DML_FEATURE_LEVEL_" + prof.level_name,
        "Desc": {
            "InputTensor": {"DataType": "DML_TENSOR_DATA_TYPE_" + dml_type, "Sizes": shape},
            "OutputValueTensor": {"DataType": "DML_TENSOR_DATA_TYPE_" + dml_type, "Sizes": out},
            "OutputIndexTensor": {"DataType": "DML_TENSOR_DATA_TYPE_" + index_type, "Sizes": out},
            "Axis": axis,
            "K": case.k,
            "AxisDirection": "DML_AXIS_DIRECTION_" + ("DECREASING" if case.largest else "INCREASING"),
        },
    }
    dml_findings = validate(desc, strict_doc=strict_doc)
    if dml_findings:
        return Lowering(None, dml_findings, notes)
    return Lowering(desc, [], notes)


def lowered_dtype(onnx_dtype: str) -> str:
    """DirectML data type name for an ONNX value type (same canonical name, upper case)."""
    return dtypes.canonical(onnx_dtype).upper()
