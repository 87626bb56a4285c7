"""`topkspec divergence`: what each runtime chooses where every document is silent, measured.

No document says where NaN goes, how subnormals compare, or (for some runtimes) which of two equal
values comes first; a runtime that chooses one way every time breaks nothing (spec.kinds: open),
but a person who moves a model from one runtime to another needs to know each one's choice. This
probes each target with a few fixed float32 inputs and prints one Markdown table: a row per
runtime (with its version), a column per open point, each cell what the runtime returned, read as
a choice. Each probe is made twice: a runtime whose two answers differ has made no choice, and its
cell says "varies". It reports what it measured, nothing more: a probe the target refuses or
cannot run says so in its cell.

    topkspec divergence --targets reference,onnxruntime,torch
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

_TINY = np.float32(1e-45)  # float32's smallest subnormal


def _nan(sign: float) -> np.float32:
    return np.copysign(np.float32(np.nan), np.float32(sign))


@dataclass(frozen=True)
class Probe:
    """One open point: its column, the input, K and direction, the contract point that may
    promise it (or None), and how to read the answer (values, indices) as a choice."""

    column: str
    x: tuple
    k: int
    largest: bool
    point: str | None
    read: Callable


def _nan_place(largest: bool):
    """Where NaN went among [1, NaN, 3] sorted whole: read as the value NaN was taken for."""
    def read(values, indices) -> str:
        values = np.asarray(values, dtype=np.float64)
        nan = np.flatnonzero(np.isnan(values))
        numbers = values[~np.isnan(values)].tolist()
        if len(nan) != 1 or sorted(numbers) != [1.0, 3.0]:
            return f"other: {_listed(values)}"
        if numbers != ([3.0, 1.0] if largest else [1.0, 3.0]):
            return f"numbers out of order: {_listed(values)}"
        at = int(nan[0])
        if at == 1:
            return f"between the numbers: {_listed(values)}"
        first = at == 0
        return "as the largest" if first == largest else "as the smallest"
    return read


def _signed_zeros(values, indices) -> str:
    """[-0.0, +0.0], K = 2, largest: index order if they tie, +0.0 first if ordered."""
    signs = np.signbit(np.asarray(values, dtype=np.float64)).tolist()
    if signs == [True, False]:
        return "tied (index order)"
    if signs == [False, True]:
        return "-0.0 below +0.0"
    return f"other: {_listed(values)}"


def _subnormals(values, indices) -> str:
    """[0, s, 0] with s float32's smallest subnormal, K = 1, largest: s if compared as a number."""
    value = float(np.asarray(values, dtype=np.float64).ravel()[0])
    if value == float(_TINY):
        return "compared as numbers (IEEE)"
    if value == 0.0:
        return "compared as zero"
    return f"other: {_listed(values)}"


def _ties(values, indices) -> str:
    """[2, 1, 2, 1, 2], K = 2, largest: the indices of the two 2s returned."""
    if indices is None:
        return "no indices returned"
    got = np.asarray(indices).ravel().tolist()
    if got == [0, 2]:
        return "index order"
    if got == [4, 2]:
        return "higher index first"
    return f"indices {got}"


PROBES = (
    Probe("NaN, largest", (1.0, _nan(1), 3.0), 3, True, "nan", _nan_place(True)),
    Probe("NaN, smallest", (1.0, _nan(1), 3.0), 3, False, "nan", _nan_place(False)),
    Probe("-NaN, largest", (1.0, _nan(-1), 3.0), 3, True, "nan", _nan_place(True)),
    Probe("-NaN, smallest", (1.0, _nan(-1), 3.0), 3, False, "nan", _nan_place(False)),
    Probe("signed zeros", (-0.0, 0.0), 2, True, "signed_zeros", _signed_zeros),
    Probe("subnormals", (0.0, _TINY, 0.0), 1, True, None, _subnormals),
    Probe("ties", (2.0, 1.0, 2.0, 1.0, 2.0), 2, True, "ties", _ties),
)


def _listed(values) -> str:
    return "[" + ", ".join(f"{v:g}" for v in np.asarray(values, dtype=np.float64).ravel()) + "]"


def _case(target, probe: Probe):
    from topkspec.spec import Case, parse_profile

    profile = parse_profile(target.default_profile)
    onnx = profile.family == "onnx"
    index = target.index_dtype or ("int64" if onnx else "uint32")
    return Case(profile.name, "TopK" if onnx else "TOP_K1", "float32", (len(probe.x),), 0, probe.k,
                largest=probe.largest, index_dtype=index)


def probe_cell(target, probe: Probe) -> str:
    """What `target` chose at one open point, in words ('refused: ...' when it would not say)."""
    from topkspec.errors import TargetCrashed, TargetHung
    from topkspec.targets.base import Rejected

    contract = target.contract
    if not probe.largest and contract.value("smallest") == "not_offered":
        return "no smallest K"
    case = _case(target, probe)
    x = np.array(probe.x, dtype=np.float32)
    try:
        reason = target.supports(case)
        if reason:
            return f"not run: {reason}"
        answers = [target.run(case, x) for _ in range(2)]  # the same call twice: a choice is made every time
    except Rejected as exc:
        return f"refused: {str(exc).splitlines()[0][:60]}"
    except TargetCrashed:
        return "crashed"
    except TargetHung:
        return "no answer in time"
    returned = contract.value("indices") != "not_returned"
    read = list(dict.fromkeys(probe.read(values, indices if returned else None) for values, indices in answers))
    cell = read[0] if len(read) == 1 else "varies: " + " / ".join(read)
    if probe.point is not None and contract.value(probe.point) not in ("unspecified",):
        cell += " †"  # its contract promises this point: a choice off the promise is a bug, not a divergence
    return cell


@dataclass
class Row:
    """One runtime's choices: its target name, version, and a cell per probe (or why it did not run)."""

    name: str
    version: str
    cells: list
    not_run: str = ""


def probe_target(name: str, *, timeout: float = 60.0) -> Row:
    """The row of the target `name`: every probe run on it, in a worker process for a native one."""
    from topkspec.errors import TargetCrashed, TargetHung, UsageError
    from topkspec.fuzz.resolve import resolve_target

    cannot = (UsageError, TargetCrashed, TargetHung)  # it cannot run here, or its worker does not start
    try:
        target = resolve_target(name, isolate=None, timeout=timeout)
    except cannot as exc:
        return Row(name, "", [], str(exc).splitlines()[0])
    try:
        version = target.version()
        cells = [probe_cell(target, probe) for probe in PROBES]
        if len(set(cells)) == 1 and cells[0].startswith("not run: "):  # no probe it can run
            return Row(name, version, [], cells[0][len("not run: "):])
        return Row(name, version, cells)
    except cannot as exc:
        return Row(name, "", [], str(exc).splitlines()[0])
    finally:
        target.close()


def row_line(row: Row) -> str:
    """The table line of one row: '| name | version | cell | ... |'."""
    return f"| {row.name} | {row.version} | " + " | ".join(row.cells) + " |"


def divergence_table(rows) -> str:
    """The Markdown table of `rows` (those that ran), with what its columns probe."""
    header = ["| runtime | version | " + " | ".join(p.column for p in PROBES) + " |",
              "|---|---|" + "---|" * len(PROBES)]
    lines = header + [row_line(row) for row in rows if not row.not_run]
    lines += [f"- `{row.name}`{f' ({row.version})' if row.version else ''}: not run here: {row.not_run}"
              for row in rows if row.not_run]
    return "\n".join(lines) + "\n"


def default_names() -> list[str]:
    """Every built-in target that computes a result (validators left out)."""
    from topkspec.targets.registry import BUILTIN_TARGETS

    return [name for name in BUILTIN_TARGETS if name != "onnx-checker" and "@" not in name]
