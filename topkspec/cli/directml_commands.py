"""`topkspec directml setup | info | compare | layers | replay`."""
from __future__ import annotations

import json
import sys


def add_parser(sub) -> None:
    """Adds `directml` and its subcommands to the topkspec command's subparsers."""
    directml = sub.add_parser(
        "directml", help="set up and inspect the directml target (DirectML.dll itself)",
        epilog="subcommands: setup [--dll PATH | --version X.Y.Z] [--adapter A]; info [--json]; "
               "compare [--out FILE] [--json FILE] [--versions V1,V2] [--observations FILE] [--readme FILE]; "
               "layers [REPORT_DIR ...] [--json FILE] [--readme FILE]; replay DIR [--adapter A]")
    commands = directml.add_subparsers(dest="directml_command", metavar="SUBCOMMAND",
                                       parser_class=type(directml))

    setup = commands.add_parser("setup", help="make the directml target available here (idempotent)")
    which = setup.add_mutually_exclusive_group()
    which.add_argument("--dll", default=None, help="use this DirectML.dll (copied into the cache)")
    which.add_argument("--version", default=None,
                       help="DirectML version to fetch from the onnxruntime-directml wheel carrying it "
                            "(1.15.4 by default; 1.15.1, 1.13.1, 1.12.0, 1.9.0, 1.8.0, 1.5.1)")
    setup.add_argument("--adapter", default=None, help="adapter for the check: auto, warp, or part of its name")

    replay = commands.add_parser("replay", help="run the DirectML cases of a corpus (topkspec corpus DIR) through DirectML")
    replay.add_argument("folder", metavar="DIR", help="the corpus's dml/ folder")
    replay.add_argument("--adapter", default=None, help="auto, warp, or part of an adapter's name")
    replay.add_argument("--native", action="store_true",
                        help="let the native worker read the JSON files itself (the model for a C/C++ harness)")

    info = commands.add_parser("info", help="the DirectML stack: version, adapter, Wine/vkd3d/Mesa, what is missing")
    info.add_argument("--json", action="store_true", help="JSON instead of text")

    compare = commands.add_parser("compare", help="where the documents and DirectML differ, on a fixed descriptor set")
    compare.add_argument("--out", default=None, help="write the markdown table here (default: standard output)")
    compare.add_argument("--json", dest="json_out", default=None, help="also write every verdict as JSON here")
    compare.add_argument("--versions", default=None,
                         help="comma-separated DirectML versions installed by setup (default: the one in use)")
    compare.add_argument("--observations", default=None,
                         help="write the rules' observations (the file the spec export reads) here")
    compare.add_argument("--readme", default=None,
                         help="regenerate the tables between <!-- directml-compare [versions=...] --> and "
                              "<!-- /directml-compare --> in this markdown file")


    layers = commands.add_parser(
        "layers", help="the same cases through DirectML.dll, ONNX Runtime's DirectML EP and its CPU provider: "
                       "which layer answers, and where they differ")
    layers.add_argument("reports", nargs="*", metavar="REPORT_DIR",
                        help="bug report folders (case.json, inputs.npz) to replay instead of the fixed set")
    layers.add_argument("--json", dest="json_out", default=None, help="also write every answer as JSON here")
    layers.add_argument("--readme", default=None, help="put the table between <!-- directml-layers --> and "
                                                       "<!-- /directml-layers --> in this markdown file")


def run(args) -> int:
    command = getattr(args, "directml_command", None)
    if command == "setup":
        from topkspec.targets.directml.install import setup

        return setup(dll=args.dll, version=args.version, adapter=args.adapter)
    if command == "info":
        return _info(args)
    if command == "replay":
        return _replay(args)
    if command == "layers":
        from topkspec.targets.directml.layers import cmd_layers

        return cmd_layers(args)
    if command == "compare":
        from topkspec.targets.directml.compare import cmd_compare

        return cmd_compare(args)
    print("topkspec directml: choose a subcommand: setup, info, compare, layers or replay", file=sys.stderr)
    return 2


def _replay(args) -> int:
    from topkspec.corpus.replay import case_files, replay
    from topkspec.errors import UsageError
    from topkspec.targets.directml.target import DirectMLTarget

    case_files(args.folder)  # a bad folder is bad usage before DirectML starts
    target = DirectMLTarget(adapter=args.adapter)
    try:
        ok, why = target.available()
        if not ok:
            raise UsageError(f"the directml target cannot run here: {why}")
        if args.native:
            from topkspec.targets.directml.client import run_replay

            code, output = run_replay(target.stack, args.folder, adapter=args.adapter or "auto")
            print(f"topkspec directml replay --native: {target.version()}")
            print(output, end="")
            return code
        result = replay(target, args.folder)
        print(f"topkspec directml replay: {target.version()}")
    finally:
        target.close()
    for line in result.lines():
        print(line)
    return result.exit_code


def _info(args) -> int:
    from topkspec.targets.directml.target import DirectMLTarget

    target = DirectMLTarget()
    try:
        ok, why = target.available()
        data = target.report_stack()
        data.update(available=ok, reason=why, device=target.device if ok else None)
    finally:
        target.close()
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(f"directml  [{'available' if ok else 'unavailable'}]  {data['summary']}")
        if not ok:
            print(f"    needs: {why}")
        for key in ("dll", "directml_file_version", "dll_chosen_by", "worker", "adapter", "feature_level",
                    "wine", "vkd3d", "mesa"):
            if data.get(key):
                print(f"    {key}: {data[key]}")
    return 0 if ok else 1
