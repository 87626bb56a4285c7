"""The worker that runs a runtime in another Python environment (see topkspec.targets.foreign).

This file is run as a script by that environment's interpreter: `python foreign_worker.py
KERNEL.py`. It needs the standard library and numpy only (no topkspec, none of the suite's
dependencies): the kernel file beside it calls the runtime, and what crosses the pipe is plain
data. Requests come on stdin, answers go to stdout, each a frame: 4 bytes of length
(little-endian), then a pickle (protocol 4) of builtins, with every numpy array as
("ndarray", dtype name, shape, bytes). Whatever the runtime prints goes to stderr.

The kernel module defines `version()` and the functions the suite calls by name; any
exception from one is the runtime refusing the call, except NameError, AttributeError and
TypeError raised in the kernel file itself, which are the kernel's bugs.
"""
import importlib.util
import os
import pickle
import struct
import sys
import traceback

import numpy as np

_LENGTH = struct.Struct("<I")


def encode(obj):
    if isinstance(obj, np.ndarray):
        obj = np.ascontiguousarray(obj)
        name = "bfloat16" if obj.dtype.name == "bfloat16" else obj.dtype.str
        return ("ndarray", name, list(obj.shape), obj.tobytes())
    if isinstance(obj, (list, tuple)):
        return type(obj)(encode(item) for item in obj)
    if isinstance(obj, dict):
        return {key: encode(value) for key, value in obj.items()}
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def decode(obj):
    if isinstance(obj, tuple) and len(obj) == 4 and obj[0] == "ndarray":
        _, name, shape, data = obj
        if name == "bfloat16":  # numpy has no bfloat16 of its own: ml_dtypes, where it is there
            import ml_dtypes

            dtype = np.dtype(ml_dtypes.bfloat16)
        else:
            dtype = np.dtype(name)
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    if isinstance(obj, (list, tuple)):
        return type(obj)(decode(item) for item in obj)
    if isinstance(obj, dict):
        return {key: decode(value) for key, value in obj.items()}
    return obj


def send(out, message) -> None:
    data = pickle.dumps(encode(message), protocol=4)
    out.write(_LENGTH.pack(len(data)) + data)
    out.flush()


def receive(inp):
    head = inp.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    size, = _LENGTH.unpack(head)
    return decode(pickle.loads(inp.read(size)))


def _kernel_bug(exc, kernel_file) -> bool:
    if not isinstance(exc, (NameError, AttributeError, TypeError)):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename) == os.path.abspath(kernel_file)


def main(kernel_file: str) -> int:
    # The protocol owns the real stdout; what the runtime prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    try:
        spec = importlib.util.spec_from_file_location("topkspec_kernel", kernel_file)
        kernel = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kernel)
        send(out, ("ready", {"version": kernel.version(), "python": sys.version.split()[0],
                             "numpy": np.__version__, "executable": sys.executable}))
    except Exception as exc:  # the runtime does not import here: say why, in one message
        send(out, ("error", f"{type(exc).__name__}: {exc}"))
        return 1
    while True:
        request = receive(inp)
        if request is None or request[0] == "stop":
            return 0
        method, args = request
        if not callable(getattr(kernel, method, None)):  # the suite asked for what the kernel lacks
            send(out, ("adapter-error", f"the kernel {kernel_file} has no function {method}()"))
            continue
        try:
            send(out, ("ok", getattr(kernel, method)(*args)))
        except Exception as exc:
            status = "adapter-error" if _kernel_bug(exc, kernel_file) else "rejected"
            send(out, (status, f"{type(exc).__name__}: {str(exc).strip()}"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
