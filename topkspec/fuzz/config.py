"""How a run is configured: the run's options, its named Hypothesis settings, the limits
the run loop and the verdict use, and the error for a run that cannot start."""
from __future__ import annotations

import os
from dataclasses import dataclass

from topkspec.errors import UsageError
from topkspec.targets.isolation import DEFAULT_TIMEOUT

DEFAULT_DATABASE = os.path.join(".topkspec", "examples")

# The rule an adapter error is filed under: no rule of the spec, since the runtime was not judged.
ADAPTER_RULE = "adapter"
TIMEOUT_RULE = "timeout"  # the pseudo-rule a call with no answer in time is filed under

# Share of the budget each group gets (renormalised over the groups that apply).
GROUP_WEIGHTS = {"valid": 0.40, "nan": 0.20, "metamorphic": 0.15, "invalid": 0.15, "deterministic": 0.10, "accepts": 0.10,
                 "self": 0.15, "layout": 0.25}

# The run's settings by name: Hypothesis settings, registered with Hypothesis as profiles of the
# same names (and topkspec-<name>) by register_settings, never loaded here.
SETTINGS = {
    "ci": dict(derandomize=True, max_examples=200, deadline=None, database=None, print_blob=True),
    "dev": dict(max_examples=100, deadline=None),
    "nightly": dict(max_examples=5000, deadline=None),
    "gpu": dict(max_examples=300, deadline=None),
}
# Settings that keep failures in the example database unless the user names one.
SETTINGS_WITH_DATABASE = ("dev", "nightly", "gpu")
# Shapes per named settings (the strategies' defaults elsewhere: axes to 4096, 65,536
# elements). gpu: axes to 2**21 over a few rows, where GPU kernels switch algorithms
# (multi-block selection, sort-based paths for large K, slices over 2**16).
SHAPE_SETTINGS = {"gpu": dict(max_axis_size=1 << 21, max_elements=1 << 22)}

# A group that judged fewer than this share of its examples (at least one) judged too little to
# be a verdict: every other case was unsupported, refused as allowed, or not runnable.
MIN_JUDGED_SHARE = 0.10
# Exit code of a run that found nothing but judged too little (1 is "found something").
EXIT_VACUOUS = 3
EXIT_INTERRUPTED = 130

# Searches a group may make: each passes over the failures the ones before it kept, and the
# next starts only while the group's budget lasts and the last one found something new.
MAX_SEARCHES = 4

# Crashing examples restart the worker, hanging ones cost the time limit: shrink them a little.
MAX_CRASH_REPLAYS = 12
MAX_HANG_REPLAYS = 2


class RunError(UsageError):
    """A run that cannot start: bad spec profile or settings, bad database, unavailable target."""


def register_settings() -> None:
    """Register the settings ci, dev and nightly as Hypothesis settings profiles (loading none)."""
    from hypothesis import settings  # here: the command line resolves its target before Hypothesis loads

    for name, values in SETTINGS.items():
        settings.register_profile(f"topkspec-{name}", **values)
        settings.register_profile(name, **values)


@dataclass
class RunConfig:
    target: object = "onnxruntime"  # a name, import string or Target
    profile: str | None = None  # spec profile; None: the target's default
    max_examples: int | None = None  # budget of the whole run; None: the named settings'
    seed: int | None = None
    settings: str | None = None  # named settings: ci, dev, nightly (SETTINGS)
    database: str | None = None  # directory or redis:// URL; None: the profile's choice
    report_dir: str | None = None
    isolate: bool | None = None  # None: isolate native targets
    timeout: float = DEFAULT_TIMEOUT
    groups: tuple | None = None  # restrict to these groups
    progress: object = None  # a stream for progress lines, or None
    shrink: bool = True  # False: report failures as found (benchmarks measure the search alone)
    reduce: bool = True  # after shrinking, cut each failure down further (fuzz.minimal); needs shrink
    verbose: bool = False  # show the reducer's steps on stderr
    stop_at_first: bool = False  # end the run at its first failure (time to the first failure)
    strict_doc: bool = False  # the literal DirectML text: K must be less than the axis size
    known: str | None = None  # known deviations: a TOML file, "" for the target's shipped list, None for none
    report_known: bool = False  # shrink and report known deviations too (never a failure of the run)
    documents_only: bool = False  # judge by the documents alone: our readings broken are notes
    max_axis_size: int | None = None  # the longest axis drawn; None: the named settings' or the strategies'
    max_elements: int | None = None  # the most elements an input has; None: likewise
    confirm: bool = True  # replay each failure in a fresh process before filing it (fuzz.confirm)
    contract: object = None  # what the runtime promises: a Contract or a TOML file; None: the target's own
    nan_order: str | None = None  # --nan-order largest|totalorder|smallest: the NaN order checked; None: as the contract
    fail_on: object = None  # the kinds whose failures fail the run: ids, or "a,b" as --fail-on; None: every bug kind
    keep_calls: bool = False  # keep every call's (case, x) on the result (the bench replays them bare)


def shape_limits(settings_name: str | None, max_axis_size: int | None, max_elements: int | None) -> dict:
    """{max_axis_size, max_elements} the run draws with (None: the strategies' default): the
    options, else the named settings' (SHAPE_SETTINGS). An axis longer than the default room
    gets room for one such axis at least."""
    from topkspec.strategies.cases import DEFAULT_MAX_TOTAL

    named = SHAPE_SETTINGS.get(settings_name or "", {})
    axis = max_axis_size if max_axis_size is not None else named.get("max_axis_size")
    elements = max_elements if max_elements is not None else named.get("max_elements")
    if elements is None and axis is not None and axis > DEFAULT_MAX_TOTAL:
        elements = axis
    return {"max_axis_size": axis, "max_elements": elements}


