"""One adapter module per runtime, each named after it: a `Target` subclass that describes what
the runtime promises (`validates`, `supports()`, its contract in contracts.py) and calls it, and
the repro writer that says how a bug report's repro.py calls it (registered with
topkspec.repro.writers). kernels/ holds the scripts a runtime in an environment of its own runs
(topkspec.targets.foreign). Adapters import the shared machinery of topkspec.targets, the
repro writers and, for DirectML, the stack's rooms below the targets (topkspec.directml); the
registry finds them by name, so nothing in the machinery imports an adapter."""
