"""The native worker programs and their protocol: worker.c (DirectML.dll's TopK operators),
ort_worker.c (onnxruntime.dll's DirectML provider), worker_io.h (what both share), the framed
protocol and descriptor layout (protocol.py, ort_protocol.py), and building both from source
(build.py). Imports the spec, errors and directml.cache only."""
