"""DirectML's stack: what runs DirectML.dll (and ONNX Runtime's DirectML provider) for the
`directml` and `onnxruntime-directml` targets, natively on Windows and under Wine on Linux.

Its rooms, from the bottom up (tests/test_layout.py keeps the order):

    cache.py     the cache folder and state.json (what setup chose)
    worker/      the native worker programs (C), their framed protocol, and building them
    windows/     the Windows stack on Linux: Wine, vkd3d, Mesa, Xvfb, and a bundle's own stack
    client/      the worker processes: start, call, crash and hang handling, one TopK call,
                 ONNX Runtime sessions

All of it sits below the targets (topkspec.targets.runtimes.directml, .directml_ep) and imports
spec and errors only. The tools that run the targets on this stack (setup, the bundle, the
analyses) are a room of their own above them: topkspec.directml_tools.
"""
