"""The run and its worker exchange messages with their arrays' data in shared memory."""
import multiprocessing

import ml_dtypes
import numpy as np
import pytest

from topkspec.targets.wire import MIN_BLOCK_BUFFER, SharedBlock, Wire, attach
from topkspec.spec import Case

CASE = Case("onnx:24", "TopK", "float32", (2, 3), -1, 2)


@pytest.fixture
def block():
    shared = SharedBlock(size=1 << 16)
    yield shared
    shared.close()


@pytest.fixture
def pipe():
    one, other = multiprocessing.Pipe()
    yield one, other
    one.close()
    other.close()


def _large(fill, dtype=np.int64):
    """An array large enough to go through the block."""
    return np.full(MIN_BLOCK_BUFFER // np.dtype(dtype).itemsize, fill, dtype=dtype)


def _arrays():
    return [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.arange(MIN_BLOCK_BUFFER, dtype=np.float32).reshape(-1, 8),
        np.array([-0.0, np.nan, np.inf], dtype=np.float16),
        np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16),
        np.array([2**63 - 1, -(2**63)], dtype=np.int64),
        np.arange(10, dtype=np.uint8)[::3],  # not contiguous: stays in the pickle
        np.zeros((0, 4), dtype=np.float64),
        np.array([1, "a"], dtype=object),
    ]


@pytest.mark.parametrize("with_block", [True, False])
def test_messages_arrive_whole_with_every_array_type_and_layout(block, pipe, with_block):
    memory = block.memory if with_block else None
    run, worker = Wire(pipe[0], memory, half=0), Wire(pipe[1], memory, half=1)
    message = ("run", (CASE, _arrays()))
    run.send(message)
    method, (case, arrays) = worker.recv()
    assert (method, case) == ("run", CASE)
    for sent, got in zip(_arrays(), arrays):
        assert got.dtype == sent.dtype and got.shape == sent.shape, (sent, got)
        if sent.dtype == object:
            assert list(got) == list(sent)
        else:
            assert got.tobytes() == sent.tobytes(), (sent, got)


def test_arrays_are_copied_out_so_the_next_message_cannot_change_them(block, pipe):
    run, worker = Wire(pipe[0], block.memory, half=0), Wire(pipe[1], block.memory, half=1)
    run.send(_large(1))
    first = worker.recv()
    run.send(_large(0))
    worker.recv()
    assert (first == 1).all() and first.flags.writeable


def test_the_two_directions_write_to_different_halves(block, pipe):
    run, worker = Wire(pipe[0], block.memory, half=0), Wire(pipe[1], block.memory, half=1)
    run.send(_large(7))
    worker.send(_large(9))  # written before the request is read
    assert (worker.recv() == 7).all()
    assert (run.recv() == 9).all()


def test_large_arrays_leave_the_pipe_and_small_ones_stay_in_it(block, pipe):
    run = Wire(pipe[0], block.memory, half=0)
    run.send(_large(5))
    assert len(pipe[1].recv_bytes()) < 1024, "a large array crossed the pipe"
    run.send(np.arange(4))
    assert len(pipe[1].recv_bytes()) > np.arange(4).nbytes, "a small array did not travel in the pickle"


def test_what_does_not_fit_in_its_half_travels_in_the_pickle(block, pipe):
    run, worker = Wire(pipe[0], block.memory, half=0), Wire(pipe[1], block.memory, half=1)
    big = np.arange(block.memory.size // 8, dtype=np.int64)  # as large as the whole block
    small = np.arange(MIN_BLOCK_BUFFER // 8, dtype=np.int64)
    run.send((small, big, small))
    got = worker.recv()
    assert [a.tolist() for a in got] == [small.tolist(), big.tolist(), small.tolist()]


def test_a_worker_attaches_to_the_block_by_name(block):
    view = attach(block.name)
    try:
        view.buf[:3] = b"abc"
        assert bytes(block.memory.buf[:3]) == b"abc"
    finally:
        view.close()
    assert attach(None) is None
