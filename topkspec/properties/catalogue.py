"""Every property, from the modules of each kind, and what the engine and the reports look up
in them: a property by name or by check, the relation a rule is observed by, the words of a
report's title."""
from __future__ import annotations

from topkspec.properties import acceptance, layouts, metamorphic, nan_order, result, self_consistency
from topkspec.properties.property import Property, Relation

#: Every property: the result ones most specific first, then the metamorphic, self-consistency
#: and acceptance ones.
CATALOGUE: tuple[Property, ...] = (result.PROPERTIES + nan_order.PROPERTIES + metamorphic.PROPERTIES
                                   + self_consistency.PROPERTIES + layouts.PROPERTIES + acceptance.PROPERTIES)

#: A property by its name.
BY_NAME = {prop.name: prop for prop in CATALOGUE}
#: A property by its check function.
BY_CHECK = {prop.check: prop for prop in CATALOGUE}

#: Relations between calls by name (the property's).
RELATIONS: dict[str, Relation] = {prop.name: prop.relation for prop in CATALOGUE if prop.relation}
#: The relation a failure filed under a rule is observed by.
RELATION_OF_RULE = {prop.rule_ids[0]: prop.name for prop in CATALOGUE if prop.relation}

#: (rule, verb phrase) for a wrong result's title, most specific first: the catalogue's order,
#: each property's own words in its order.
WORDS: tuple = tuple((rule.id, phrase) for prop in CATALOGUE for rule, phrase in prop.words)


def in_group(group: str) -> list[Property]:
    """The metamorphic properties the fuzz group `group` checks, in catalogue order."""
    return [prop for prop in CATALOGUE if prop.group == group]


__all__ = ["BY_CHECK", "BY_NAME", "CATALOGUE", "RELATIONS", "RELATION_OF_RULE", "WORDS", "in_group"]
