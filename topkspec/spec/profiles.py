"""Profiles name the spec version a descriptor is judged by: `dml:<feature level>` or `onnx:<opset>`.

DirectML tables are cumulative: a level uses the newest table row at or below it, and any later
level than the ones known is accepted. An ONNX opset resolves to the newest TopK version at or
below it (opset 13 judges by TopK-11).
"""
from __future__ import annotations

from functools import cached_property, lru_cache

from topkspec.errors import UsageError
from topkspec.spec.record import Record
from topkspec.spec.tables import ONNX_VERSIONS


class ProfileError(UsageError):
    """A profile string that names no spec version."""


_FIELDS = ("family", "name", "level", "opset", "requested_opset")


class Profile(Record):
    """One spec version. Fields: family ("dml" or "onnx"), name (canonical: "dml:3.1", "onnx:13"),
    level (DirectML feature level value, 0x3100), opset (the ONNX TopK version the opset resolves
    to: "1", "10", "11", "24"), requested_opset.

    An immutable record (see record.Record)."""

    _fields = __match_args__ = _FIELDS

    def __init__(self, family: str, name: str, level: int | None = None, opset: str | None = None,
                 requested_opset: int | None = None):
        self._set(family, name, level, opset, requested_opset)

    @cached_property  # worked out once per Profile (it is immutable): the validator asks per descriptor
    def level_name(self) -> str:
        """"3_1" for 0x3100."""
        return f"{self.level >> 12}_{(self.level >> 8) & 0xF}"

    def __str__(self) -> str:
        return self.name


def level_value(text) -> int:
    """Feature level value from 0x3100, "3_1", "3.1" or "DML_FEATURE_LEVEL_3_1" (the forms of
    forms.INPUT_FORMS: ASCII digits only, trimmed, the prefix in any case)."""
    from topkspec.spec.forms import feature_level

    value = feature_level(text)
    if value is None:
        raise ProfileError(
            f"unknown DirectML feature level {text!r} (expected e.g. 3_1, 3.1, "
            f"DML_FEATURE_LEVEL_3_1 or 0x3100)")
    return value


def resolve_opset(opset: int) -> str:
    versions = sorted(int(v) for v in ONNX_VERSIONS)
    usable = [v for v in versions if v <= opset]
    if not usable:
        raise ProfileError(f"ONNX opset {opset} has no TopK (TopK arrives at opset 1)")
    return str(usable[-1])


# Profiles by the (type, value) they were read from: a validator reads the FeatureLevel or opset
# of every descriptor, and a Profile is immutable. Only str and int keys, a bounded number.
_READ: dict = {}


def _remember(kind, text, profile: Profile) -> Profile:
    if type(text) in (str, int) and len(_READ) < 1024:
        _READ[(kind, type(text), text)] = profile
    return profile


def dml_profile(level) -> Profile:
    known = _READ.get(("dml", type(level), level)) if type(level) in (str, int) else None
    if known is not None:
        return known
    value = level_value(level)
    return _remember("dml", level, Profile("dml", f"dml:{value >> 12}.{(value >> 8) & 0xF}", level=value))


def onnx_profile(opset) -> Profile:
    known = _READ.get(("onnx", type(opset), opset)) if type(opset) in (str, int) else None
    if known is not None:
        return known
    return _remember("onnx", opset, _onnx_profile(opset))


def _onnx_profile(opset) -> Profile:
    if type(opset) is not int:
        from topkspec.spec.forms import TRIM, ascii_digits

        text = opset.strip(TRIM) if type(opset) is str else ""
        if not ascii_digits(text):
            raise ProfileError(f"ONNX opset must be an integer (ASCII digits), got {opset!r}")
        opset = int(text)
    return Profile("onnx", f"onnx:{opset}", opset=resolve_opset(opset), requested_opset=opset)


def parse_profile(text) -> Profile:
    """Profile from "dml:3.1", "dml:3_1", "dml:0x3100", "onnx:11", ... (or a Profile)."""
    if isinstance(text, Profile):
        return text
    if not isinstance(text, str) or ":" not in text:
        raise _unknown(text)
    return _parse_text(text)


@lru_cache(maxsize=256)
def _parse_text(text: str) -> Profile:
    # Cached: a fuzz run asks for the profile of every case, several times each, and a
    # Profile is immutable.
    family, _, rest = text.strip().partition(":")
    family = family.lower()
    if family == "dml":
        return dml_profile(rest)
    if family == "onnx":
        return onnx_profile(rest)
    raise _unknown(text)


def _unknown(text) -> ProfileError:
    return ProfileError(
        f"unknown profile {text!r}: expected dml:<feature level> (e.g. dml:3.1) or onnx:<opset> (e.g. onnx:11)")


# Profiles a suite run covers by default: one per table row and ONNX version.
STANDARD_PROFILES = ("dml:2.1", "dml:3.1", "dml:5.0", "onnx:1", "onnx:10", "onnx:11", "onnx:24")
