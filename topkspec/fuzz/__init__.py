"""The engine: Hypothesis drives the properties against a target and collects what broke.

- config: the run's options (RunConfig), named settings (SETTINGS), RunError;
- database: the example database (KeyedDatabase, open_database);
- results: what a run produces (Failure, RunResult);
- context: a group's calls to the target, timed and guarded;
- groups: the property groups (plan_groups) and the budget (split_budget);
- run: the run loop (run_fuzz);
- examples: one drawn example checked (group_test, group_example); batches and prefetch: many
  cases in one example, their calls sent to a worker together;
- resolve: which target a run drives, and in which process (resolve_target);
- summary: progress lines and the summary (format_summary);
- matrix: many targets and profiles in one run;
- divergence: each runtime's choice where no document settles it (`topkspec divergence`);
- bench: examples per second and pattern coverage (`python -m topkspec.fuzz.bench`).

The names below load on first use, so importing one module of the engine stays light.
Targets run in a worker process by topkspec.targets.isolation.

Imports every room below it; only the front ends (cli, suite, pytest_plugin) import it.
"""
import importlib

_WHERE = {
    "RunConfig": "config", "RunError": "config", "SETTINGS": "config", "register_settings": "config",
    "KeyedDatabase": "database", "open_database": "database",
    "Failure": "results", "RunResult": "results", "record_failure": "results",
    "plan_groups": "groups", "split_budget": "groups",
    "run_fuzz": "run", "group_test": "examples", "group_example": "examples", "resolve_target": "resolve",
    "format_summary": "summary", "Progress": "summary",
    "run_matrix": "matrix", "run_bench": "bench",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f"topkspec.fuzz.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'topkspec.fuzz' has no attribute {name!r}")
