"""The worker process's side of isolation (targets.isolation): build the target, then serve
the run's requests until it says stop. A request is (method, args); the answer is (status,
payload). A batch of runs ("run_many") is answered in one message, after a bufferless
("begin", number) before each call, so the run times each call and knows which one a worker
that dies was running."""
from __future__ import annotations

import os
import signal

from topkspec.targets.base import AdapterError, Rejected, Target, describe_error
from topkspec.targets.quiet import quieted
from topkspec.targets.refusal import internal_error
from topkspec.targets.wire import Wire, attach


def _build(spec):
    if isinstance(spec, Target):
        return spec
    from topkspec.targets.registry import get_target
    return get_target(spec)


def _info(target) -> dict:
    return {"name": target.name, "version": target.version(), "validates": target.validates,
            "validates_tables": target.validates_tables, "index_dtype": target.index_dtype,
            "default_profile": target.default_profile, "support_fields": target.support_fields,
            "contract": target.contract.to_dict(), "smallest_by_key": target.smallest_by_key,
            "k_forms": tuple(getattr(target, "k_forms", ())),
            "graph_contexts": bool(getattr(target, "graph_contexts", False))}


def worker_main(conn, spec, block_name=None) -> None:
    """Serve requests (method, args) from `conn` until told to stop; answer (status, payload).
    Arrays travel through the run's shared block `block_name` (see topkspec.targets.wire).

    Whatever the target prints goes to stderr, so it cannot mix with the run's own output."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    try:
        os.dup2(2, 1)
    except OSError:
        pass
    try:
        memory = attach(block_name)
    except OSError as exc:  # the run's block is gone: say so, in a message that needs no block
        Wire(conn, None, half=1).send(("error", f"cannot attach the run's shared memory: {exc}"))
        return
    conn = Wire(conn, memory, half=1)
    try:
        target = _build(spec)
        with quieted(target):  # the runtime's own logging, as the target says to quiet it
            info = _info(target)
        conn.send(("ok", info))
    except Exception as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    while True:
        try:
            method, args = conn.recv()
        except (EOFError, OSError):
            return
        if method == "stop":
            target.close()
            return
        if method == "run_many":  # a batch: the answers go back together, each call begun aloud
            answers = []
            for number, call in enumerate(args[0]):
                conn.send(("begin", number))  # no buffers: the run times each call, and names the one that dies
                answers.append(_serve(target, "run", call))
            conn.send(("ok", answers))
            continue
        conn.send(_serve(target, method, args))


def _serve(target, method: str, args) -> tuple:
    """(status, payload): the target's answer to `method(*args)`, or what went wrong."""
    try:
        with quieted(target):
            return "ok", getattr(target, method)(*args)
    except Rejected as exc:  # the library failing in its own code is no refusal (targets.refusal)
        internal = internal_error(target, exc)
        return ("internal-error", str(internal)) if internal is not None else ("rejected", str(exc))
    except AdapterError as exc:
        return "adapter-error", str(exc)
    except Exception as exc:  # not a refusal (only Rejected is): the adapter broke
        return "adapter-error", f"{target.name}.{method}() raised {describe_error(exc)}"
