"""DirectML itself: the `directml` target, its worker and its setup.

    target.py          the Target (DirectML.dll through the worker)
    worker.c           the native worker (built from source by `topkspec directml setup`)
    protocol.py        the worker's framed protocol and the descriptor's binary form
    client.py          the worker process: start, call, crash and hang handling
    environment.py     the cache folder, DirectML.dll, Wine, vkd3d, Mesa: what is there and what is missing
    install.py         `topkspec directml setup`
    compare.py         `topkspec directml compare`: where the documents and DirectML differ
    observations.json  what DirectML was observed to do where they differ (read by the spec's rules)
    reporting.py       report hooks; repro_program.py is the standalone repro it writes

Hooks for bug reports (lazy: importing this package loads nothing else):
    report_stack(target=None) -> dict, report_markdown(stack) -> str,
    write_repro(folder, case=None, x=None, *, relation="result", calls=None, descriptor=None, ...)
"""


def report_stack(target=None) -> dict:
    from topkspec.targets.directml.reporting import report_stack as run
    return run(target)


def report_markdown(stack: dict) -> str:
    from topkspec.targets.directml.reporting import report_markdown as run
    return run(stack)


def write_repro(folder, case=None, x=None, **options) -> list:
    from topkspec.targets.directml.reporting import write_repro as run
    return run(folder, case, x, **options)
