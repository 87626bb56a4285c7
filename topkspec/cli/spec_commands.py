"""The `topkspec spec` and `topkspec validate` commands.

validate reads a descriptor (DESIGN.md JSON), a JSON list of them, or an .onnx model (each TopK
node is checked), and prints {"valid": ..., "violations": [{"rule", "message", "source"}, ...]}.
Exit 0 valid, 1 invalid, 2 unreadable or malformed input (one line on stderr).
"""
from __future__ import annotations

import json
import sys

from topkspec.errors import InputError, UsageError
from topkspec.spec.descriptors import DescriptorError
from topkspec.spec.export import export
from topkspec.spec.profiles import ProfileError, parse_profile
from topkspec.spec.validate import validate


def add_spec_arguments(parser) -> None:
    parser.add_argument("--indent", type=int, default=2, help="JSON indent (0 for one line)")


def add_validate_arguments(parser) -> None:
    parser.add_argument("file", help="descriptor JSON file, an .onnx model, or - for standard input")
    parser.add_argument("--spec", dest="profile", default=None,
                        help="judge by this profile (dml:3.1, onnx:11, ...) instead of the descriptor's own")
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


def _verdict(desc, profile, strict_doc, against=None) -> dict:
    findings = validate(desc, profile, strict_doc=strict_doc)
    result = {"valid": not findings, "violations": [f.to_dict() for f in findings]}
    if against is not None:
        from topkspec.targets.verdict import target_verdict
        result["against"] = target_verdict(against, desc, profile)
    return result


def validate_document(kind: str, content, *, profile=None, strict_doc=False, against=None) -> dict:
    """The validate command's result for one input (raises InputError, DescriptorError, ProfileError)."""
    if kind == "onnx":
        from topkspec.spec.onnx_reader import topk_nodes

        nodes = []
        for node in topk_nodes(content):
            entry = {"node": node.name, "descriptor": node.descriptor,
                     **_verdict(node.judged, profile, strict_doc, against)}
            if node.notes:
                entry["notes"] = node.notes
            nodes.append(entry)
        return {"valid": all(n["valid"] for n in nodes),
                "violations": [dict(v, node=n["node"]) for n in nodes for v in n["violations"]],
                "nodes": nodes}
    if isinstance(content, list):
        if not content:
            raise InputError("an empty array holds no descriptor to validate (give one descriptor object, "
                             "or an array of them)")
        items = [_verdict(desc, profile, strict_doc, against) for desc in content]
        return {"valid": all(i["valid"] for i in items),
                "violations": [dict(v, item=i) for i, item in enumerate(items) for v in item["violations"]],
                "items": items}
    return _verdict(content, profile, strict_doc, against)


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
        try:
            result = validate_document(kind, content, profile=args.profile, strict_doc=args.strict_doc,
                                       against=against)
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
    out.write(text + "\n")
    return 0 if result["valid"] else 1
