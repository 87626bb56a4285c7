"""The kinds of argument a failure makes, with their stable ids: what a report says it argues, what
`--fail-on` selects, and what the findings register's kind column holds. It imports errors and the standard library.

1. own-documentation: it breaks the runtime's own documentation (its API page, quoted and linked);
2. crash: it crashes or hangs (the process died, or gave no answer in time);
3. contradicts-itself: two calls give answers that the contract's open points cannot both allow
   (the same call repeated gives two answers, a sequence alone and in a batch differ, ...);
4. standard: it breaks the standard the runtime implements (ONNX TopK, DirectML's TOP_K), for a
   runtime whose contract says it implements it;
5. feature-request: it refuses a value type the standard allows and the runtime's own kernel table
   does not list: a request for the type, not a bug;
6. open: it differs from other runtimes where every document is silent (how subnormals compare,
   a point its contract leaves open), and no call contradicts another: never a bug; it belongs in
   the divergence table (docs/divergence.md).

An adapter error has no kind (ADAPTER): the adapter's own code failed, so it argues nothing about
the runtime; it always fails a run.

    parse_fail_on("crash,standard")   # ("crash", "standard")
"""
from __future__ import annotations

from topkspec.errors import UsageError

OWN_DOCUMENTATION = "own-documentation"
CRASH = "crash"
CONTRADICTS_ITSELF = "contradicts-itself"
STANDARD = "standard"
FEATURE_REQUEST = "feature-request"
OPEN = "open"

#: The kinds, in the order a summary counts them.
KINDS = (OWN_DOCUMENTATION, CRASH, CONTRADICTS_ITSELF, STANDARD, FEATURE_REQUEST, OPEN)
#: The kinds that are bugs or requests to file: a run fails on these unless told otherwise.
BUG_KINDS = KINDS[:5]
#: What `--fail-on` fails on when it is not given.
DEFAULT_FAIL_ON = BUG_KINDS

#: No kind: an adapter error (the adapter's own code failed), which argues nothing about the runtime.
ADAPTER = "adapter-error"

#: Each kind in words: (the report's "Kind:" phrase, what it argues in a line).
WORDS = {
    OWN_DOCUMENTATION: ("breaks its own documentation", "the runtime's own API page promises otherwise"),
    CRASH: ("crashes or hangs", "the process died, or gave no answer in time"),
    CONTRADICTS_ITSELF: ("contradicts itself", "two calls whose answers no reading of its contract allows together"),
    STANDARD: ("breaks the standard it implements", "ONNX's or DirectML's text, which the runtime implements"),
    FEATURE_REQUEST: ("feature request", "a type the standard allows and the runtime's own table does not list"),
    OPEN: ("open: a divergence, not a bug", "every document is silent here; it goes in the divergence table"),
    ADAPTER: ("no kind: an adapter error", "the adapter's own code failed; nothing is known of the runtime"),
}


class FailOnError(UsageError):
    """A --fail-on list that names no kind, or one that is not a kind."""


def parse_fail_on(text: str | None) -> tuple:
    """The kinds a comma-separated `--fail-on` list names (None: DEFAULT_FAIL_ON); FailOnError
    for an empty list or a name that is no kind."""
    if text is None:
        return DEFAULT_FAIL_ON
    names = [name.strip() for name in str(text).split(",") if name.strip()]
    if not names:
        raise FailOnError(f"--fail-on {text!r}: name at least one kind ({', '.join(KINDS)})")
    unknown = [name for name in names if name not in KINDS]
    if unknown:
        raise FailOnError(f"--fail-on: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} no kind "
                          f"(expected some of {', '.join(KINDS)})")
    return tuple(kind for kind in KINDS if kind in names)


def fail_on_kinds(given) -> tuple:
    """The kinds `given` names: None (every bug kind), a comma-separated string as --fail-on
    takes it, or kind ids."""
    if given is None or isinstance(given, str):
        return parse_fail_on(given)
    return parse_fail_on(",".join(given))


def fails_run(kind: str, fail_on=DEFAULT_FAIL_ON) -> bool:
    """Whether a failure of `kind` fails a run that fails on `fail_on`: an adapter error always
    does (no verdict on the runtime was reached), an open one never (it is no bug)."""
    if kind == ADAPTER:
        return True
    return kind != OPEN and kind in tuple(fail_on)
