"""The machine-readable TopK spec. Standard library only at import time."""
from topkspec.spec.case import Case
from topkspec.spec.rules import RULES, RULE_LIST, Rule, rule, DOCUMENTED, INTERPRETATION, UNSPECIFIED
from topkspec.spec import tables

__all__ = ["Case", "RULES", "RULE_LIST", "Rule", "rule", "tables",
           "DOCUMENTED", "INTERPRETATION", "UNSPECIFIED"]
