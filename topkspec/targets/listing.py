"""What `topkspec targets` prints: every known target, whether it runs here and why not,
its version, default profile, whether it validates, and its support matrix.

The matrix asks each available target's `supports()` about a tiny case per value type the
spec allows at each standard profile (ONNX opsets and DirectML feature levels).
"""
from __future__ import annotations

from topkspec.spec.case import Case
from topkspec.spec.profiles import STANDARD_PROFILES, parse_profile
from topkspec.targets.base import Rejected, Target, availability, version_text
from topkspec.targets.registry import list_targets


def tiny_case(profile: str, dtype: str) -> Case:
    """The smallest valid case of `dtype` at `profile`: a 4-D input of 3 along the last axis."""
    from topkspec import spec

    family = parse_profile(profile).family
    op = "TOP_K1" if family == "dml" else "TopK"
    index_dtype = spec.index_types(profile, op)[0]
    return Case(profile, op, dtype, (1, 1, 1, 3), 3 if family == "dml" else -1, 1,
                largest=True, sorted=True, index_dtype=index_dtype)


def support_matrix(target: Target, profiles=STANDARD_PROFILES) -> dict:
    """{profile: {"supported": [types], "unsupported": {type: reason}}} for the types each
    profile allows."""
    from topkspec import spec

    matrix = {}
    for profile in profiles:
        op = "TOP_K1" if parse_profile(profile).family == "dml" else "TopK"
        supported, unsupported = [], {}
        for dtype in spec.value_types(profile, op):
            case = tiny_case(profile, dtype)
            if target.index_dtype:
                case = case.with_(index_dtype=target.index_dtype)
            try:
                reason = target.supports(case)
            except Rejected as exc:  # the runtime refuses the type: a finding in a run, a gap here
                reason = f"refused by the runtime: {exc}"
            except Exception as exc:  # a broken supports() is shown, not raised
                reason = f"supports() raised {type(exc).__name__}: {exc}"
            if reason is None:
                supported.append(dtype)
            else:
                unsupported[dtype] = reason
        matrix[profile] = {"supported": supported, "unsupported": unsupported}
    return matrix


def describe_target(target: Target) -> dict:
    ok, reason = availability(target)
    return {
        "name": target.name,
        "available": ok,
        "reason": reason,
        "version": version_text(target),
        "default_profile": target.default_profile,
        "validates": target.validates,
        "validates_tables": target.validates_tables,
        "index_dtype": target.index_dtype,
        "support": support_matrix(target) if ok else {},
    }


def describe_targets(targets=None) -> list[dict]:
    rows = []
    for target in (list_targets() if targets is None else targets):
        try:
            rows.append(describe_target(target))
        finally:
            target.close()
    return rows


def _validates(row: dict) -> str:
    if not row["validates"]:
        return "no"
    tables = ", ".join(row["validates_tables"])
    return f"yes, and the {tables} tables" if tables else "yes (K and axis only)"


REASON_WIDTH = 140  # characters of a missing type's reason shown in the table (--json has all)


def missing_types(support: dict) -> dict:
    """{dtype: (profiles, first reason)}: each type a target lacks, once, with every profile it
    is missing at."""
    missing: dict = {}
    for profile, cell in support.items():
        for dtype, reason in cell["unsupported"].items():
            profiles, first = missing.get(dtype, ([], reason))
            missing[dtype] = (profiles + [profile], first)
    return missing


def format_targets(rows: list[dict]) -> str:
    """A readable table: one block per target, a line per profile of its matrix, and one line
    per type it lacks (with the profiles it lacks it at and why)."""
    lines = []
    for row in rows:
        state = "available" if row["available"] else "unavailable"
        lines.append(f"{row['name']}  [{state}]  {row['version']}")
        if not row["available"]:
            lines.append(f"    needs: {row['reason']}")
            continue
        lines.append(f"    default profile {row['default_profile']}; "
                     f"validates: {_validates(row)}; "
                     f"indices: {row['index_dtype'] or 'as the profile says'}")
        for profile, cell in row["support"].items():
            text = " ".join(cell["supported"]) or "-"
            lines.append(f"    {profile:<8} {text}")
        for dtype, (profiles, reason) in missing_types(row["support"]).items():
            first = reason.strip().splitlines()[0] if reason.strip() else "unsupported"
            if len(first) > REASON_WIDTH:
                first = first[:REASON_WIDTH - 1] + "…"
            lines.append(f"    no {dtype} ({', '.join(profiles)}): {first}")
    return "\n".join(lines)


def contract_text(contract) -> str:
    """A contract as `topkspec targets --contract NAME` prints it: what the runtime implements,
    then each point with its value, who says it, the sentence and its source."""
    from topkspec.spec.contracts import QUESTIONS

    what = {"onnx": "ONNX TopK", "dml": "DirectML TOP_K/TOP_K1", "own": "its own API"}[contract.implements]
    at = f" at {', '.join(contract.profiles)}" if contract.profiles else ""
    lines = [f"{contract.name}: implements {what}{at}"]
    for promise in contract.promises:
        who = promise.label if promise.quote else "not stated"
        lines.append(f"  {QUESTIONS[promise.point] + ':':<22} {promise.value.replace('_', ' '):<12} ({who})")
        if promise.quote:
            lines.append(f'      "{promise.quote}"')
        lines.append(f"      {promise.title}, {promise.url}" if promise.url else f"      {promise.title}")
        if promise.reason and promise.status != "documented":
            lines.append(f"      our reading: {promise.reason}")
    offered = contract.value_types
    if offered is not None:  # the value types it offers: no other is promised
        lines.append(f"  {'value types:':<22} {', '.join(offered.types)} (documents)")
        lines.append(f'      "{offered.quote}"')
        lines.append(f"      {offered.title}, {offered.url}" if offered.url else f"      {offered.title}")
    return "\n".join(lines)


#: The targets docs/runtimes.md shows contracts for, one row per runtime (the first name of each).
CONTRACT_ROWS = ("onnxruntime", "openvino", "tract", "iree", "onnx-reference", "onnx-checker", "directml",
                 "onnxruntime-directml", "torch", "torch-cuda", "jax", "jax-gpu", "tensorflow", "litert",
                 "keras-numpy", "paddle", "mindspore", "tinygrad")


def contract_table(names=CONTRACT_ROWS) -> str:
    """The contracts of `names` as a Markdown table, runtimes × points: each cell the promise,
    linked to the page it stands on, in italics where it is our reading of that page."""
    from topkspec.spec.contracts import POINTS, QUESTIONS
    from topkspec.targets.registry import get_target

    lines = ["| target | implements | " + " | ".join(QUESTIONS[p] for p in POINTS) + " |",
             "|---|---|" + "---|" * len(POINTS)]
    for name in names:
        contract = get_target(name).contract
        cells = []
        for promise in contract.promises:
            cell = f"[{promise.value.replace('_', ' ')}]({promise.url})" if promise.url else promise.value
            cells.append(cell if promise.status == "documented" else f"*{cell}*")
        what = {"onnx": "ONNX", "dml": "DirectML", "own": "own API"}[contract.implements]
        lines.append(f"| `{name}` | {what} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def contract_cell(contract, rule: str, point: str | None = None) -> str:
    """What a finding filed under `rule` breaks, by the runtime's contract, as findings/README.md's
    contract column says it: the page of the promise that decides it (`point`, else the rule's),
    linked, then 'promises: ...' ('leaves open: ...' where the contract leaves that point open);
    the runtime's page alone for a rule every TopK keeps (a value not in the input, a crash)."""
    from topkspec.spec.contracts import QUESTIONS, RULE_POINTS

    point = point or (None if rule == "out.nan.unspecified" else RULE_POINTS.get(rule))
    promise = contract.promise(point or "indices")
    link = f"[{promise.title}]({promise.url})"
    if point is None:
        return link
    said = f"{QUESTIONS[promise.point]} {promise.value.replace('_', ' ')}"
    if finding_left_open(contract, rule, point):
        return f"{link}; leaves open: {said}"
    return f"{link}; promises: {said}" + (" (our reading)" if promise.status != "documented" else "")


def finding_left_open(contract, rule: str, point: str | None = None) -> bool:
    """Whether `contract` leaves open what a finding under `rule` breaks (`point`: the point that
    decides it, where that is not the rule's own)."""
    from topkspec.spec.contracts import RULE_POINTS, unpromised_rules

    if point is not None and point != RULE_POINTS.get(rule):
        return contract.value(point) == "unspecified"
    return rule in unpromised_rules(contract)
