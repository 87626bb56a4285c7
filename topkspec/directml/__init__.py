"""DirectML's stack: what runs DirectML.dll (and ONNX Runtime's DirectML provider) for the
`directml` and `onnxruntime-directml` targets, natively on Windows and under Wine on Linux.

Its rooms, from the bottom up (tests/test_layout.py keeps the order):

    cache.py     the cache folder and state.json (what setup chose)
    worker/      the native worker programs (C), their framed protocol, and building them
    windows/     the Windows stack on Linux: Wine, vkd3d, Mesa, Xvfb, and a bundle's own stack
    client/      the worker processes: start, call, crash and hang handling, one TopK call,
                 ONNX Runtime sessions
                 -- the targets (topkspec.targets.runtimes.directml, .directml_ep) sit here --
    setup/       `topkspec directml setup` and `info`: install, and check the stack on known TopKs
    bundle/      `topkspec directml bundle` and `bundle-check`: the portable bundle for a GPU machine
    analyses/    `topkspec directml compare`, `layers` and `replay`: documents, layers and corpus
                 against DirectML

The rooms below the targets import spec and errors only; those above may import the targets,
the corpus and the known lists.
"""
