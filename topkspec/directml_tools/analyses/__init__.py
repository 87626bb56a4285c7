"""Comparisons run on the stack: where the documents and DirectML differ (compare.py), which
layer answers a case -- DirectML.dll, the DirectML EP, the CPU provider (layers.py) -- and the
conformance corpus's DirectML cases replayed (replay.py). Sits above the targets and the corpus,
which it imports with the stack's rooms below the targets."""
