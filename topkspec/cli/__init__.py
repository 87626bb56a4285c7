"""The `topkspec` command: fuzz, targets, spec, validate, matrix, bench.

Exit codes: 0 every property held (or the command did its job), 1 something was found,
2 bad usage (a one-line `topkspec: error: ...` on stderr, never a traceback), 3 nothing was
found but the run judged too little to say the properties hold (every case unsupported, say).

Imports every room below it; nothing imports it but __main__.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from topkspec.errors import UsageError
from topkspec.targets.base import first_line
from topkspec.targets.isolation import DEFAULT_TIMEOUT, TargetCrashed, TargetHung




class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as UsageError so every bad-usage path ends the same way."""

    def error(self, message):
        raise UsageError(message)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive time, got {value}")
    return value


def _add_run_options(parser) -> None:
    parser.add_argument("--spec", dest="profile", default=None,
                        help="spec profile to judge by (dml:3.1, onnx:11, ...); default: the target's own")
    parser.add_argument("--seed", type=int, default=None, help="seed: the same seed repeats the run")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT,
                        help=f"seconds a call may take before it counts as a hang (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--isolate", choices=("auto", "always", "never"), default="auto",
                        help="run the target in a worker process: auto isolates native targets and plain functions")
    parser.add_argument("--known", nargs="?", const="", default=None, metavar="FILE",
                        help="known deviations (TOML) are counted, not failures; without FILE, the list "
                             "topkspec ships for the target")
    parser.add_argument("--contract", default=None, metavar="FILE",
                        help="what the runtime promises (TOML, see docs/targets.md); default: the target's own "
                             "(`topkspec targets --contract NAME` prints it)")
    parser.add_argument("--nan-order", choices=("largest", "totalorder", "smallest"), default=None,
                        help="check this NaN order (largest: every NaN above every number, as numpy and torch "
                             "sort; totalorder: IEEE 754, -NaN below every number); default: as the contract, "
                             "where NaN order is unspecified")
    parser.add_argument("--report-known", action="store_true",
                        help="shrink and report known deviations too (they still do not fail the run)")
    parser.add_argument("--documents-only", action="store_true",
                        help="judge by the documents alone: a rule that is our reading of them, broken, is a note")
    parser.add_argument("--max-axis-size", type=_positive, default=None, metavar="N",
                        help="the longest axis an input has (default 4096; --settings gpu: 2097152)")
    parser.add_argument("--max-elements", type=_positive, default=None, metavar="N",
                        help="the most elements an input has (default 65536, or the longest axis; "
                             "--settings gpu: 4194304)")


def check_target_names(names) -> None:
    """Unknown plain names stop at once with a suggestion; import strings are checked when loaded."""
    from topkspec.targets.registry import known_names

    from topkspec.targets.registry import unknown_target

    for name in names:
        if ":" not in name and name not in known_names():
            raise UsageError(unknown_target(name))


def build_parser() -> argparse.ArgumentParser:
    from topkspec import __version__
    from topkspec.fuzz import SETTINGS
    from topkspec.cli.spec_commands import add_spec_arguments, add_validate_arguments

    parser = _Parser(prog="topkspec", description="Specification and fuzzing suite for the TopK operator.")
    parser.add_argument("--version", action="version", version=f"topkspec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    fuzz = sub.add_parser("fuzz", help="fuzz one target against the spec")
    fuzz.add_argument("--target", default="onnxruntime",
                      help="built-in name, package.module:attr or path/file.py:attr (default onnxruntime)")
    fuzz.add_argument("--max-examples", type=_positive, default=None,
                      help="examples for the whole run, shared among the property groups")
    fuzz.add_argument("--report-dir", default=None, help="write a bug report folder per failure here")
    fuzz.add_argument("--settings", choices=sorted(SETTINGS), default=None,
                      help="named Hypothesis settings (ci: derandomised, no database; dev; nightly; gpu: axes to "
                           "2**21 over a few rows)")
    fuzz.add_argument("--database", default=None,
                      help="example database: a directory or redis://host:port/db (default .topkspec/examples)")
    fuzz.add_argument("--quiet", action="store_true", help="no progress lines")
    fuzz.add_argument("--verbose", action="store_true",
                      help="show each step the reducer keeps while it cuts a failure down after shrinking")
    fuzz.add_argument("--workers", type=_positive, default=None, metavar="N",
                      help="spread the campaign over N processes (pytest-xdist over the suite's property groups, "
                           "sharing the example database)")
    fuzz.add_argument("--engine", choices=("hypothesis", "hypofuzz"), default="hypothesis",
                      help="hypofuzz: run the campaign on HypoFuzz's processes for --seconds (needs "
                           "pip install 'topkspec[hypofuzz]' in an environment of its own)")
    fuzz.add_argument("--seconds", type=_seconds, default=None,
                      help="--engine hypofuzz: how long the campaign runs (default 60)")
    fuzz.add_argument("-x", "--exitfirst", action="store_true",
                      help="--engine hypofuzz: stop once a failure is found and shrunk")
    fuzz.add_argument("--strict-doc", action="store_true",
                      help="apply the literal DirectML text: K must be less than the axis size (a target "
                           "must refuse K equal to it); by default a target may refuse or compute it")
    fuzz.add_argument("--fail-on", default=None, metavar="KINDS",
                      help="comma-separated kinds whose failures fail the run (exit 1): own-documentation, "
                           "crash, contradicts-itself, standard, feature-request (default: all five); an open "
                           "failure never fails it, an adapter error always does")
    fuzz.add_argument("--no-confirm", dest="confirm", action="store_false",
                      help="file each failure as found, without replaying it in a fresh process first")
    _add_run_options(fuzz)

    targets = sub.add_parser("targets", help="list the targets and what they support")
    targets.add_argument("--json", action="store_true", help="JSON instead of a table")
    targets.add_argument("--contract", metavar="NAME", default=None,
                         help="print what target NAME promises, point by point, each with its source")
    targets.add_argument("--only", metavar="NAME[,NAME...]", default=None,
                         help="list these targets only (each is started and asked about every value type "
                              "at every profile: the whole list takes minutes)")

    add_spec_arguments(sub.add_parser("spec", help="print the machine-readable spec as JSON"))
    add_validate_arguments(sub.add_parser("validate", help="validate a descriptor or .onnx model"))

    matrix = sub.add_parser("matrix", help="conformance matrix: rules by target")
    matrix.add_argument("--targets", required=True, help="comma-separated targets")
    matrix.add_argument("--max-examples", type=_positive, default=200, help="examples per target")
    matrix.add_argument("--out", default=None, help="write the markdown here (default: standard output)")
    matrix.add_argument("--report-dir", default="topkspec-reports", help="report folders, one per target")
    matrix.add_argument("--quiet", action="store_true", help="no progress lines")
    _add_run_options(matrix)

    bench = sub.add_parser("bench", help="examples per second per target (JSON lines), or the spec library's speed")
    bench.add_argument("what", nargs="?", choices=("targets", "spec"), default="targets",
                       help="targets (default): fuzzing throughput; spec: spec.validate per call and "
                            "the import of topkspec.spec in a fresh interpreter")
    bench.add_argument("--targets", default="reference,onnxruntime", help="comma-separated targets")
    bench.add_argument("--max-examples", type=_positive, default=300, help="examples per target")
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--repeat", type=_positive, default=3,
                       help="runs of each target, each between two of the floor; the median counts (default 3)")
    bench.add_argument("--bugs", default=None, metavar="FILE[:NAME,...]",
                       help="plain TopK functions with planted bugs (every public function of FILE, or "
                            "the NAMEs): time and examples to each one's first failure")
    bench.add_argument("--seeds", type=_positive, default=5, help="--bugs: seeds per bug (default 5)")
    bench.add_argument("--isolate", choices=("auto", "always", "never"), default="auto",
                       help="run the targets in a worker process: auto as fuzz does (native targets); "
                            "never shows what isolation costs")
    bench.add_argument("--database", default=None, metavar="D",
                       help="the target runs' example database, a directory or redis://host:port/db (default: "
                            "none): what saving and replaying cost")
    bench.add_argument("--quiet", action="store_true", help="no progress lines")
    bench.add_argument("--number", type=_positive, default=20000, help="bench spec: validate calls per timing")
    bench.add_argument("--json", action="store_true", help="bench spec: the figures as JSON")

    corpus = sub.add_parser("corpus", help="write conformance cases (ONNX node tests, DirectML JSON) to DIR")
    corpus.add_argument("dir", metavar="DIR", help="the folder to write: new, empty, or one an earlier corpus went to (only it is replaced)")
    corpus.add_argument("--spec", action="append", default=None, metavar="PROFILE",
                        help="only these profiles (repeat or comma-separate; default onnx:1,10,11,24 and "
                             "dml:2.1,3.1,5.0)")
    corpus.add_argument("--from-reports", default=None, metavar="DIR",
                        help="add every counterexample kept in the report folders under DIR")

    from topkspec.cli.directml_commands import add_parser as add_directml_parser
    add_directml_parser(sub)
    from topkspec.cli.divergence_command import add_parser as add_divergence_parser
    add_divergence_parser(sub)

    env = sub.add_parser("env", help="Python environments of their own for targets that cannot share this one")
    env_commands = env.add_subparsers(dest="env_command", metavar="SUBCOMMAND", parser_class=type(env))
    env_setup = env_commands.add_parser("setup", help="make the environment NAME (jittor, onnxruntime@X.Y) and "
                                                      "start its target once")
    env_setup.add_argument("name", metavar="NAME")
    env_setup.add_argument("--python", default=None, help="the interpreter to make it with (default: this one)")
    return parser


def _isolate(choice: str):
    return {"auto": None, "always": True, "never": False}[choice]


def cmd_fuzz(args) -> int:
    from topkspec.fuzz.resolve import resolve_target

    check_target_names([args.target])
    if args.contract:  # a bad file is bad usage before the target starts; workers read it by its full path
        from topkspec.spec.contracts import load_contract
        load_contract(args.contract)
        args.contract = os.path.abspath(args.contract)
    from topkspec.spec.kinds import parse_fail_on
    fail_on = parse_fail_on(args.fail_on)  # a bad list is bad usage before the target starts
    if args.engine == "hypofuzz":
        if args.fail_on is not None:
            raise UsageError("--fail-on is for --engine hypothesis: HypoFuzz's own runs fail on every failure")
        from topkspec.cli.hypofuzz_engine import run

        return run(args)
    if args.seconds is not None or args.exitfirst:
        raise UsageError("--seconds and --exitfirst are for --engine hypofuzz")
    if args.workers is not None:
        from topkspec.cli.parallel import run

        return run(args)
    # First: a target's worker process starts and imports its runtime while this one loads the engine.
    target = resolve_target(args.target, isolate=_isolate(args.isolate), timeout=args.timeout)
    try:
        from topkspec.fuzz import RunConfig, format_summary, run_fuzz

        config = RunConfig(target=args.target, profile=args.profile, max_examples=args.max_examples,
                           seed=args.seed, settings=args.settings, database=args.database,
                           report_dir=args.report_dir, isolate=_isolate(args.isolate), timeout=args.timeout,
                           progress=None if args.quiet else sys.stderr, strict_doc=args.strict_doc,
                           known=args.known, report_known=args.report_known, documents_only=args.documents_only,
                           max_axis_size=args.max_axis_size, max_elements=args.max_elements,
                           verbose=args.verbose, confirm=args.confirm, contract=args.contract,
                           nan_order=args.nan_order, fail_on=fail_on)
        result = run_fuzz(config, target=target)
    finally:
        target.close()  # the run closes it too; this is for a Ctrl-C before the run begins
    print(format_summary(result))
    if result.interrupted:
        print("topkspec: interrupted", file=sys.stderr)
    return result.exit_code


def cmd_targets(args) -> int:
    from topkspec.targets.listing import describe_targets, format_targets

    if args.contract:
        from topkspec.targets.listing import contract_text
        from topkspec.targets.registry import get_target

        check_target_names([args.contract])
        contract = get_target(args.contract).contract
        print(json.dumps(contract.to_dict(), indent=2) if args.json else contract_text(contract))
        return 0
    only = None
    if args.only is not None:
        from topkspec.targets.registry import get_target

        names = [name.strip() for name in args.only.split(",") if name.strip()]
        if not names:
            raise UsageError("--only needs at least one target name")
        check_target_names(names)
        only = [get_target(name) for name in names]
    rows = describe_targets(only)
    print(json.dumps(rows, indent=2, default=str) if args.json else format_targets(rows))
    if not args.json:  # the forms that name a target of yours, besides import strings (docs/targets.md)
        from topkspec.targets.registry import PREFIXED_FORMS

        for _, _, form, what in PREFIXED_FORMS.values():
            print(f"{form}  [any such module]  {what}: see docs/targets.md")
    return 0


def cmd_matrix(args) -> int:
    from topkspec.fuzz.matrix import run_matrix

    names = [name.strip() for name in args.targets.split(",") if name.strip()]
    if not names:
        raise UsageError("--targets needs at least one target")
    if args.contract or args.nan_order:
        raise UsageError("--contract and --nan-order are for `topkspec fuzz`: each target of a matrix "
                         "is held to its own contract")
    check_target_names(names)
    out_dir = os.path.dirname(os.path.abspath(args.out)) if args.out else os.getcwd()
    if args.out and not (os.path.isdir(out_dir) and os.access(out_dir, os.W_OK | os.X_OK)):
        raise UsageError(f"--out {args.out}: cannot write a file in {out_dir}")
    if args.known:  # a file of ours for every target: a bad one is bad usage before any run
        from topkspec.known import KnownError, load_known
        try:
            load_known(args.known, names[0])
        except KnownError as exc:
            raise UsageError(str(exc)) from None
    text, status = run_matrix(names, max_examples=args.max_examples, seed=args.seed, profile=args.profile,
                             report_dir=args.report_dir, isolate=_isolate(args.isolate), timeout=args.timeout,
                             out_dir=out_dir, progress=None if args.quiet else sys.stderr, known=args.known,
                             report_known=args.report_known, documents_only=args.documents_only,
                             max_axis_size=args.max_axis_size, max_elements=args.max_elements)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text)
        print(f"topkspec: matrix written to {args.out}", file=sys.stderr)
    else:
        print(text)
    return status


def cmd_bench(args) -> int:
    if args.what == "spec":
        from topkspec.spec.speed import format_report, measure

        result = measure(repeat=args.repeat, number=args.number)
        print(json.dumps(result, indent=2) if args.json else format_report(result))
        return 0
    from topkspec.fuzz.bench import planted_bugs, run_bench

    names = [name.strip() for name in args.targets.split(",") if name.strip()]
    check_target_names(names)
    if args.bugs is not None:
        planted_bugs(args.bugs)  # a bad file or name stops here, before any run
    if args.database is not None:  # so does a database that cannot be opened
        from topkspec.fuzz.database import open_database
        open_database(args.database)
    for line in run_bench(names, max_examples=args.max_examples, seed=args.seed, repeat=args.repeat,
                          progress=None if args.quiet else sys.stderr, bugs=args.bugs, seeds=args.seeds,
                          isolate=_isolate(args.isolate), database=args.database):
        print(json.dumps(line), flush=True)
    return 0


def cmd_corpus(args) -> int:
    from topkspec import spec
    from topkspec.corpus import PROFILES, write_corpus

    profiles = PROFILES
    if args.spec:
        profiles = tuple(spec.parse_profile(p.strip()).name for text in args.spec for p in text.split(",") if p.strip())
    if os.path.exists(args.dir) and not os.path.isdir(args.dir):
        raise UsageError(f"{args.dir} is a file, not a folder")
    try:
        os.makedirs(args.dir, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make {args.dir}: {exc.strerror or exc}") from None
    counts = write_corpus(args.dir, profiles, from_reports=args.from_reports)
    print(f"topkspec corpus: {counts.get('onnx', 0)} ONNX node tests, {counts.get('dml_valid', 0)} valid and "
          f"{counts.get('dml_invalid', 0)} invalid DirectML cases in {args.dir}")
    if counts.get("dml_layout"):
        shares = ", ".join(f"{name[7:]} {n} ({100 * n / counts['dml_valid']:.1f}%)" for name, n in sorted(counts.items())
                           if name.startswith("layout "))
        print(f"laid out: {counts['dml_layout']} of the valid DirectML cases (share of each: {shares})")
    if args.from_reports is not None:
        skipped = counts["reports_skipped"]
        print(f"from {args.from_reports}: {counts['from_reports']} cases taken; {len(skipped)} report "
              f"folder{'' if len(skipped) == 1 else 's'} skipped" + (":" if skipped else ""))
        for name, why in skipped:
            print(f"  {name}: {why}")
    return 0


def cmd_directml(args) -> int:
    from topkspec.cli.directml_commands import run

    return run(args)


def cmd_env(args) -> int:
    if args.env_command != "setup":
        print("topkspec env: choose a subcommand: setup", file=sys.stderr)
        return 2
    from topkspec.targets.environments import setup_environment

    return setup_environment(args.name, python=args.python)


def main(argv=None) -> int:
    from topkspec.cli.divergence_command import cmd_divergence
    from topkspec.cli.spec_commands import cmd_spec, cmd_validate

    commands = {"fuzz": cmd_fuzz, "targets": cmd_targets, "spec": cmd_spec, "validate": cmd_validate,
                "matrix": cmd_matrix, "bench": cmd_bench, "corpus": cmd_corpus, "directml": cmd_directml,
                "env": cmd_env, "divergence": cmd_divergence}
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return commands[args.command](args)
    except (UsageError, TargetCrashed, TargetHung) as exc:  # bad usage, or a target that cannot start
        print(f"topkspec: error: {first_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("topkspec: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
