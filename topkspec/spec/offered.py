"""The value types a runtime offers, with the sentence or table of its documentation behind it:
a contract's `value_types` (spec.contracts). A type it does not offer is not promised: a
refusal of it is no "rejects a valid descriptor", and the run asks no case of it. Standard
library only."""
from __future__ import annotations

from dataclasses import dataclass

from topkspec.errors import UsageError


@dataclass(frozen=True)
class Offered:
    """The value types offered (`types`, the spec's names: "float32", "uint16", ...), and the
    sentence or table (`quote`) of the page (`title`, `url`) that lists them."""

    types: tuple
    quote: str
    url: str = ""
    title: str = ""

    def __post_init__(self):
        from topkspec.spec import dtypes

        unknown = [t for t in self.types if t not in dtypes.ALL_VALUE_TYPES]
        if unknown or not self.types:
            raise UsageError(f"value_types: {', '.join(map(repr, unknown)) or 'no type'} "
                             f"{'is no value type the spec knows' if unknown else 'given'} "
                             f"(expected some of {', '.join(dtypes.ALL_VALUE_TYPES)})")
        if not self.quote:
            raise UsageError("value_types needs `quote`: the sentence or table of the documentation that lists them")
        object.__setattr__(self, "types", tuple(self.types))

    def offers(self, dtype: str) -> bool:
        return dtype in self.types

    def to_dict(self) -> dict:
        return {"types": list(self.types), "quote": self.quote, "url": self.url, "title": self.title}


def offered_from(given, *, url: str = "", title: str = "", error=UsageError) -> Offered | None:
    """An Offered from what a user writes: None, an Offered, (types, quote), or a table with
    `types` and `quote` (and optionally `url`, `title`)."""
    if given is None or isinstance(given, Offered):
        return given
    if isinstance(given, (tuple, list)) and len(given) == 2 and isinstance(given[1], str):
        given = {"types": given[0], "quote": given[1]}
    if not isinstance(given, dict) or "types" not in given:
        raise error(f"value_types: expected a table with `types` and `quote`, got {given!r}")
    unknown = set(given) - {"types", "quote", "url", "title"}
    if unknown:
        raise error(f"value_types: unknown keys {', '.join(sorted(unknown))}")
    types = given["types"]
    if isinstance(types, str) or not isinstance(types, (list, tuple)):
        raise error(f"value_types: `types` must be a list of value types, got {types!r}")
    try:
        return Offered(tuple(types), given.get("quote", ""), given.get("url", url), given.get("title", title))
    except UsageError as exc:
        raise error(str(exc)) from None
