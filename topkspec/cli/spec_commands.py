"""The `topkspec spec` and `topkspec validate` commands.

validate reads a descriptor (the JSON of docs/spec.md), a JSON list of them, or an .onnx model
(each TopK node is checked, subgraphs included), and prints {"valid": ..., "violations": [{"rule",
"message", "source", "status", "citations"}, ...]} (and "not_checked" where a value is unknown).
The exit code is a sum: 1 when a descriptor breaks a rule, 2 when one is malformed (a list item,
a model's node: each gets its own one-line error, the others are still judged), so 3 is both;
an input that cannot be read at all is 2 with nothing on stdout.
"""
from __future__ import annotations

import json
import os
import sys

from topkspec.errors import InputError, UsageError
from topkspec.spec.descriptors import DescriptorError
from topkspec.spec.export import export
from topkspec.spec.profiles import ProfileError, parse_profile
from topkspec.spec.validate import judge


def add_spec_arguments(parser) -> None:
    parser.add_argument("--indent", type=int, default=2, help="JSON indent (0 for one line)")


def add_validate_arguments(parser) -> None:
    parser.epilog = ("exit codes: 0 valid; 1 a descriptor breaks a rule; 2 the input cannot be read, or a "
                     "descriptor (a list item, a model's TopK node) is malformed; 3 both 1 and 2")
    parser.add_argument("file", help="descriptor JSON file, an .onnx model, or - for standard input")
    parser.add_argument("--spec", dest="profile", default=None,
                        help="judge by this profile (dml:3.1, onnx:11, ...): for descriptors that name no "
                             "version; one whose own FeatureLevel or opset names another is an error")
    parser.add_argument("--strict-doc", action="store_true",
                        help="apply the literal DirectML text: K must be less than the axis size")
    parser.add_argument("--against", default=None, metavar="TARGET",
                        help="also give each descriptor to TARGET (e.g. directml) and add its verdict as \"against\"")


def cmd_spec(args, out=None) -> int:
    out = out or sys.stdout
    indent = getattr(args, "indent", 2) or None
    out.write(json.dumps(export(), indent=indent) + "\n")
    return 0


def _read(path: str):
    """(kind, content): kind 'onnx' with bytes, or 'json' with the parsed document."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                raw = handle.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if path.endswith(".onnx"):
        return "onnx", raw
    try:
        return "json", json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text (give an .onnx model a .onnx name)") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"{path} is nested too deeply to be a TopK descriptor") from None


def _disagreement(desc, profile) -> str | None:
    """Why a descriptor's own FeatureLevel or opset disagrees with --spec, or None."""
    from topkspec.spec.descriptors import own_profile

    if type(desc) is not dict or ("Type" in desc and "FeatureLevel" not in desc):
        return None
    try:
        own = own_profile(desc)
    except (DescriptorError, ProfileError):
        return None  # the validator says what is wrong with it
    wanted = parse_profile(profile)
    if own is None or own.family != wanted.family or own.name == wanted.name:
        return None
    field = "FeatureLevel" if own.family == "dml" else "opset"
    return (f"the descriptor's {field} names {own.name}, --spec names {wanted.name}: "
            f"judge it by one (drop --spec, or the descriptor's {field})")


def _verdict(desc, profile, strict_doc, against=None) -> dict:
    if profile is not None:
        why = _disagreement(desc, profile)
        if why is not None:
            raise DescriptorError(why)
    verdict = judge(desc, profile, strict_doc=strict_doc)
    result = {"valid": verdict.valid, "violations": [f.to_dict() for f in verdict.findings]}
    if verdict.not_checked:
        result["not_checked"] = verdict.not_checked
    if against is not None:
        from topkspec.targets.verdict import target_verdict
        result["against"] = target_verdict(against, desc, profile)
    return result


def _each(descs, label, profile, strict_doc, against) -> tuple[list, list]:
    """(results, errors): a result per descriptor ({"error": ...} for a malformed one), and
    [{label: index or name, "error"}] for the malformed ones."""
    results, errors = [], []
    for where, desc in descs:
        try:
            results.append(_verdict(desc, profile, strict_doc, against))
        except (DescriptorError, ProfileError, InputError) as exc:
            results.append({"valid": None, "error": str(exc)})
            errors.append({label: where, "error": str(exc)})
    return results, errors


def validate_document(kind: str, content, *, profile=None, strict_doc=False, against=None, base_dir=None) -> dict:
    """The validate command's result for one input (raises InputError, DescriptorError,
    ProfileError for an input that cannot be judged at all). A list's malformed items and a
    model's unjudgeable nodes are in "errors", each with its index or node."""
    if kind == "onnx":
        from topkspec.spec.onnx_reader import topk_nodes

        nodes = topk_nodes(content, base_dir=base_dir)
        readable = [n for n in nodes if n.error is None]
        if not readable:  # nothing of the model can be judged: it is unreadable, one line
            more = f" (and {len(nodes) - 1} more TopK nodes it cannot read)" if len(nodes) > 1 else ""
            raise InputError(f"{nodes[0].location}: {nodes[0].error}{more}")
        judged, errors = _each([(n.location, n.descriptor) for n in readable], "node", profile, strict_doc, against)
        by_node = dict(zip((n.location for n in readable), judged))
        results = []
        for node in nodes:
            if node.error is not None:
                errors.append({"node": node.location, "error": node.error})
            results.append(by_node.get(node.location) or {"valid": None, "error": node.error})
        entries = []
        for node, result in zip(nodes, results):
            entry = {"node": node.location, "descriptor": node.descriptor, **result}
            if node.notes:
                entry["notes"] = node.notes
            entries.append(entry)
        return _summary(entries, errors, "node", "nodes")
    if isinstance(content, list):
        if not content:
            raise InputError("an empty array holds no descriptor to validate (give one descriptor object, "
                             "or an array of them)")
        results, errors = _each(list(enumerate(content)), "item", profile, strict_doc, against)
        return _summary(results, errors, "item", "items")
    return _verdict(content, profile, strict_doc, against)


def _summary(entries, errors, label, key) -> dict:
    result = {"valid": not errors and all(e["valid"] for e in entries),
              "violations": [dict(v, **{label: entry[label] if label == "node" else i})
                             for i, entry in enumerate(entries) for v in entry.get("violations", ())],
              key: entries}
    if errors:
        result["errors"] = errors
    return result


def exit_code(result) -> int:
    """1 when a descriptor breaks a rule, plus 2 when one is malformed."""
    return (1 if result["violations"] else 0) + (2 if result.get("errors") else 0)


def _against(name):
    """The target --against names, available here, in a worker process when it runs native
    code (as `fuzz` runs it), so a crash or a hang is a verdict, not the end of the command
    (raises InputError when it cannot be had)."""
    if name is None:
        return None
    from topkspec.targets.isolation import DEFAULT_TIMEOUT
    from topkspec.fuzz.resolve import resolve_target

    try:
        return resolve_target(name, isolate=None, timeout=DEFAULT_TIMEOUT)
    except ValueError as exc:
        raise InputError(f"--against {name}: {exc}") from None


def cmd_validate(args, out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        if args.profile is not None:
            parse_profile(args.profile)
        kind, content = _read(args.file)
        against = _against(getattr(args, "against", None))
        base_dir = None if args.file == "-" else os.path.dirname(os.path.abspath(args.file))
        try:
            result = validate_document(kind, content, profile=args.profile, strict_doc=args.strict_doc,
                                       against=against, base_dir=base_dir)
        finally:
            if against is not None:
                against.close()
        text = json.dumps(result, indent=2)
    except (InputError, DescriptorError, ProfileError) as exc:
        err.write(f"topkspec: error: {exc}\n")
        return 2
    except RecursionError:  # a value nested deeper than copying or printing it allows
        err.write(f"topkspec: error: {args.file} is nested too deeply to be a TopK descriptor\n")
        return 2
    for error in result.get("errors", ()):
        where = f"item {error['item']}" if "item" in error else f"node {error['node']}"
        err.write(f"topkspec: error: {where}: {error['error']}\n")
    out.write(text + "\n")
    return exit_code(result)
