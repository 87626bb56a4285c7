"""Known deviations: what a target is known to do against the spec, declared so a campaign
counts it instead of failing on it, and digs past it.

A list is TOML, one `[[known]]` table per deviation:

    [[known]]
    rule = "onnx.k.positive"            # required: the rule the failure is filed under, or a
                                        # pattern ("out.*": every result rule)
    class = "accepts an invalid one"    # optional: the failure class (any when left out)
    dtype = "float16"                   # optional: the case's value type
    k = 1                               # optional: the case's K (an integer)
    context = "k_shape_static"          # optional: the ONNX graph around the TopK (spec.graphs)
    profile = "onnx:1"                  # optional: a spec profile, or a family ("onnx", "dml")
    versions = "<1.32"                  # optional: a PEP 440 specifier on the target's version
    reason = "..."                      # what the runtime does, in a sentence
    url = "https://..."                 # the public issue, PR or doc page; where nothing public
                                        # exists yet, the finding's folder in topkspec's repository
                                        # ("findings/<name>/report.md": its report and repro)

Every built-in runtime ships its list beside this file (`<target>.toml`): `--known` without a
file reads it.

Imports the spec, properties and targets; nothing above it.
"""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from functools import lru_cache

from topkspec.errors import UsageError, read_toml

_HERE = os.path.dirname(__file__)
_FIELDS = {"rule", "class", "dtype", "k", "context", "profile", "versions", "reason", "url"}
_VERSION = re.compile(r"\d+(?:\.\d+)+(?:[a-z]+\d*)?(?:\+[\w.]+)?")


class KnownError(UsageError):
    """A known-deviation list that cannot be read or names what does not exist."""


@dataclass(frozen=True)
class KnownEntry:
    rule: str
    failure_class: str | None = None
    dtype: str | None = None
    profile: str | None = None
    versions: str | None = None
    reason: str = ""
    url: str = ""
    k: int | None = None
    context: str | None = None

    def matches(self, rule: str, failure_class: str | None, dtype: str | None, profile: str | None,
                version: str | None, k: int | None = None, context: str | None = None) -> bool:
        """Whether a failure of `rule` and `failure_class`, on a case of `dtype` and `k`, judged
        at `profile` against a target whose version string is `version`, is this deviation."""
        if rule != self.rule and not fnmatch.fnmatchcase(rule, self.rule):
            return False
        if self.failure_class is not None and failure_class != self.failure_class:
            return False
        if self.dtype is not None and dtype != self.dtype:
            return False
        if self.k is not None and k != self.k:
            return False
        if self.context is not None and context != self.context:
            return False
        if self.profile is not None and not _profile_matches(self.profile, profile):
            return False
        return self.versions is None or version_in(version, self.versions)

    @property
    def unreported(self) -> bool:
        """Linked to a finding of topkspec's register: nobody had reported it upstream."""
        return self.url.startswith("findings/")

    def outside(self, profile: str | None, version: str | None) -> str | None:
        """Why the entry does not apply to a run judged at `profile` against `version` (its
        profile or versions filter), or None when it does."""
        if self.profile is not None and not _profile_matches(self.profile, profile):
            return f"it is for {self.profile}, this run is at {profile}"
        if self.versions is not None and not version_in(version, self.versions):
            return f"it is for versions {self.versions}, this run's is {version}"
        return None

    def describe(self) -> str:
        """'onnx.k.positive (accepts an invalid one, float16, onnx:1, <1.32): reason <url>'"""
        scope = [s for s in (self.failure_class, self.dtype, self.k is not None and f"K = {self.k}",
                             self.context and f"in graph {self.context}", self.profile, self.versions) if s]
        text = self.rule + (f" ({', '.join(scope)})" if scope else "")
        if self.reason:
            text += f": {self.reason}"
        if self.url:
            text += f" <{self.url}>"
        return text


def _profile_matches(wanted: str, profile: str | None) -> bool:
    """A family ("onnx") matches its every profile; a profile matches the profiles that
    resolve to the same spec version (onnx:13 and onnx:11 are both TopK-11)."""
    from topkspec.spec import parse_profile

    if profile is None:
        return False
    if ":" not in wanted:
        return profile.split(":")[0] == wanted
    try:
        a, b = parse_profile(wanted), parse_profile(profile)
    except ValueError:
        return False
    return (a.family, a.opset, a.level) == (b.family, b.opset, b.level)


def version_in(version: str | None, specifier: str) -> bool:
    """Whether the first version number in a target's version string ('onnxruntime 1.32.0
    (CPUExecutionProvider)') satisfies a PEP 440 specifier; False when it has none."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    found = _VERSION.search(version or "")
    if found is None:
        return False
    try:
        return SpecifierSet(specifier).contains(Version(found.group()), prereleases=True)
    except InvalidVersion:
        return False


class KnownList:
    """The entries of one list, and where they came from (`source`, for the summary)."""

    def __init__(self, entries, source: str):
        self.entries = list(entries)
        self.source = source

    def __iter__(self):
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def match(self, rule, failure_class, dtype, profile, version, k=None, context=None) -> KnownEntry | None:
        """The first entry declaring this failure, or None."""
        return next((e for e in self.entries
                     if e.matches(rule, failure_class, dtype, profile, version, k, context)), None)


def shipped_path(target: str) -> str:
    """Where the list topkspec ships for a built-in target lives (it may not exist). A version
    of a runtime in an environment of its own (`onnxruntime@1.31`) shares the runtime's list,
    whose entries say which versions they cover."""
    return os.path.join(_HERE, f"{target.partition('@')[0]}.toml")


def shipped_targets() -> list:
    """The targets topkspec ships a list for."""
    return sorted(name[:-5] for name in os.listdir(_HERE) if name.endswith(".toml"))


@lru_cache(maxsize=None)
def _shipped(target: str) -> KnownList:
    return load_known(None, target)


def rules_declaring(filed: str, violation) -> tuple:
    """The rules a known entry may name to declare a violation filed under `filed`: that rule,
    then the others the same result breaks (an entry for the NaN rule declares a NaN result
    filed under out.order), except for an accepted invalid descriptor, declared by its own rule."""
    from topkspec.properties.failures import ACCEPTS_INVALID

    if violation is None or violation.failure_class == ACCEPTS_INVALID:
        return (filed,)
    return (filed,) + tuple(dict.fromkeys(r for r in violation.rules + violation.also if r != filed))


def known_upstream(failure, result, target: str | None) -> tuple[KnownEntry, str] | None:
    """(entry, the list's source) declaring a failure of `result`'s run: the run's own entry when
    it declared one (--known with --report-known), else one of the list topkspec ships for
    `target` (the name a run was given: a built-in target's), whether or not the run was given
    --known. None when neither declares it."""
    from topkspec.targets.registry import BUILTIN_TARGETS

    if failure.known is not None:
        known = getattr(result, "known", None)
        return failure.known, known.source if known is not None else "the known deviations given"
    if target not in BUILTIN_TARGETS:
        return None  # a user's own target: no list of topkspec's speaks of it
    shipped = _shipped(target)
    for rule in rules_declaring(failure.rule, failure.violation):
        entry = shipped.match(rule, failure.failure_class, getattr(failure.case, "dtype", None),
                              result.profile, result.version, getattr(failure.case, "k", None),
                              getattr(failure.case, "context", None))
        if entry is not None:
            return entry, shipped.source
    return None


def load_known(path: str | None, target: str) -> KnownList:
    """The list in TOML file `path`, or with None the list shipped for `target` (empty when
    topkspec ships none for it). A file that cannot be read, is not TOML, or names a rule,
    class or field that does not exist raises KnownError."""
    if path is None:
        shipped = shipped_path(target)
        if not os.path.exists(shipped):
            return KnownList([], f"topkspec ships no list for {target}")
        return KnownList(_read(shipped), f"topkspec's list for {target}")
    return KnownList(_read(path), path)


def _read(path: str) -> list:
    data = read_toml(path, KnownError, f"known deviations {path}")
    tables = data.get("known", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise KnownError(f"known deviations {path}: 'known' must be an array of tables ([[known]])")
    extra = sorted(set(data) - {"known"})
    if extra:
        raise KnownError(f"known deviations {path}: unknown top-level key(s) {', '.join(extra)}; "
                         f"entries go in [[known]] tables")
    return [_entry(path, n, table) for n, table in enumerate(tables, 1)]


def _entry(path: str, n: int, table: dict) -> KnownEntry:
    from topkspec import spec
    from topkspec.properties.failures import FAILURE_CLASSES

    where = f"known deviations {path}, entry {n}"
    extra = sorted(set(table) - _FIELDS)
    if extra:
        raise KnownError(f"{where}: unknown field(s) {', '.join(extra)}; fields are {', '.join(sorted(_FIELDS))}")
    for name, value in table.items():
        if name == "k":
            if type(value) is not int or value < 0:
                raise KnownError(f"{where}: k must be a whole number (the case's K), got {value!r}")
        elif not isinstance(value, str):
            raise KnownError(f"{where}: {name} must be a string, got {value!r}")
    rule = table.get("rule")
    if not rule:
        raise KnownError(f"{where}: it needs a rule")
    if not fnmatch.filter(spec.RULES, rule):
        raise KnownError(f"{where}: no rule {rule!r} in the spec (`topkspec spec` lists them)")
    failure_class = table.get("class")
    if failure_class is not None and failure_class not in FAILURE_CLASSES:
        raise KnownError(f"{where}: class {failure_class!r} is none of {', '.join(FAILURE_CLASSES)}")
    profile = table.get("profile")
    if profile is not None and profile not in ("onnx", "dml"):
        try:
            profile = spec.parse_profile(profile).name  # canonical: "dml:3_1" is "dml:3.1"
        except ValueError as exc:
            raise KnownError(f"{where}: {exc}") from None
    dtype = table.get("dtype")
    if dtype is not None:
        try:
            dtype = spec.dtypes.canonical(dtype)  # a failure's case carries the canonical name
        except ValueError:
            raise KnownError(f"{where}: dtype {dtype!r} is no value type; types are "
                             f"{', '.join(spec.dtypes.ALL_VALUE_TYPES)}") from None
    versions = table.get("versions")
    if versions is not None:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        try:
            SpecifierSet(versions)
        except InvalidSpecifier:
            raise KnownError(f"{where}: versions {versions!r} is not a PEP 440 specifier (e.g. '<1.32')") from None
    context = table.get("context")
    from topkspec.spec.graphs import CONTEXTS
    if context is not None and context not in CONTEXTS:
        raise KnownError(f"{where}: context {context!r} is no graph context; contexts are {', '.join(CONTEXTS)}")
    return KnownEntry(rule=rule, failure_class=failure_class, dtype=dtype, profile=profile,
                      versions=versions, reason=table.get("reason", ""), url=table.get("url", ""),
                      k=table.get("k"), context=context)
