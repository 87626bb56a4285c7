"""Speed: examples per second per target, with the time split between generation, the target
and the checks, beside Hypothesis's own floor measured in the same process.

    topkspec bench --targets reference,onnxruntime --max-examples 300 --seed 0
"""
from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis import seed as hypothesis_seed


def hypothesis_floor(max_examples: int, seed: int = 0) -> dict:
    """Examples per second of a @given over two integers that does nothing."""
    calls = []

    @hypothesis_seed(seed)
    @settings(max_examples=max_examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(), st.integers())
    def nothing(a, b):
        calls.append(None)

    start = time.perf_counter()
    nothing()
    seconds = time.perf_counter() - start
    return {"target": "hypothesis-floor", "examples": len(calls), "seconds": round(seconds, 4),
            "examples_per_s": round(len(calls) / seconds, 1)}


def bench_target(name: str, *, max_examples: int, seed: int = 0, isolate=None, progress=None) -> dict:
    """One fuzz run (ci settings, no shrinking, no reports) timed: generation is what
    Hypothesis spends outside the example bodies (drawing and bookkeeping)."""
    from topkspec.runner import RunConfig, run_fuzz

    result = run_fuzz(RunConfig(target=name, max_examples=max_examples, seed=seed, settings_profile="ci",
                                isolate=isolate, shrink=False, progress=progress))
    timing = result.timing
    return {"target": name, "examples": result.total_examples,
            "examples_per_s": round(result.total_examples / result.seconds, 1),
            "generation_s": round(timing["group_s"] - timing["body_s"], 3),
            "target_s": round(timing["target_s"], 3), "checks_s": round(timing["checks_s"], 3),
            "seconds": round(result.seconds, 3), "failures": len(result.failures)}


def run_bench(names, *, max_examples: int = 300, seed: int = 0, progress=None):
    """JSON-ready lines: Hypothesis's floor first, then each target (progress lines, which target
    and how far, go to the `progress` stream when given)."""
    if progress is not None:
        progress.write("topkspec: bench: Hypothesis's floor\n")
    yield hypothesis_floor(max_examples, seed)
    for number, name in enumerate(names, 1):
        if progress is not None:
            progress.write(f"topkspec: bench target {number} of {len(names)}: {name}\n")
        yield bench_target(name, max_examples=max_examples, seed=seed, progress=progress)
