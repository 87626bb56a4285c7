"""Reproduction: the standalone repro.py a bug report carries.

    writers.py     what a target supplies: a ReproWriter (its template, the values that fill
                   it, the stack a report names), registered by kind
    plugin.py      the writers of a user's own targets: a plain function (or the one a
                   CallableTarget wraps) and any Target through topkspec's adapter
    program.py     writing the program: data, the calls, the check, earlier calls first
    calls.py       which of a failure's calls the program makes, and the expected answer
    relations.py   how a relation between calls (a metamorphic property) is replayed
    templates/     runtime/: the runtime part of each kind; program/: the head and the checks

Imports the spec and the properties (to judge as the suite does); the targets import it.
"""
from topkspec.repro import plugin  # noqa: F401,E402  (registers the writers of a user's own targets)
