"""The one hook through which a target module registers the writer of its reports' repro.py:
the template `templates/<kind>.tmpl` beside this file, filled per case by `fill`, the stack
named by `stack` (see topkspec.report.writers.ReproWriter)."""
from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"


def register_writer(kind: str, target_class, *, needs: str, fill, stack) -> None:
    """Reports of `target_class`'s failures get repro.py from templates/<kind>.tmpl."""
    from topkspec.report.writers import ReproWriter, register_repro_writer

    register_repro_writer(kind, ReproWriter(template=TEMPLATES / f"{kind}.tmpl", needs=needs, fill=fill, stack=stack),
                          target_class=target_class)
