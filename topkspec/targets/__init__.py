"""Targets: the runtimes the suite drives, behind one interface (see base.Target)."""
from topkspec.targets.base import AdapterError, CallableTarget, Rejected, Target
from topkspec.targets.registry import (ENTRY_POINT_GROUP, BUILTIN_TARGETS, TargetError, get_target,
                                       list_targets)

__all__ = ["Target", "CallableTarget", "Rejected", "AdapterError", "TargetError", "get_target", "list_targets",
           "BUILTIN_TARGETS", "ENTRY_POINT_GROUP"]
