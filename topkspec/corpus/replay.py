"""Replaying the corpus's DirectML cases through a target that takes DirectML descriptors
(`topkspec directml replay DIR/dml`): each valid case is computed and compared bit for bit,
each broken descriptor must be refused as written."""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from topkspec.corpus.dml_files import read_tensor
from topkspec.errors import UsageError

AS_STORED, NOT_AS_STORED, NOT_JUDGED = "as stored", "not as stored", "not judged"


@dataclass
class ReplayResult:
    verdicts: Counter = field(default_factory=Counter)
    mismatches: list = field(default_factory=list)  # (name, what differs)
    not_judged: Counter = field(default_factory=Counter)  # reason -> cases

    @property
    def exit_code(self) -> int:
        if self.mismatches:
            return 1
        return 0 if self.verdicts[AS_STORED] else 3

    def lines(self) -> list:
        out = [f"{self.verdicts[AS_STORED]} as stored, {self.verdicts[NOT_AS_STORED]} not as stored, "
               f"{self.verdicts[NOT_JUDGED]} not judged"]
        out += [f"  NOT AS STORED {name}: {what}" for name, what in self.mismatches]
        out += [f"  not judged ({n}): {reason}" for reason, n in self.not_judged.most_common()]
        return out


def case_files(folder: str) -> list:
    if not os.path.isdir(folder):
        raise UsageError(f"{folder}: not a folder (give the corpus's dml/ folder)")
    names = sorted(name for name in os.listdir(folder) if name.endswith(".json"))
    if not names:
        raise UsageError(f"{folder}: no .json cases in it")
    return [os.path.join(folder, name) for name in names]


def replay(target, folder: str, progress=None) -> ReplayResult:
    result = ReplayResult()
    for path in case_files(folder):
        try:
            with open(path) as handle:
                entry = json.load(handle)
            name, expected = entry["name"], entry["expected"]
        except (OSError, ValueError, KeyError) as exc:
            raise UsageError(f"{path}: not a corpus case: {exc}") from None
        verdict, what = (_refusal if expected["outcome"] == "refused" else _computation)(target, entry)
        result.verdicts[verdict] += 1
        if verdict == NOT_AS_STORED:
            result.mismatches.append((name, what))
        elif verdict == NOT_JUDGED:
            result.not_judged[what] += 1
        if progress is not None:
            progress(name, verdict)
    return result


def _refusal(target, entry) -> tuple:
    expected = entry["expected"]
    level = getattr(target, "feature_level", None)
    if expected.get("level_bound") and level:
        return NOT_JUDGED, ("invalid only below the device's feature level: CreateOperator takes no feature "
                            "level, so only a DirectML that stops there can refuse it")
    answer = target.check_descriptor(entry["descriptor"])
    if answer is None:
        return NOT_AS_STORED, "no C struct can hold the descriptor"
    if answer["accepted"]:
        return NOT_AS_STORED, f"accepted ({answer['detail']}), but it breaks {', '.join(expected['rules'])}"
    return AS_STORED, answer["detail"]


def _computation(target, entry) -> tuple:
    from topkspec import spec
    from topkspec.targets.base import Rejected

    from topkspec.corpus.dml_layouts import entry_layout

    case = spec.case_from_descriptor(entry["descriptor"])
    x = read_tensor(entry["input"], case.dtype)
    if "execution" in entry:  # laid out: strides, bindings, flags, graph (the target lays it out again)
        case = case.with_layout(entry_layout(entry))
    reason = target.supports(case)
    if reason:
        return NOT_JUDGED, reason
    try:
        values, indices = target.run(case, x)
    except Rejected as exc:
        return NOT_AS_STORED, f"refused a valid descriptor: {exc}"
    want = entry["expected"]
    want_values = read_tensor(want["OutputValueTensor"], case.dtype)
    want_indices = read_tensor(want["OutputIndexTensor"], case.index_dtype)
    for label, got, wanted in (("values", values, want_values), ("indices", indices, want_indices)):
        got = np.ascontiguousarray(got)
        if got.shape != wanted.shape or got.dtype != wanted.dtype:
            return NOT_AS_STORED, f"{label}: {got.dtype}{list(got.shape)} against {wanted.dtype}{list(wanted.shape)}"
        bits = f"u{got.itemsize}"  # bit for bit: -0.0 is not +0.0
        differ = np.flatnonzero(got.reshape(-1).view(bits) != np.ascontiguousarray(wanted).reshape(-1).view(bits))
        if differ.size:
            i = int(differ[0])
            return NOT_AS_STORED, (f"{label} differ at element {i}: expected {wanted.reshape(-1)[i]!r}, "
                                   f"got {got.reshape(-1)[i]!r}")
    kept = getattr(target, "last_output_buffers", lambda: None)() if "execution" in entry else None
    if kept is not None:
        from topkspec.spec.layouts import outside_mask

        for label, data, plan in (("values", kept.values, kept.plan[1]), ("indices", kept.indices, kept.plan[2])):
            raw = np.frombuffer(data, np.uint8)
            changed = np.flatnonzero(outside_mask(plan, raw.size) & (raw != kept.fill))
            if changed.size:
                return NOT_AS_STORED, f"{label}: byte {int(changed[0])} outside the output changed"
        return AS_STORED, "exact, guard bytes kept"
    return AS_STORED, "exact"
