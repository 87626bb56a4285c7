"""topkspec: a property-based specification and fuzzing suite for the TopK operator.

`from topkspec import spec` loads the standard-library-only spec; `reference_topk`
(numpy) loads on first use.
"""
__version__ = "0.1.0"

__all__ = ["reference_topk", "spec", "__version__"]


def __getattr__(name):
    if name == "reference_topk":
        from topkspec.spec.reference import reference_topk

        return reference_topk
    if name == "spec":
        import importlib

        return importlib.import_module("topkspec.spec")
    raise AttributeError(f"module 'topkspec' has no attribute {name!r}")
