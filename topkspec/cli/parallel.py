"""`topkspec fuzz --workers N`: one campaign over N processes, on pytest-xdist.

The suite's tests (topkspec.suite, one per property group, each split into N shards by
--topk-shards) are spread over N xdist workers, each with its own target (and worker process,
for a native target). A shard has its share of its group's budget and a search of its own, so
the workers share the work evenly however much each group costs. The run's options become the
pytest plugin's: the budget (--topk-max-examples, shared among the groups as a fuzz run shares
it), the spec, the shapes, the reports, and the example database (--topk-database), which
every worker reads and writes, so failures any of them found replay first in all of them next
time. Hypothesis's settings come from the named settings (--hypothesis-profile) and the seed
from --topk-seed, which derandomizes every shard's search from it; Hypothesis then neither
saves to the example database nor replays from it (the run says so: its failures are in its
reports only). pytest prints what it found, each failure with its report folder; the exit code
is the command's (0 held, 1 found, 2 bad usage, 130 interrupted).
"""
from __future__ import annotations

import importlib.util
import sys

from topkspec.errors import UsageError


SEEDED_WORKERS = ("topkspec: note: with --workers, --seed derandomizes each shard's search from it, and then Hypothesis "
                  "neither saves failures to the example database nor replays them from it: this campaign's "
                  "failures are in its reports only (case.json, repro.py). Leave --seed out to share them, or run "
                  "seeded without --workers, which saves them.")


def campaign_database(args) -> str | None:
    """The example database the campaign names, or its named settings keep."""
    from topkspec.fuzz.config import DEFAULT_DATABASE, SETTINGS_WITH_DATABASE

    if args.database is None and (args.settings or "dev") in SETTINGS_WITH_DATABASE:
        return DEFAULT_DATABASE
    return args.database


def pytest_args(args) -> list[str]:
    """The pytest command line (after `pytest`) that runs the campaign `args` describes."""
    from topkspec.fuzz.config import SETTINGS, shape_limits

    name = args.settings or "dev"
    database = campaign_database(args)
    budget = args.max_examples if args.max_examples is not None else SETTINGS[name]["max_examples"]
    # --assert=plain: pytest would rewrite the asserts of every module of topkspec (an installed
    # plugin's distribution) in every worker, about 2 s each where no bytecode is cached
    line = ["-n", str(args.workers), "-p", "no:cacheprovider", "--assert=plain", "--pyargs", "topkspec.suite",
            "--hypothesis-profile", f"topkspec-{name}", "--topk-target", args.target,
            "--topk-max-examples", str(budget), "--topk-timeout", str(args.timeout),
            "--topk-shards", str(args.workers)]
    if args.seed is not None:
        line += ["--topk-seed", str(args.seed)]
    if database is not None:
        line += ["--topk-database", database]
    options = {"--topk-spec": args.profile, "--topk-report-dir": args.report_dir,
               "--topk-contract": args.contract, "--topk-nan-order": args.nan_order,
               "--topk-fail-on": getattr(args, "fail_on", None)}
    limits = shape_limits(args.settings, args.max_axis_size, args.max_elements)
    options["--topk-max-axis-size"], options["--topk-max-elements"] = limits["max_axis_size"], limits["max_elements"]
    line += [item for option, value in options.items() if value is not None for item in (option, str(value))]
    if args.known is not None:
        line += ["--topk-known"] + ([args.known] if args.known else [])
    for flag, on in (("--topk-strict-doc", args.strict_doc), ("--topk-report-known", args.report_known),
                     ("--topk-documents-only", args.documents_only), ("-q", args.quiet)):
        if on:
            line.append(flag)
    return line


def run(args) -> int:
    """Run the campaign on `args.workers` processes; the command's exit code."""
    import subprocess

    if importlib.util.find_spec("xdist") is None:
        raise UsageError("--workers needs pytest-xdist: pip install 'topkspec[parallel]'")
    if args.isolate != "auto":
        raise UsageError("--workers runs the target as the pytest plugin does (native targets isolated): "
                         "leave --isolate out")
    if args.seed is not None and campaign_database(args) is not None:
        print(SEEDED_WORKERS, file=sys.stderr, flush=True)
    # pytest in an interpreter of its own: its plugins load before anything imports Hypothesis
    try:
        code = subprocess.run([sys.executable, "-m", "pytest", *pytest_args(args)]).returncode
    except KeyboardInterrupt:
        return 130
    return {0: 0, 1: 1, 2: 130}.get(code, 2)  # pytest: 0 passed, 1 failed, 2 interrupted
