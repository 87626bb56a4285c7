"""Targets: the runtimes the suite drives, behind one interface (base.Target).

This package holds what every target shares: the interface (base.py), finding a target by
name (registry.py, import_string.py), running one in a worker process or another Python
environment (isolation.py, foreign.py, history.py, wire.py), a user's validator or function
(validator.py, base.CallableTarget), shared ONNX model building (onnx_builder.py), and the
listing. The adapters, one per runtime, are in runtimes/, above this machinery: nothing here
imports one.
"""
from topkspec.targets.base import AdapterError, CallableTarget, Rejected, Target
from topkspec.targets.registry import (ENTRY_POINT_GROUP, BUILTIN_TARGETS, TargetError, get_target,
                                       list_targets)

__all__ = ["Target", "CallableTarget", "Rejected", "AdapterError", "TargetError", "get_target", "list_targets",
           "BUILTIN_TARGETS", "ENTRY_POINT_GROUP"]
