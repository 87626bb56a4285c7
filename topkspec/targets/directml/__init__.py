"""DirectML itself: the `directml` target, its worker and its setup.

    target.py          the Target (DirectML.dll through the worker)
    worker.c           the native worker (built from source by `topkspec directml setup`)
    protocol.py        the worker's framed protocol and the descriptor's binary form
    client.py          the worker process: start, call, crash and hang handling
    cache.py           the cache folder and state.json (what setup chose)
    environment.py     the cache folder, DirectML.dll, Wine, vkd3d, Mesa: what is there and what is missing
    build.py           building both workers from source (worker_io.h is what they share)
    ort_worker.c       the ONNX Runtime worker: the Windows onnxruntime.dll's DirectML EP or CPU provider
    ort_protocol.py    its LOAD and RUN requests, on protocol.py's frames
    ep_worker.py       its process (client.Worker's handling) and its sessions
    ep_target.py       `onnxruntime-directml` off Windows: ort.py's adapter on those sessions
    layers.py          `topkspec directml layers`: DirectML.dll, the EP and the CPU provider side by side
    install.py         `topkspec directml setup`
    setup_check.py     its last step: the stack computes TopKs whose answers are known
    compare.py         `topkspec directml compare`: where the documents and DirectML differ
    repro_writer.py    the stack and repro.py of its bug reports (repro.tmpl: numpy and the worker)

`report_stack(target=None) -> dict` names the stack for reports of other tools (lazy: importing
this package loads nothing else).
"""


def report_stack(target=None) -> dict:
    from topkspec.targets.directml.target import report_stack as run
    return run(target)
