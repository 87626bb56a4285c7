"""Replays a topkspec finding on DirectML through the same worker the suite used.

Standalone: Python 3 and numpy, no topkspec. It reads directml_repro.json (the calls, the
worker's command line and environment, what went wrong) and directml_inputs.npz (the inputs),
starts topk_worker.exe (under Wine with an Xvfb display of its own when the suite ran it so),
replays the calls and checks the same relation the suite checked.

    python repro_directml.py      exit 1 while the finding reproduces, 0 once it does not

Paths in directml_repro.json are those of the machine that wrote it (the worker, DirectML.dll,
the Wine prefix, the lavapipe): edit them to replay elsewhere, or set TOPKSPEC_DIRECTML_DLL_WINPATH
to another DirectML.dll (as the worker sees it: Z:\\... under Wine) to compare releases.
"""
import json
import os
import queue
import struct
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CMD_CREATE, CMD_EXECUTE, CMD_QUIT = 2, 3, 6
NAMES = {0: "S_OK", 0x80070057: "E_INVALIDARG", 0x80004005: "E_FAIL", 0x8007000E: "E_OUTOFMEMORY",
         0x887A0005: "DXGI_ERROR_DEVICE_REMOVED", 0x887A0006: "DXGI_ERROR_DEVICE_HUNG",
         0x887A0004: "DXGI_ERROR_UNSUPPORTED"}
STAGES = {1: "CreateOperator", 2: "CompileOperator", 3: "initialize", 4: "execute", 5: "read back", 6: "device"}


def hresult(status):
    return f"{NAMES.get(status, 'HRESULT')} (0x{status:08X})"


def shared_display(record):
    """The Xvfb display the suite's runs share (display.json in its cache), started and left
    running when there is none: Wine ties a prefix's session to the display that started it."""
    if os.environ.get("TOPKSPEC_DIRECTML_DISPLAY"):
        return os.environ["TOPKSPEC_DIRECTML_DISPLAY"]
    try:
        with open(record) as handle:
            info = json.load(handle)
        os.kill(int(info["pid"]), 0)
        if os.path.exists(f"/tmp/.X11-unix/X{int(info['display'])}"):
            return f":{int(info['display'])}"
    except (OSError, TypeError, ValueError, KeyError):
        pass
    read_end, write_end = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-nolisten", "tcp", "-screen", "0", "640x480x24"],
                            pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(write_end)
    number = os.read(read_end, 64).decode().strip()
    os.close(read_end)
    if record:
        try:
            with open(record, "w") as handle:
                json.dump({"pid": xvfb.pid, "display": int(number)}, handle)
        except OSError:
            pass
    return ":" + number


class Gone(Exception):
    pass


class Silent(Exception):
    pass


class Worker:
    def __init__(self, spec):
        env = dict(os.environ)
        env.update(spec["env"])
        if spec.get("display"):
            env["DISPLAY"] = shared_display(spec.get("display_record"))
        command = list(spec["command"])
        if os.environ.get("TOPKSPEC_DIRECTML_DLL_WINPATH"):
            command[command.index("--dll") + 1] = os.environ["TOPKSPEC_DIRECTML_DLL_WINPATH"]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env)
        self.replies = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        status, _, payload = self.wait(spec.get("start_timeout", 90))
        self.info = json.loads(payload.decode("utf-8", "replace"))
        if status & 0x80000000:
            self.close()
            raise SystemExit(f"the worker could not make its device: {self.info.get('failed')} {hresult(status)}")

    def _read(self):
        out = self.process.stdout
        while True:
            head = out.read(4)
            if len(head) < 4:
                break
            body = out.read(struct.unpack("<I", head)[0])
            self.replies.put(body)
        self.replies.put(None)

    def wait(self, timeout):
        try:
            body = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise Silent(f"no answer within {timeout:g} s") from None
        if body is None:
            raise Gone(f"the worker exited with code {self.process.wait()}")
        status, stage = struct.unpack_from("<II", body)
        return status, stage, body[8:]

    def send(self, command, payload, timeout):
        try:
            self.process.stdin.write(struct.pack("<II", 4 + len(payload), command) + payload)
            self.process.stdin.flush()
        except OSError:
            pass
        return self.wait(timeout)

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.write(struct.pack("<II", 4, CMD_QUIT))
                self.process.stdin.flush()
                self.process.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()


def execute(worker, call, x, timeout):
    encoded = bytes.fromhex(call["encoded"])
    data = np.ascontiguousarray(x, dtype=call["dtype"]).tobytes()
    status, stage, payload = worker.send(CMD_EXECUTE, encoded + struct.pack("<Q", len(data)) + data, timeout)
    if status & 0x80000000:
        return None, f"{STAGES.get(stage, stage)} returned {hresult(status)}"
    parts, at = [], 0
    for _ in range(2):
        (size,) = struct.unpack_from("<Q", payload, at)
        parts.append(payload[at + 8:at + 8 + size])
        at += 8 + size
    shape = tuple(call["out_shape"])
    count = int(np.prod(shape))
    values = np.frombuffer(parts[0], call["dtype"], count).reshape(shape)
    indices = np.frombuffer(parts[1], call["index_dtype"], count).reshape(shape)
    return (values, indices), None


def bits(a):
    a = np.asarray(a)
    return a.view(f"uint{a.dtype.itemsize * 8}") if a.dtype.kind == "f" else a


def same(a, b, nan_equal=True):
    (av, ai), (bv, bi) = a, b
    if av.shape != bv.shape:
        return False
    equal = bits(av) == bits(bv)
    if nan_equal and av.dtype.kind == "f":
        equal |= np.isnan(av) & np.isnan(bv)
    return bool(equal.all() and (ai.astype(np.int64) == bi.astype(np.int64)).all())


def nan_problems(call, x, values, indices):
    """The checks that hold whatever the NaN policy (topkspec's out.nan.unspecified)."""
    axis, k, largest = call["axis"], call["k"], call["largest"]
    xs = np.moveaxis(np.asarray(x), axis, -1).reshape(-1, np.asarray(x).shape[axis])
    vs = np.moveaxis(values, axis, -1).reshape(xs.shape[0], k)
    ix = np.moveaxis(indices, axis, -1).reshape(xs.shape[0], k).astype(np.int64)
    for r in range(xs.shape[0]):
        row, got, where = xs[r], vs[r], ix[r]
        if (where < 0).any() or (where >= row.size).any() or len(set(where.tolist())) != k:
            return f"sequence {r}: indices {where.tolist()} not distinct and in range"
        if not (bits(row[where]) == bits(got)).all():
            return f"sequence {r}: values are not the input at the returned indices"
        numbers = got[~np.isnan(got)] if got.dtype.kind == "f" else got
        pool = row[~np.isnan(row)] if row.dtype.kind == "f" else row
        best = np.sort(pool)[::-1] if largest else np.sort(pool)
        if not (numbers == best[:numbers.size]).all():
            return (f"sequence {r}: non-NaN values returned {numbers.tolist()}, expected the top "
                    f"non-NaN values {best[:numbers.size].tolist()}")
    return None


def main():
    with open(os.path.join(HERE, "directml_repro.json")) as handle:
        spec = json.load(handle)
    inputs = np.load(os.path.join(HERE, "directml_inputs.npz"))
    expected = np.load(os.path.join(HERE, "directml_expected.npz")) if os.path.exists(
        os.path.join(HERE, "directml_expected.npz")) else None
    relation, calls, timeout = spec["relation"], spec["calls"], spec.get("timeout", 30)
    print(f"replaying a {spec['failure']} on {spec['stack']}")
    started = time.monotonic()
    worker = Worker(spec["worker"])
    found = None
    try:
        if relation in ("accept", "reject"):
            status, _, _ = worker.send(CMD_CREATE, bytes.fromhex(calls[0]["encoded"]), timeout)
            refused = bool(status & 0x80000000)
            if relation == "accept" and refused:
                found = f"CreateOperator refuses a valid descriptor: {hresult(status)}"
            if relation == "reject" and not refused:
                found = f"CreateOperator accepts an invalid descriptor ({spec.get('rules')}): {hresult(status)}"
        elif "dtype" not in calls[0]:  # a descriptor no case carries: CreateOperator alone
            worker.send(CMD_CREATE, bytes.fromhex(calls[0]["encoded"]), timeout)
        else:
            results = []
            for i, call in enumerate(calls):
                result, refusal = execute(worker, call, inputs[f"x{i}"], timeout)
                if refusal:
                    found = f"call {i} was refused: {refusal}" if relation != "crash" else None
                    break
                results.append(result)
            if found is None and len(results) == len(calls):
                found = check(relation, calls, inputs, results, expected)
            if found is None and relation == "deterministic":
                again, _ = execute(worker, calls[0], inputs["x0"], timeout)
                if again is not None and not same(results[0], again, nan_equal=False):
                    found = "the same input gave different bits on a second run"
    except Gone as exc:
        found = f"the worker crashed: {exc}"
    except Silent as exc:
        found = f"the worker hung: {exc}"
    finally:
        worker.close()
    print(f"({time.monotonic() - started:.1f} s)")
    if found:
        print("reproduced:", found)
        return 1
    print("not reproduced: DirectML now does what the spec says")
    return 0


def check(relation, calls, inputs, results, expected):
    if relation == "result":
        values, indices = results[0]
        x = inputs["x0"]
        if np.asarray(x).dtype.kind == "f" and np.isnan(x).any():
            return nan_problems(calls[0], x, values, indices)
        if expected is not None and not same((values, indices), (expected["values"], expected["indices"])):
            bad = np.argwhere((bits(values) != bits(expected["values"])) | (indices != expected["indices"]))
            where = tuple(int(v) for v in bad[0]) if bad.size else ()
            return (f"at {list(where)}: expected value {expected['values'][where]!r} at index "
                    f"{expected['indices'][where]!r}, got {values[where]!r} at index {indices[where]!r}")
        return None
    if relation == "prefix":
        (big, little) = results
        axis, k = calls[1]["axis"], calls[1]["k"]
        prefix = tuple(np.take(a, np.arange(k), axis=axis) for a in big)
        return None if same(prefix, little) else f"K={k} is not the first {k} of K={calls[0]['k']}"
    if relation == "axis_moves":
        original, moved = results
        back = tuple(np.moveaxis(a, calls[1]["axis"], calls[0]["axis"]) for a in moved)
        return None if same(original, back) else "moving the axis changed the result"
    if relation == "same":
        return None if same(results[0], results[1]) else "TOP_K and TOP_K1 DECREASING differ"
    return None


if __name__ == "__main__":
    sys.exit(main())
