"""Speed and coverage: examples per second per target, with the time split between
generation, the target and the checks, beside Hypothesis's own floor measured in the same
process; then how often each adversarial pattern occurs in the examples each group draws.

    topkspec bench --targets reference,onnxruntime --max-examples 300 --seed 0 --repeat 3

prints JSON lines: the floor, one line per target, then one coverage line per property group
and spec profile of the targets. `python -m topkspec.fuzz.bench --spec onnx:24` prints the
coverage as tables a person reads. With `--bugs FILE` (plain TopK functions with planted bugs,
such as the project's tests/planted_bugs.py), one line per bug says how long a run takes to
its first failure, over `--seeds` seeds.
"""
from __future__ import annotations

import argparse
import ast
import time

from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from hypothesis import seed as hypothesis_seed

# Groups whose examples are (case, x), and whether their inputs may hold NaN.
COVERAGE_GROUPS = {"valid": False, "nan": True, "metamorphic": True, "deterministic": True}


def _floor_once(max_examples: int, seed: int) -> tuple[int, float]:
    """(examples, seconds) of a @given over two integers that does nothing."""
    calls = []

    @hypothesis_seed(seed)
    @settings(max_examples=max_examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(), st.integers())
    def nothing(a, b):
        calls.append(None)

    start = time.perf_counter()
    nothing()
    return len(calls), time.perf_counter() - start


def _median(items, key):
    """The middle item by `key` (the upper one of an even count)."""
    return sorted(items, key=key)[len(items) // 2]


def _floor_line(samples) -> dict:
    """The floor's median sample."""
    count, seconds = _median(samples, key=lambda sample: sample[1])
    return {"target": "hypothesis-floor", "examples": count, "seconds": round(seconds, 4),
            "examples_per_s": round(count / seconds, 1), "samples": len(samples)}


def _target_once(name: str, max_examples: int, seed: int, progress, isolate: bool | None = None,
                 database: str | None = None):
    """One fuzz run as a user's would go (ci settings, the target isolated as by default, or as
    `isolate` says; with `database`, that example database), but without shrinking or reports:
    the search alone is timed."""
    from topkspec.fuzz.config import RunConfig
    from topkspec.fuzz.run import run_fuzz

    return run_fuzz(RunConfig(target=name, max_examples=max_examples, seed=seed, settings="ci",
                              shrink=False, progress=progress, isolate=isolate, database=database,
                              keep_calls=True))


def bare_rate(name: str, calls, timeout: float) -> float | None:
    """Cases per second of the runtime alone on `calls` [(case, x)], the cases a campaign
    made: a fresh target in this process (no worker), each call once in the campaign's order,
    with no generation and no checks. A refusal or an error is the runtime's answer too, and
    counts. None when there were no calls."""
    from topkspec.fuzz.resolve import resolve_target

    if not calls:
        return None
    target = resolve_target(name, isolate=False, timeout=timeout)
    try:
        start = time.perf_counter()
        for case, x in calls:
            try:
                target.run(case, x)
            except Exception:  # a refusal, as the campaign met it: still a call made
                pass
        return len(calls) / (time.perf_counter() - start)
    finally:
        target.close()


def database_kind(where: str | None) -> str:
    """What a bench line says of its example database: none, directory or redis (never the
    location, whose URL may hold a password)."""
    if where is None:
        return "none"
    return "redis" if where.startswith(("redis://", "rediss://", "unix://")) else "directory"


def _share_of_floor(run, before, after) -> float:
    """The run's rate over the floor's, the floor timed just before and just after it."""
    floor_seconds = (before[1] + after[1]) / 2
    return (run.total_examples / run.seconds) / (before[0] / floor_seconds)


def _target_line(name: str, paired, database: str | None = None, bare: float | None = None) -> dict:
    """The run whose share of the floor is the median of `paired` [(share, run)] (the same
    seed draws the same examples each time); generation is what Hypothesis spends outside the
    example bodies (drawing and bookkeeping). `bare`: the runtime's own cases per second on
    that run's cases (bare_rate)."""
    share, result = _median(paired, key=lambda pair: pair[0])
    timing = result.timing
    cases_per_s = result.cases / result.seconds
    return {"target": name, "profile": result.profile, "examples": result.total_examples,
            "examples_per_s": round(result.total_examples / result.seconds, 1),
            "cases": result.cases, "cases_per_s": round(cases_per_s, 1),
            "bare_cases_per_s": None if bare is None else round(bare, 1),
            "of_bare": None if not bare else round(cases_per_s / bare, 4),
            "generation_s": round(timing["group_s"] - timing["body_s"], 3),
            "target_s": round(timing["target_s"], 3), "checks_s": round(timing["checks_s"], 3),
            "seconds": round(result.seconds, 3), "start_s": round(result.start_seconds, 3),
            "failures": len(result.failures), "in_worker": result.in_worker, "database": database_kind(database),
            "of_floor": round(share, 3), "of_floor_runs": sorted(round(pair[0], 3) for pair in paired)}


def bug_names(path: str) -> list[str]:
    """The planted bugs of a file: its public top-level functions, but for names in capitals
    (a correct implementation kept beside the bugs, say). Read from the source, not imported."""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError) as exc:  # ValueError: not UTF-8, or a NUL byte
        from topkspec.errors import UsageError
        raise UsageError(f"--bugs {path}: {exc}") from None
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and not node.name.startswith("_") and not node.name.isupper()]


def planted_bugs(spec: str) -> tuple[str, list[str]]:
    """(file, bug names) from `FILE` (every bug in it) or `FILE:NAME,NAME`; an unknown name
    or an unreadable file is bad usage."""
    from topkspec.errors import UsageError

    path, sep, chosen = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        path, chosen = spec, ""
    names = bug_names(path)
    wanted = [name for name in chosen.split(",") if name] or names
    unknown = [name for name in wanted if name not in names]
    if unknown:
        raise UsageError(f"--bugs {spec}: {path} has no planted bug {', '.join(unknown)}")
    return path, wanted


def first_failure_once(target: str, max_examples: int, seed: int) -> tuple | None:
    """(seconds, examples) a run of `target` (ci settings, no shrinking) takes to its first
    failure, counted from its first example; None when `max_examples` find nothing."""
    from topkspec.fuzz.config import RunConfig
    from topkspec.fuzz.run import run_fuzz

    run = run_fuzz(RunConfig(target=target, max_examples=max_examples, seed=seed, settings="ci",
                             shrink=False, stop_at_first=True))
    return run.first_failure


def bug_line(path: str, name: str, *, seeds: int, max_examples: int) -> dict:
    """Time and examples to the first failure of one planted bug: median and max over the
    seeds that found it (a bug no seed finds has none)."""
    found = [first_failure_once(f"{path}:{name}", max_examples, seed) for seed in range(seeds)]
    found = [hit for hit in found if hit is not None]
    line = {"bug": name, "found": f"{len(found)} of {seeds}", "max_examples": max_examples}
    if found:
        seconds = sorted(hit[0] for hit in found)
        examples = sorted(hit[1] for hit in found)
        line.update(seconds_median=round(seconds[len(seconds) // 2], 3), seconds_max=round(seconds[-1], 3),
                    examples_median=examples[len(examples) // 2], examples_max=examples[-1])
    return line


def draw_examples(strategy, count: int, seed: int = 0) -> list:
    """`count` examples of `strategy` as a seeded run generates them (no test body)."""
    drawn = []

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def gather(example):
        drawn.append(example)

    gather()
    return drawn


def coverage(profile: str, *, max_examples: int = 300, seed: int = 0, groups=None):
    """One JSON-ready line per group of `profile` that draws (case, x): how often each
    adversarial pattern occurs among `max_examples` examples (see strategies.coverage)."""
    from topkspec.fuzz.groups import plan_groups
    from topkspec.strategies.coverage import tally
    from topkspec.targets.runtimes.reference import ReferenceTarget

    target = ReferenceTarget()
    target.graph_contexts = profile.startswith("onnx")  # as an ONNX-model target draws: graphs around the TopK
    planned = plan_groups(target, profile)
    for group in COVERAGE_GROUPS:
        if group not in planned or (groups is not None and group not in groups):
            continue
        table = tally(draw_examples(planned[group][0], max_examples, seed))
        if not COVERAGE_GROUPS[group]:  # NaN-free on purpose: no NaN row to read as a gap
            del table["values"]["NaN"]
        yield {"coverage": group, "profile": profile, **table}


def run_bench(names, *, max_examples: int = 300, seed: int = 0, repeat: int = 3, with_coverage: bool = True,
              progress=None, bugs: str | None = None, seeds: int = 5, isolate: bool | None = None,
              database: str | None = None):
    """JSON-ready lines: Hypothesis's floor first, then each target with its rate as a share of
    the floor's, then the coverage of each spec profile the targets were fuzzed at (progress
    lines, which target and how far, go to the `progress` stream when given).

    The machine's speed drifts from one minute to the next, so each target run is set against
    the floor timed just before and just after it, `repeat` times, and the median share counts.
    `isolate`: True or False runs every target in a worker process or in this one (None: as a
    fuzz run would). `database`: the example database of the target runs (None: none, as
    the ci settings have)."""
    floor_samples = [_floor_once(max_examples, seed)]
    paired = {}
    for number, name in enumerate(names, 1):
        if progress is not None:
            progress.write(f"topkspec: bench target {number} of {len(names)}: {name}\n")
        paired[name] = []
        for _ in range(repeat):
            run = _target_once(name, max_examples, seed, progress, isolate, database)
            floor_samples.append(_floor_once(max_examples, seed))
            paired[name].append((_share_of_floor(run, floor_samples[-2], floor_samples[-1]), run))
    yield _floor_line(floor_samples)
    profiles = []
    for name, runs in paired.items():
        median_run = _median(runs, key=lambda pair: pair[0])[1]
        bare = bare_rate(name, median_run.call_log, median_run.timeout or 10.0)
        line = _target_line(name, runs, database, bare)
        if line["profile"] not in profiles:
            profiles.append(line["profile"])
        yield line
    if bugs is not None:
        path, wanted = planted_bugs(bugs)
        for number, name in enumerate(wanted, 1):
            if progress is not None:
                progress.write(f"topkspec: bench planted bug {number} of {len(wanted)}: {name}\n")
            yield bug_line(path, name, seeds=seeds, max_examples=max_examples)
    if with_coverage:
        for profile in profiles:
            yield from coverage(profile, max_examples=max_examples, seed=seed)


def main(argv=None) -> int:
    """Coverage tables: python -m topkspec.fuzz.bench [--spec onnx:24] [--max-examples 1000]"""
    from topkspec.strategies.coverage import format_tally

    parser = argparse.ArgumentParser(description="how often each adversarial pattern is drawn")
    parser.add_argument("--spec", dest="profile", action="append", help="spec profile (repeatable; default onnx:24, dml:5.0)")
    parser.add_argument("--max-examples", type=int, default=1000, help="examples per group")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for profile in args.profile or ["onnx:24", "dml:5.0"]:
        for line in coverage(profile, max_examples=args.max_examples, seed=args.seed):
            print(f"[{profile}] " + format_tally(line["coverage"], line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
