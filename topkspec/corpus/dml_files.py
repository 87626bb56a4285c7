"""DirectML cases as JSON, one file each: `dml/<name>.json`.

    {"name", "topkspec", "FeatureLevel",
     "descriptor": the spec's JSON form (DML_OPERATOR_DESC),
     "input": {"DataType", "Sizes", "base64": little-endian bytes, "values": [...] (up to 64)},
     "expected": {"outcome": "computed", "OutputValueTensor": {...}, "OutputIndexTensor": {...}}
              or {"outcome": "refused", "rules": [...], "level_bound": bool},
     "covers": {"rules": [...], "patterns": [...]}}

Numbers are exact in `base64`; `values` is for reading (non-finite floats as "inf", "-inf", "nan").
A refusal is expected of every descriptor here: each breaks the rules listed, and each can be
written as the C structs CreateOperator takes. `level_bound` marks a descriptor that is
invalid only at its FeatureLevel (a device of a higher level accepts it: CreateOperator takes
no feature level, so only a DirectML that stops at that level can refuse it).
"""
from __future__ import annotations

import base64
import copy
import json
import os

import numpy as np

from topkspec.corpus.valid import file_slug
from topkspec.spec import Case, descriptor, dtypes, parse_profile, validate

MAX_SHOWN = 64  # arrays up to this many elements also carry their values as JSON numbers
_BASE_SHAPE = (1, 1, 3, 4)


def _values(array: np.ndarray):
    flat = np.asarray(array).reshape(-1)
    if flat.size > MAX_SHOWN:
        return None
    if flat.dtype.kind in "iu":
        return [int(v) for v in flat]
    out = []
    for v in flat.astype(np.float64):
        out.append(float(v) if np.isfinite(v) else "nan" if np.isnan(v) else "inf" if v > 0 else "-inf")
    return out


def tensor_data(array: np.ndarray, data_type: str) -> dict:
    """A tensor's contents as the corpus stores them."""
    array = np.ascontiguousarray(array)
    data = {"DataType": data_type, "Sizes": list(array.shape),
            "base64": base64.b64encode(array.astype(array.dtype.newbyteorder("<")).tobytes()).decode("ascii")}
    shown = _values(array)
    if shown is not None:
        data["values"] = shown
    return data


def read_tensor(data: dict, dtype: str) -> np.ndarray:
    """The array a stored tensor holds (`dtype`: canonical name)."""
    raw = base64.b64decode(data["base64"])
    return np.frombuffer(raw, dtype=np.dtype(dtypes.numpy_dtype(dtype)).newbyteorder("<")).reshape(data["Sizes"]).copy()


def _input(item, body) -> dict:
    """The input as stored: the logical tensor, and for a laid-out case its whole bound buffer."""
    data = tensor_data(item.x, body["InputTensor"]["DataType"])
    if not item.case.layout.is_plain:
        from topkspec.corpus.dml_layouts import execution_entry

        data["buffer_base64"] = execution_entry(item.case, item.x)[1]
    return data


def valid_entry(item, values: np.ndarray, indices: np.ndarray, version: str) -> dict:
    desc = descriptor(item.case)
    body = desc["Desc"]
    return {
        "name": item.name, "topkspec": version, "FeatureLevel": desc["FeatureLevel"], "descriptor": desc,
        "input": _input(item, body),
        "expected": {"outcome": "computed",
                     "OutputValueTensor": tensor_data(values, body["OutputValueTensor"]["DataType"]),
                     "OutputIndexTensor": tensor_data(indices.astype(item.case.index_dtype),
                                                      body["OutputIndexTensor"]["DataType"])},
        "covers": {"rules": list(item.rules), "patterns": list(item.patterns)},
        **_execution(item),
    }


def _execution(item) -> dict:
    """A laid-out case's "execution" member (dml_layouts); nothing for a plain one."""
    if item.case.layout.is_plain:
        return {}
    from topkspec.corpus.dml_layouts import execution_entry

    execution, _ = execution_entry(item.case, item.x)
    return {"execution": execution}


# --- invalid descriptors: each a mutation of a small valid one, named by what it breaks ------

def _set(path, value):
    def mutate(desc):
        where = desc
        for key in path[:-1]:
            where = where[key]
        where[path[-1]] = value
    return mutate


def _sizes(**by_tensor):
    def mutate(desc):
        for tensor, sizes in by_tensor.items():
            desc["Desc"][tensor]["Sizes"] = list(sizes)
    return mutate


def _both(*mutations):
    def mutate(desc):
        for m in mutations:
            m(desc)
    return mutate


_OUT = ("OutputValueTensor", "OutputIndexTensor")
_D = "DML_TENSOR_DATA_TYPE_"

# rule -> [(how, mutation)]
MUTATIONS = {
    "dml.tensor.fields": [("an unknown DataType value", _set(("Desc", "InputTensor", "DataType"), 12))],
    "dml.tensor.sizes_positive": [("an input size of 0", _sizes(InputTensor=(1, 0, 3, 4), OutputValueTensor=(1, 0, 3, 2),
                                                                 OutputIndexTensor=(1, 0, 3, 2)))],
    "dml.rank.same": [("a 3-D value output", _sizes(OutputValueTensor=(1, 3, 2))),
                      ("5-D outputs", _sizes(OutputValueTensor=(1, 1, 1, 3, 2), OutputIndexTensor=(1, 1, 1, 3, 2)))],
    "dml.rank.supported": [("9 dimensions", _both(_sizes(InputTensor=(1,) * 5 + (1, 1, 3, 4), OutputValueTensor=(1,) * 5 + (1, 1, 3, 2),
                                                         OutputIndexTensor=(1,) * 5 + (1, 1, 3, 2)),
                                                  _set(("Desc", "Axis"), 8))),
                           ("5 dimensions", _both(_sizes(InputTensor=(1, 1, 1, 3, 4), OutputValueTensor=(1, 1, 1, 3, 2),
                                                         OutputIndexTensor=(1, 1, 1, 3, 2)), _set(("Desc", "Axis"), 4)))],
    "dml.dtype.value_supported": [("FLOAT64 values", _both(_set(("Desc", "InputTensor", "DataType"), _D + "FLOAT64"),
                                                           _set(("Desc", "OutputValueTensor", "DataType"), _D + "FLOAT64"))),
                                  ("INT64 values", _both(_set(("Desc", "InputTensor", "DataType"), _D + "INT64"),
                                                         _set(("Desc", "OutputValueTensor", "DataType"), _D + "INT64")))],
    "dml.dtype.index_supported": [("INT32 indices", _set(("Desc", "OutputIndexTensor", "DataType"), _D + "INT32")),
                                  ("FLOAT32 indices", _set(("Desc", "OutputIndexTensor", "DataType"), _D + "FLOAT32")),
                                  ("UINT64 indices", _set(("Desc", "OutputIndexTensor", "DataType"), _D + "UINT64"))],
    "dml.dtype.same": [("a FLOAT16 value output",
                        _set(("Desc", "OutputValueTensor", "DataType"), _D + "FLOAT16"))],
    "dml.axis.range": [("Axis equal to the rank", _set(("Desc", "Axis"), 4))],
    "dml.k.positive": [("K 0", _both(_set(("Desc", "K"), 0), _sizes(OutputValueTensor=(1, 1, 3, 0),
                                                                       OutputIndexTensor=(1, 1, 3, 0))))],
    "dml.k.max": [("K above the axis size", _both(_set(("Desc", "K"), 5), _sizes(OutputValueTensor=(1, 1, 3, 5),
                                                                                  OutputIndexTensor=(1, 1, 3, 5))))],
    "dml.direction.enum": [("AxisDirection 2", _set(("Desc", "AxisDirection"), 2))],
    "dml.shape.output_values": [("value output 3 wide at the axis", _sizes(OutputValueTensor=(1, 1, 3, 3)))],
    "dml.shape.output_indices": [("index output 3 wide at the axis", _sizes(OutputIndexTensor=(1, 1, 3, 3))),
                                 ("index output of another size off the axis", _sizes(OutputIndexTensor=(1, 1, 2, 2)))],
    "dml.tensor.total_size": [("TotalTensorSizeInBytes 4 on the input",
                               _set(("Desc", "InputTensor", "TotalTensorSizeInBytes"), 4))],
    "dml.tensor.alignment": [("GuaranteedBaseOffsetAlignment 3", _set(("Desc", "InputTensor", "GuaranteedBaseOffsetAlignment"), 3)),
                             ("GuaranteedBaseOffsetAlignment 24", _set(("Desc", "OutputIndexTensor", "GuaranteedBaseOffsetAlignment"), 24))],
    "dml.tensor.outputs_distinct": [("value output rows sharing an address",
                                     _set(("Desc", "OutputValueTensor", "Strides"), [0, 0, 0, 1])),
                                    ("index output rows and columns stepping by 1",
                                     _set(("Desc", "OutputIndexTensor", "Strides"), [6, 6, 1, 1]))],
    "dml.operator.available": [("the operator below its first feature level", _set(("FeatureLevel",), "DML_FEATURE_LEVEL_2_0"))],
}


def invalid_entries(profiles, version: str) -> list:
    """[entry] of broken descriptors for the DirectML profiles: per profile, operator, value
    type (FLOAT32, INT32) and mutation, each kept when it breaks its rule at the profile and can
    be written as CreateOperator's C structs."""
    from topkspec.directml.worker import protocol

    out, seen = [], set()
    for profile in profiles:
        prof = parse_profile(profile)
        if prof.family != "dml":
            continue
        for op in ("TOP_K1", "TOP_K"):
            for dtype in ("float32", "int32"):
                base_case = Case(prof.name, op, dtype, _BASE_SHAPE, 3, 2)
                base = descriptor(base_case)
                if op not in _ops(prof.name) or validate(base, prof.name):
                    continue  # no valid base to break here
                for rule, variants in MUTATIONS.items():
                    for how, mutate in variants:
                        desc = copy.deepcopy(base)
                        mutate(desc)
                        if op == "TOP_K" and rule == "dml.direction.enum":
                            continue
                        found = sorted({f.rule for f in validate(desc, prof.name)})
                        if rule not in found:
                            continue  # this mutation breaks nothing here (UINT64 indices at 5.0)
                        try:
                            protocol.encode_descriptor(desc)
                        except protocol.Inexpressible:
                            continue
                        key = json.dumps(desc, sort_keys=True)
                        if key in seen:
                            continue
                        seen.add(key)
                        level_bound = not _still_invalid(desc)
                        name = f"{prof.level_name}_{op.lower()}_{dtype}_invalid_{file_slug(rule)}_{file_slug(how)}"
                        out.append({
                            "name": name, "topkspec": version, "FeatureLevel": desc["FeatureLevel"],
                            "descriptor": desc,
                            "expected": {"outcome": "refused", "rules": found, "how": how,
                                         "level_bound": level_bound},
                            "covers": {"rules": found, "patterns": ["invalid"]},
                        })
    return out


def _ops(profile):
    from topkspec.spec import queries

    return queries.ops(profile)


def _still_invalid(desc) -> bool:
    """Whether the descriptor is invalid at the newest feature level too (not only at its own)."""
    newest = copy.deepcopy(desc)
    newest["FeatureLevel"] = "DML_FEATURE_LEVEL_6_4"
    return bool(validate(newest, "dml:6.4"))


def write_dml_case(root: str, entry: dict) -> str:
    path = os.path.join(root, f"{entry['name']}.json")
    with open(path, "w") as handle:
        handle.write(json.dumps(entry, indent=1, sort_keys=True) + "\n")
    return path
