"""One folder per distinct failure: report.md, repro.py, case.json and inputs.npz."""
from __future__ import annotations

import json
import os
import re

import numpy as np

from topkspec.properties import failures
from topkspec.known import known_upstream
from topkspec.report.cite import citations, contract_citations
from topkspec.report.kinds import kind_of, kind_title
from topkspec.spec.kinds import OPEN
from topkspec.spec.queries import rule_statement
from topkspec.repro.calls import calls_for, expected_result
from topkspec.report.markdown import after_words, report_markdown
from topkspec.repro.program import repro_source
from topkspec.report.wording import decided_by, title as title_of
from topkspec.repro.plugin import program_folder
from topkspec.repro.writers import writer_for


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower()[:60] or "x"


def _storable(arr) -> np.ndarray:
    """numpy's own types as they are, ml_dtypes types (bfloat16, float8) as their bits."""
    arr = np.asarray(arr)
    return arr if arr.dtype.type.__module__ == "numpy" else arr.view(f"uint{arr.dtype.itemsize * 8}")


def _target(failure, target_spec):
    """The adapter the failure came from (rebuilt from its name; None when it cannot be)."""
    from topkspec.targets.base import Target
    from topkspec.targets.registry import get_target

    if isinstance(target_spec, Target):
        return target_spec
    try:
        return get_target(target_spec if isinstance(target_spec, str) else failure.target)
    except Exception:
        return None


def _call_dict(case) -> dict:
    """A call as case.json records it: the case, plus its ONNX form when it has one."""
    from topkspec.spec import dtypes
    from topkspec.targets.onnx_builder import ir_version_for, onnx_form

    data = case.to_dict()
    try:
        form = onnx_form(case)
        data["onnx"] = {"opset": form.opset, "elem": dtypes.ONNX_ELEM_TYPES.get(form.dtype),
                        "axis": form.axis, "largest": form.largest, "sorted": form.sorted,
                        "ir_version": ir_version_for(form.opset)}
    except Exception:
        pass  # no ONNX form (an invalid profile, say)
    return data


def _arrays(failure, calls) -> dict:
    arrays = {f"x{i}": _storable(x) for i, (_, x) in enumerate(calls)}
    arrays.update({f"earlier_x{i}": _storable(x) for i, (_, x) in enumerate(failure.prior, 1)})
    for i, out in enumerate(failure.outputs):
        if out is not None:
            arrays[f"actual_values_{i}"], arrays[f"actual_indices_{i}"] = _storable(out[0]), np.asarray(out[1])
    if calls:
        expected = expected_result(*calls[-1])
        if expected is not None:
            arrays["expected_values"], arrays["expected_indices"] = _storable(expected[0]), expected[1]
    return arrays


def _why(rule_id: str, quoted) -> str:
    """The short reason repro.py prints: the rule's sentence."""
    from topkspec import spec

    if quoted and quoted[0].get("note") and quoted[0]["quote"].startswith("(declared without"):
        return quoted[0]["note"]  # a promise declared as a reading, with no sentence: how it is read
    if quoted:
        return f'"{quoted[0]["quote"]}"'
    rule = spec.RULES.get(rule_id)
    return rule.statement if rule else rule_id


def quoted_rule(failure) -> str:
    """The rule whose sentence a report's repro quotes: the descriptor rule an invalid case was
    drawn to break when the failure is that it was not refused cleanly (a crash, a hang), else
    the rule it is filed under."""
    from topkspec.repro.program import broken_rules

    broken = broken_rules(failure)
    return broken[0] if broken and failure.rule == "out.invalid_rejected" else failure.rule


def rerun_command(result, spec_text: str) -> str:
    return (f"topkspec fuzz --target {spec_text} --spec {result.profile}"
            + (f" --seed {result.seed}" if result.seed is not None else "")
            + f" --max-examples {result.max_examples}")


_NUMBERED = re.compile(r"(\d+)-")


def _new_folder(directory: str, name: str) -> str:
    """A new folder `NN-name` under `directory`, NN one past the highest number there: a re-run
    into the same folder adds reports after the earlier ones and never writes into one of them
    (several processes writing at once each get a folder of their own)."""
    os.makedirs(directory, exist_ok=True)
    while True:
        taken = [int(m.group(1)) for m in map(_NUMBERED.match, os.listdir(directory)) if m]
        folder = os.path.join(directory, f"{max(taken, default=0) + 1:02d}-{name}")
        try:
            os.mkdir(folder)
            return folder
        except FileExistsError:
            continue  # another writer took that number first


def write_report(failure, result, directory: str, *, target_spec=None, timeout: float = 5.0) -> str:
    """Write the report folder of one failure under `directory` (numbered after those there);
    returns its path."""
    relation = failure.relation
    # A failure kept per value type (a runtime with no kernel for it) names the type: the rule
    # and class alone would give folders that differ by number only.
    per_type = f"-{slug(failure.key[3])}" if len(failure.key) > 3 else ""
    folder = _new_folder(directory, f"{slug(failure.rule)}-{slug(failure.failure_class)}{per_type}")
    calls = calls_for(failure, relation)
    np.savez(os.path.join(folder, "inputs.npz"), **_arrays(failure, calls))
    target = _target(failure, target_spec)
    spec_text = target_spec if isinstance(target_spec, str) else failure.target
    writer = writer_for(target)
    case = calls[0][0] if calls else failure.case
    stack = writer.stack(target, case, spec_text)
    upstream = known_upstream(failure, result, spec_text)
    kind = kind_of(failure, result)
    title = kind_title(kind, stack, failure, title_of(stack, failure) + after_words(failure)
                       + ("" if kind.id == OPEN else decided_by(rule_statement(failure.rule, result.profile,
                                                                                 result.contract))))
    cited = quoted_rule(failure)
    quoted = contract_citations(cited, failure.case, result.contract)
    rule_line = (f'{quoted[0]["title"]}, {quoted[0]["section"]}: {quoted[0]["quote"]}'
                 + (f' ({quoted[0]["note"]})' if quoted[0].get("note") else "") if quoted else f"Rule {cited}")
    if failure.failure_class == failures.TIMEOUT:  # no rule is in question
        rule_line = f"No rule of the spec: the run's time limit, {failure.violation.expected or 'an answer'}"
    with program_folder(folder):  # a path in repro.py is relative to its folder
        repro = repro_source(failure, relation, writer=writer, target=target, target_spec=spec_text, title=title,
                             rule_line=rule_line, why=_why(cited, quoted), timeout=timeout, contract=result.contract)
    document = {
        "title": title, "kind": kind.id, "argument": kind.argument, "target": failure.target, "target_spec": spec_text,
        "version": result.version, "profile": result.profile, "group": failure.group,
        "relation": relation, "case": failure.case.to_dict(),
        "drawn_case": (failure.drawn or failure.case).to_dict(), "calls": [_call_dict(c) for c, _ in calls],
        # the calls it fails after in the same process (earlier_x1, ... in inputs.npz)
        "earlier_calls": [_call_dict(c) for c, _ in failure.prior],
        "confirmed": failure.confirmation.describe() if failure.confirmation is not None else None,
        "violation": failure.violation.to_dict(), "seed": result.seed,
        "rule_status": rule_statement(failure.rule, result.profile, result.contract).status,
        "contract": result.contract.to_dict() if result.contract is not None else None,
        "known": upstream[0].describe() if upstream else None,  # with --known or not
        "known_source": upstream[1] if upstream else None,
        "invalid_rules": sorted(failure.draw.rules) if failure.draw is not None else None,
        "rules": {rule: citations(rule, failure.case) for rule in failure.violation.rules},
        "stack": {"runtime": stack.runtime, "operator": stack.operator, "device": stack.device,
                  "versions": stack.versions, "details": list(stack.details)},
    }
    with open(os.path.join(folder, "case.json"), "w") as handle:
        json.dump(document, handle, indent=2, default=str)
        handle.write("\n")
    with open(os.path.join(folder, "repro.py"), "w") as handle:
        handle.write(repro)
    with open(os.path.join(folder, "report.md"), "w") as handle:
        handle.write(report_markdown(failure, result, relation, title=title, stack=stack, repro=repro,
                                     rerun=rerun_command(result, spec_text), timeout=timeout, upstream=upstream,
                                     kind=kind))
    failure.report_dir = folder
    return folder


def write_reports(result, directory: str, *, target_spec=None, timeout: float = 5.0) -> list[str]:
    """One report folder per failure of the run, then per known deviation shrunk (--report-known)."""
    return [write_report(f, result, directory, target_spec=target_spec, timeout=timeout)
            for f in result.failures + result.known_failures]
