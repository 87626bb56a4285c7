"""`topkspec fuzz --engine hypofuzz`: one campaign on HypoFuzz's processes, for a time.

HypoFuzz (`hypothesis fuzz`) runs the suite's HypoFuzz form (topkspec.hypofuzz_suite) on N
processes that share one example database; each process builds its target from the
TOPKSPEC_* variables this command sets. HypoFuzz runs until every test has failed or it is
stopped, so this command stops it after --seconds (or, with --exitfirst, once a shrunk failure
is saved), then reads what HypoFuzz saved in the database: per test, the examples its
processes reported and the failure it shrank, with the input and the rule's message.

HypoFuzz 25.11.1 needs Hypothesis older than 6.157.1 (it sets ConjectureResult.slice_comments,
which 6.157.1 removed), so it lives in an environment of its own: pip install 'topkspec[hypofuzz]'.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from topkspec.errors import UsageError

HYPOTHESIS_BEFORE = (6, 157, 1)  # the first Hypothesis HypoFuzz 25.11.1 breaks on
POLL_S = 0.5
OPTIONS_NOT_TAKEN = {"max_examples": "--max-examples (HypoFuzz runs for --seconds)",
                     "seed": "--seed (HypoFuzz draws its own)", "settings": "--settings",
                     "report_dir": "--report-dir", "report_known": "--report-known"}


def check_usable(args) -> None:
    """UsageError when this environment or these options cannot run HypoFuzz."""
    for option, name in OPTIONS_NOT_TAKEN.items():
        if getattr(args, option, None) not in (None, False):
            raise UsageError(f"--engine hypofuzz does not take {name}")
    if args.isolate != "auto":
        raise UsageError("--engine hypofuzz runs the target as the pytest plugin does: leave --isolate out")
    if importlib.util.find_spec("hypofuzz") is None:
        raise UsageError("--engine hypofuzz needs HypoFuzz: pip install 'topkspec[hypofuzz]' in a virtual "
                         "environment of its own (it needs Hypothesis older than 6.157.1)")
    import hypothesis

    if hypothesis.__version_info__ >= HYPOTHESIS_BEFORE:
        raise UsageError(f"HypoFuzz 25.11.1 fails with Hypothesis {hypothesis.__version__} (6.157.1 and later): "
                         "pip install 'topkspec[hypofuzz]' in a virtual environment of its own")


def environment(args) -> dict:
    """The TOPKSPEC_* variables that give the HypoFuzz form the run's options."""
    from topkspec.fuzz.suite_options import SuiteOptions

    return SuiteOptions(target=args.target, spec=args.profile, timeout=args.timeout, known=args.known,
                        strict_doc=args.strict_doc, documents_only=args.documents_only,
                        max_axis_size=args.max_axis_size, max_elements=args.max_elements,
                        contract=args.contract, nan_order=args.nan_order).environment()


def command_line(workers: int, database: str) -> list[str]:
    """`hypothesis fuzz` on the suite's HypoFuzz form; the database as one word (`--opt=value`),
    or pytest would take an existing folder for a path to test and move its root there."""
    return [sys.executable, "-c", "from hypothesis.extra.cli import main; main()", "fuzz",
            "-n", str(workers), "--no-dashboard", "--",
            "-p", "no:cacheprovider", "--pyargs", "topkspec.hypofuzz_suite", f"--topk-database={database}"]


@dataclass
class TestRecord:
    """What HypoFuzz saved for one test: examples reported and failures (shrunk ones first)."""

    nodeid: str | None  # None: no report or failure saved yet
    examples: int = 0
    seconds: float = 0.0  # the test's time, summed over processes
    failures: list = field(default_factory=list)  # (shrunk, message, input, reproduce decorator)
    skipped: str | None = None
    fatal: str | None = None


def _message(traceback: str | None) -> str:
    """The exception's message: pytest marks its lines with 'E   '."""
    lines = (traceback or "").strip().splitlines()
    marked = [line[1:].strip() for line in lines if line.startswith("E ")]
    text = " ".join(marked) if marked else (lines[-1] if lines else "?")
    name, _, rest = text.partition(": ")
    # without the exception's dotted name (a class: capitalised), keeping a rule id that begins the text
    dotted_class = "." in name and " " not in name and name.rsplit(".", 1)[-1][:1].isupper()
    return rest if rest and dotted_class else text


def read_campaign(database) -> list[TestRecord]:
    """Each test HypoFuzz started, as its database holds it (HypoFuzz's reports lag a little:
    a process saves one when it finds new behaviour or changes test)."""
    from hypofuzz.database import FailureState, HypofuzzDatabase, test_keys_key

    db = HypofuzzDatabase(database)
    records = []
    for key in sorted(set(db.fetch(test_keys_key))):
        latest: dict = {}  # process -> its latest report
        for report in db.reports.fetch(key):
            if report.worker_uuid not in latest or report.elapsed_time > latest[report.worker_uuid].elapsed_time:
                latest[report.worker_uuid] = report
        record = TestRecord(nodeid=next(iter(latest.values())).nodeid if latest else None,
                            examples=sum(sum(r.status_counts.values()) for r in latest.values()),
                            seconds=sum(r.elapsed_time for r in latest.values()))
        for state in (FailureState.SHRUNK, FailureState.UNSHRUNK):
            for choices in db.failures(state=state).fetch(key):
                seen = db.failure_observations(state=state).fetch(key, choices)
                if seen is None:
                    continue
                record.nodeid = seen.property
                if "Skipped" in seen.status_reason:
                    record.skipped = _message(seen.metadata.traceback)
                    continue
                record.failures.append((state is FailureState.SHRUNK, _message(seen.metadata.traceback),
                                        seen.representation, seen.metadata.reproduction_decorator))
        fatal = db.fatal_failures.fetch(key)
        if fatal is not None:
            record.fatal = fatal.traceback.strip().splitlines()[-1]
        records.append(record)
    return records


def any_failure(database) -> tuple[bool, bool]:
    """(a failure is saved, a shrunk one is), for any test."""
    from hypofuzz.database import FailureState, HypofuzzDatabase, test_keys_key

    db = HypofuzzDatabase(database)
    keys = set(db.fetch(test_keys_key))
    shrunk = any(next(iter(db.failures(state=FailureState.SHRUNK).fetch(key)), None) is not None for key in keys)
    unshrunk = any(next(iter(db.failures(state=FailureState.UNSHRUNK).fetch(key)), None) is not None for key in keys)
    return shrunk or unshrunk, shrunk


def format_campaign(records, *, workers: int, seconds: float, first_failure_s: float | None) -> str:
    lines = [f"HypoFuzz campaign: {workers} process{'es' if workers > 1 else ''}, {seconds:.1f} s"]
    unnamed = [record for record in records if record.nodeid is None]
    for record in records:
        if record.nodeid is None:
            continue
        rate = f", {record.examples / record.seconds:.0f}/s" if record.seconds else ""
        state = ("could not run: " + record.fatal if record.fatal else "skipped: " + record.skipped
                 if record.skipped else "FAILED" if record.failures else "held" if record.examples
                 else "no examples reported yet")
        lines.append(f"  {record.nodeid}: {record.examples} examples{rate}: {state}")
        for shrunk, message, shown, decorator in sorted(record.failures, key=lambda f: not f[0])[:1]:
            lines.append(f"    {message}")
            lines.append(f"    ({'shrunk' if shrunk else 'not yet shrunk'}) " + shown.replace("\n", "\n    "))
            if decorator:
                lines.append(f"    to replay it: {decorator} on that test")
    if unnamed:
        lines.append(f"  and {len(unnamed)} test{'s' if len(unnamed) > 1 else ''} started with no report saved yet")
    if first_failure_s is not None:
        lines.append(f"first failure saved {first_failure_s:.1f} s after the start")
    return "\n".join(lines)


def _stop(process) -> None:
    """End HypoFuzz, its processes and their targets' workers (one process group)."""
    if process.poll() is not None:
        return
    kill = (lambda sig: os.killpg(process.pid, sig)) if hasattr(os, "killpg") else (lambda sig: process.kill())
    try:
        kill(signal.SIGTERM)
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        kill(signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


def run(args) -> int:
    """Run the campaign for args.seconds; the command's exit code (0 held, 1 found, 2 an error)."""
    from topkspec.fuzz.config import DEFAULT_DATABASE
    from topkspec.fuzz.database import open_database

    check_usable(args)
    database_path = args.database or DEFAULT_DATABASE
    database = open_database(database_path, named=True)
    budget = args.seconds if args.seconds is not None else 60.0
    start = time.perf_counter()
    first_failure_s = None
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command_line(args.workers or 1, database_path), stdout=log,
                                   stderr=subprocess.STDOUT, env={**os.environ, **environment(args)},
                                   start_new_session=True)
        try:
            while time.perf_counter() - start < budget and process.poll() is None:
                time.sleep(POLL_S)
                found, shrunk = any_failure(database)
                if found and first_failure_s is None:
                    first_failure_s = time.perf_counter() - start
                if shrunk and args.exitfirst:
                    break
        except KeyboardInterrupt:
            _stop(process)
            return 130
        ended_itself = process.poll() is not None
        _stop(process)
        log.seek(0)
        output = log.read()
    elapsed = time.perf_counter() - start
    records = read_campaign(database)
    if ended_itself and "Found a failing input for every test" not in output:
        print(output.rstrip()[-4000:], file=sys.stderr)
        raise UsageError("HypoFuzz stopped before its time: its output is above")
    print(format_campaign(records, workers=args.workers or 1, seconds=elapsed, first_failure_s=first_failure_s))
    if any(record.fatal for record in records):
        return 2
    if any(record.failures for record in records):
        return 1
    return 0 if records and all(record.examples or record.skipped for record in records) else 3
