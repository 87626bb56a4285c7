"""How a run and its worker process exchange messages: pickled over a multiprocessing
Connection, with the large buffers in them (numpy arrays' data) carried through a block of
shared memory.

Through the pipe alone, an array is pickled, copied through a pipe that holds 64 KiB at a
time on Linux (a 256 KiB input crosses in four turns, each a switch between the processes)
and unpickled. Pickle protocol 5 hands each buffer to a callback instead (PEP 574, "out-of-band
data"): the sender copies it into the block, and the message says where it lies. The run
writes its requests' buffers to the first half of the block, the worker its replies' to the
second. A small buffer (under MIN_BLOCK_BUFFER bytes), one that does not fit in what is left
of its half, and anything pickle does not hand out as a buffer (a non-contiguous array, an
array of Python objects) stays in the pickle.

The run owns the block (`SharedBlock`): workers come and go, the block stays until the run
closes it. On a system without shared memory, everything travels in the pickle.
"""
from __future__ import annotations

import pickle
import struct
from multiprocessing import shared_memory

# Two halves of 2 MiB: the largest input the strategies draw is 65536 elements of 8 bytes
# (512 KiB), and its two outputs are no larger than it and an int64 array of its shape.
BLOCK_BYTES = 4 << 20
# Smaller buffers cost less in the pickle than the bookkeeping of putting them in the block.
MIN_BLOCK_BUFFER = 8192
_ALIGN = 64
_COUNT = struct.Struct("<I")  # a message starts with how many buffers lie in the block,
_PLACE = struct.Struct("<QQ")  # then where each starts and how long it is; the pickle follows


class SharedBlock:
    """The block of shared memory a run's workers use (`memory` is None when the system has
    none)."""

    def __init__(self, size: int = BLOCK_BYTES):
        try:
            self.memory = shared_memory.SharedMemory(create=True, size=size)
        except OSError:
            self.memory = None

    @property
    def name(self) -> str | None:
        return None if self.memory is None else self.memory.name

    def close(self) -> None:
        if self.memory is not None:
            memory, self.memory = self.memory, None
            try:
                memory.close()
            except BufferError:  # a copy cut short (Ctrl-C) still holds a view: unmapped at exit
                pass
            memory.unlink()


def attach(name: str | None):
    """The worker's view of the run's block (None when the run has none)."""
    return None if name is None else shared_memory.SharedMemory(name=name)


class Wire:
    """One end of the exchange: send(message), poll(timeout), recv(). `memory` is the shared
    block (or None) and `half` the half this end writes to: 0 for the run, 1 for its worker."""

    def __init__(self, conn, memory, half: int):
        self.conn = conn
        self.memory = memory
        size = 0 if memory is None else memory.size // 2
        self._start, self._end = half * size, (half + 1) * size

    def send(self, message) -> None:
        places = []
        cursor = self._start

        def out_of_band(buffer) -> bool:  # False: the buffer went to the block
            nonlocal cursor
            raw = buffer.raw()
            if raw.nbytes < MIN_BLOCK_BUFFER or cursor + raw.nbytes > self._end:
                return True
            self.memory.buf[cursor:cursor + raw.nbytes] = raw
            places.append((cursor, raw.nbytes))
            cursor += -(-raw.nbytes // _ALIGN) * _ALIGN
            return False

        data = pickle.dumps(message, protocol=5, buffer_callback=out_of_band if self.memory is not None else None)
        head = _COUNT.pack(len(places)) + b"".join(_PLACE.pack(*place) for place in places)
        self.conn.send_bytes(head + data)

    def poll(self, timeout: float) -> bool:
        return self.conn.poll(timeout)

    def recv(self):
        frame = self.conn.recv_bytes()
        (count,) = _COUNT.unpack_from(frame)
        start = _COUNT.size + count * _PLACE.size
        # copied out: the block is written again by the next message
        buffers = [bytearray(self.memory.buf[offset:offset + size])
                   for offset, size in _PLACE.iter_unpack(frame[_COUNT.size:start])]
        return pickle.loads(memoryview(frame)[start:], buffers=buffers)

    def close(self) -> None:
        self.conn.close()
