"""`topkspec directml setup | info | compare | layers | replay`."""
from __future__ import annotations

import sys


def add_parser(sub) -> None:
    """Adds `directml` and its subcommands to the topkspec command's subparsers."""
    directml = sub.add_parser(
        "directml", help="set up and inspect the directml target (DirectML.dll itself)",
        epilog="subcommands: setup [--dll PATH | --version X.Y.Z | --bundle FILE] [--adapter A]; info [--json]; "
               "compare [--out FILE] [--json FILE] [--versions V1,V2] [--observations FILE] [--readme FILE]; "
               "layers [REPORT_DIR ...] [--json FILE] [--readme FILE]; replay DIR [--adapter A]; "
               "bundle FILE [--with-ep] [--check] [--keep DIR]; bundle-check FILE [--max-examples N]")
    commands = directml.add_subparsers(dest="directml_command", metavar="SUBCOMMAND",
                                       parser_class=type(directml))

    setup = commands.add_parser("setup", help="make the directml target available here (idempotent)")
    which = setup.add_mutually_exclusive_group()
    which.add_argument("--dll", default=None, help="use this DirectML.dll (copied into the cache)")
    which.add_argument("--version", default=None,
                       help="DirectML version to fetch from the onnxruntime-directml wheel carrying it "
                            "(1.15.4 by default; 1.15.1, 1.13.1, 1.12.0, 1.9.0, 1.8.0, 1.5.1)")
    which.add_argument("--bundle", default=None, metavar="FILE",
                       help="run from a portable bundle (`topkspec directml bundle`) instead of a Wine install")
    setup.add_argument("--adapter", default=None, help="adapter for the check: auto, warp, or part of its name")

    bundle = commands.add_parser(
        "bundle", help="write a portable bundle: DirectML.dll, the worker and the Wine they load, for a Linux "
                       "machine with a Vulkan driver and no Wine")
    bundle.add_argument("file", metavar="FILE", help="the bundle to write (.tar.xz)")
    bundle.add_argument("--with-ep", action="store_true",
                        help="also carry ONNX Runtime's onnxruntime.dll and its worker (onnxruntime-directml)")
    bundle.add_argument("--check", action="store_true",
                        help="then run it in a clean root (a chroot with glibc and lavapipe, no Wine) and through "
                             "the suite with Wine hidden")
    bundle.add_argument("--keep", default=None, metavar="DIR",
                        help="also leave the unpacked bundle in DIR (new, empty, or an earlier --keep's)")

    check = commands.add_parser("bundle-check", help="run a bundle in a clean root (chroot: glibc and lavapipe, "
                                                     "no Wine) and through the suite with Wine hidden")
    check.add_argument("file", metavar="FILE", help="the bundle (.tar.xz)")
    check.add_argument("--max-examples", type=int, default=100, help="examples of the suite's campaign (default 100)")

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
        import os

        from topkspec.errors import UsageError
        from topkspec.directml_tools.setup.install import setup

        if args.bundle is not None and not os.path.isfile(args.bundle):
            raise UsageError(f"{args.bundle}: no such bundle file")
        return setup(dll=args.dll, version=args.version, adapter=args.adapter, bundle=args.bundle)
    if command == "bundle":
        return _bundle(args)
    if command == "bundle-check":
        return _bundle_check(args.file, args.max_examples)
    if command == "info":
        from topkspec.directml_tools.setup.info import cmd_info

        return cmd_info(args)
    if command == "replay":
        from topkspec.directml_tools.analyses.replay import cmd_replay

        return cmd_replay(args)
    if command == "layers":
        from topkspec.directml_tools.analyses.layers import cmd_layers

        return cmd_layers(args)
    if command == "compare":
        from topkspec.directml_tools.analyses.compare import cmd_compare

        return cmd_compare(args)
    print("topkspec directml: choose a subcommand: setup, info, compare, layers, replay, bundle or bundle-check",
          file=sys.stderr)
    return 2


def _bundle(args) -> int:
    from topkspec.errors import UsageError
    from topkspec.cli.bundle_cases import write_cases
    from topkspec.directml_tools.bundle.make import BundleError, build
    from topkspec.directml_tools.bundle.trace import TraceError

    if not args.file.endswith((".tar.xz", ".txz")):
        raise UsageError(f"{args.file}: the bundle is a .tar.xz file (name it so)")
    try:
        summary = build(args.file, write_cases, with_ep=args.with_ep, keep=args.keep,
                        log=lambda line: print(f"topkspec directml bundle: {line}", flush=True))
    except (BundleError, TraceError) as exc:
        raise UsageError(str(exc)) from None
    mib = 1024 * 1024
    print(f"topkspec directml bundle: wrote {summary['file']}: {summary['compressed_bytes'] / mib:.1f} MiB "
          f"compressed, {summary['unpacked_bytes'] / mib:.1f} MiB unpacked, {summary['files']} files, "
          f"in {summary['seconds']:.0f} s; top level: {' '.join(summary['top_level'])}")
    return _bundle_check(args.file, 100) if args.check else 0


def _bundle_check(path: str, max_examples: int) -> int:
    import os

    from topkspec.errors import UsageError
    from topkspec.directml_tools.bundle.check import CheckError, check

    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such bundle file")
    try:
        return check(path, max_examples=max_examples,
                     log=lambda line: print(f"topkspec directml bundle-check: {line}", flush=True))
    except CheckError as exc:
        raise UsageError(str(exc)) from None
