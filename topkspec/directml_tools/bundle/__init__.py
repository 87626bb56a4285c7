"""`topkspec directml bundle` and `bundle-check`: a portable tarball that runs the DirectML
targets on a machine with a GPU. What goes in is read from a traced run (trace.py, select.py),
laid out and packed by make.py (with run.sh, readme.txt and the xkb_bindir.c shim beside it),
and checked in a scratch copy by check.py. Sits above the targets it traces: it imports them and
the stack's rooms below them."""
