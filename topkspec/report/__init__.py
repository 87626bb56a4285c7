"""Bug reports: a folder per distinct failure (target, rule, failure class) holding

- report.md: a plain title ("ONNX Runtime TopK-24 (CPU) accepts K = 0 and returns empty
  outputs"), the rule quoted from its public page, the minimal case, expected against actual,
  the repro and the stack;
- repro.py: a standalone program in the runtime's own API (no topkspec) that exits 1 while
  the bug is there and 0 once it is fixed, rendered from the template files in templates/;
- case.json: the case, the calls, the violation, the rules' citations and the stack;
- inputs.npz: the inputs of the calls, the outputs seen and the expected result.

Each report says which argument it makes, its kind (report.kinds, with the ids of spec.kinds),
in case.json and on the line under its title.

Each target plugs in its own repro program and stack description with
`topkspec.repro.writers.register_repro_writer`.

Imports everything below it (repro writes the program); nothing of fuzz or cli.
"""
from topkspec.report.compare import side_by_side
from topkspec.report.folder import slug, write_report, write_reports

__all__ = ["side_by_side", "slug", "write_report", "write_reports"]
