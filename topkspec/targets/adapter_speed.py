"""Runs per second of each target on small cases, first pass and with sessions cached.

    python -m topkspec.targets.adapter_speed [--cases 1000] [--seed 0] [--isolate] [TARGET ...]

The cases mix float32 and int32, ranks 1 to 4, every axis, both directions and random
sizes (1 to 8 per dimension) and K: 40 signatures, so the first pass pays for building
sessions or compiling and the second pass shows the cached cost per call. `--isolate` runs
each target in a worker process, as fuzz runs native targets: the difference is what the
worker's round trips cost.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from topkspec.spec.case import Case
from topkspec.targets.registry import BUILTIN_TARGETS, get_target


def small_cases(count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        dtype = ("float32", "int32")[rng.integers(2)]
        shape = tuple(int(s) for s in rng.integers(1, 9, size=rng.integers(1, 5)))
        axis = int(rng.integers(len(shape)))
        k = int(rng.integers(1, shape[axis] + 1))
        case = Case("dml:5.0", "TOP_K1", dtype, shape, axis, k, largest=bool(rng.integers(2)),
                    index_dtype="uint32")
        x = rng.integers(-50, 50, size=shape).astype(dtype)
        cases.append((case, x))
    return cases


def bench(target, cases) -> dict:
    judged = [(c.with_(index_dtype=target.index_dtype) if target.index_dtype else c, x) for c, x in cases]
    start = time.perf_counter()  # first pass: support discovery and session building included
    runnable = []
    for case, x in judged:
        if target.supports(case) is None:
            target.run(case, x)
            runnable.append((case, x))
    passes = [time.perf_counter() - start]
    start = time.perf_counter()
    for case, x in runnable:
        target.run(case, x)
    passes.append(time.perf_counter() - start)
    return {"target": target.name, "cases": len(runnable), "unsupported": len(cases) - len(runnable),
            "first_pass_per_s": len(runnable) / passes[0] if passes[0] else float("inf"),
            "cached_per_s": len(runnable) / passes[1] if passes[1] else float("inf")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", default=list(BUILTIN_TARGETS))
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--isolate", action="store_true", help="run each target in a worker process")
    args = parser.parse_args(argv)
    cases = small_cases(args.cases, args.seed)
    print(f"{'target':<22} {'cases':>6} {'first pass/s':>13} {'cached/s':>10}")
    for name in args.targets:
        target = get_target(name)
        ok, reason = target.available()
        if not ok:
            print(f"{name:<22} skipped: {reason}")
            continue
        if args.isolate:
            from topkspec.targets.isolation import IsolatedTarget

            target.close()
            target = IsolatedTarget(name)
        row = bench(target, cases)
        target.close()
        print(f"{row['target']:<22} {row['cases']:>6} {row['first_pass_per_s']:>13.0f} {row['cached_per_s']:>10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
