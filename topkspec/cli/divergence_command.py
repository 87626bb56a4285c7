"""`topkspec divergence`: each runtime's choice where every document is silent, as a Markdown table."""
from __future__ import annotations

import sys


def add_parser(sub) -> None:
    """Adds `divergence` to the topkspec command's subparsers."""
    divergence = sub.add_parser("divergence", help="each runtime's choice at the points no document settles "
                                                   "(NaN, signed zeros, subnormals, ties), as a Markdown table")
    divergence.add_argument("--targets", default=None,
                            help="comma-separated targets (default: every built-in target that computes)")
    divergence.add_argument("--timeout", type=float, default=60.0,
                            help="seconds a target may take to start and answer one probe")


def cmd_divergence(args) -> int:
    """Probe each target and print the table; a target that cannot run here is listed under it."""
    from topkspec.errors import UsageError
    from topkspec.fuzz.divergence import default_names, divergence_table, probe_target
    from topkspec.targets.registry import known_names, unknown_target

    names = default_names() if args.targets is None else [n.strip() for n in args.targets.split(",") if n.strip()]
    if not names:
        raise UsageError("--targets needs at least one target")
    for name in names:  # an unknown name is bad usage before any target starts
        if ":" not in name and name not in known_names():
            raise UsageError(unknown_target(name))
    rows = []
    for name in names:
        print(f"topkspec: probing {name}", file=sys.stderr)
        rows.append(probe_target(name, timeout=args.timeout))
    print(divergence_table(rows), end="")
    return 0
