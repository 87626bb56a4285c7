"""A DirectML call laid out in numpy, for planting layout bugs without DirectML: the input is
written into its buffer through its strides and read back (or, with a planted bug, read as if it
were packed), and the outputs are written through their strides into buffers filled with the
guard byte (or, with a planted bug, one element further too). `run(case, x)` is a takes_case run;
`buffers()` gives what the last call left in its output buffers, as the directml target's
last_output_buffers does."""
import numpy as np

from topkspec.directml.client.layout_call import OutputBuffers, input_buffer
from topkspec.spec.case import selects_largest
from topkspec.spec.layouts import GUARD_BYTE, buffer_plan, offset_array
from topkspec.spec.reference import reference_topk


class LaidOutCall:
    takes_case = True

    def __init__(self, *, ignores_input_strides=False, writes_past_output=False, half_reversed=False):
        self.ignores_input_strides = ignores_input_strides
        self.writes_past_output = writes_past_output
        self.half_reversed = half_reversed  # with ALLOW_HALF_PRECISION_COMPUTATION: the top K in reverse order
        self.kept = None

    def buffers(self):
        return self.kept

    def __call__(self, case, x):
        plan = buffer_plan(case)
        raw = np.frombuffer(input_buffer(case, x, plan), np.uint8)
        entry = plan[0]
        data = raw[entry["offset"]:entry["offset"] + entry["total"]].view(case.dtype)
        if self.ignores_input_strides:
            read = np.zeros(x.size, case.dtype)
            read[:min(x.size, data.size)] = data[:x.size]
        else:
            read = data[offset_array(entry)]
        values, indices = reference_topk(read.reshape(x.shape), axis=case.norm_axis, k=case.k,
                                         largest=selects_largest(case))
        indices = indices.astype(case.index_dtype)
        if self.half_reversed and case.layout.flags & 1:
            values, indices = np.flip(values, case.norm_axis), np.flip(indices, case.norm_axis)
        outputs = []
        for entry, result in ((plan[1], values), (plan[2], indices)):
            whole = np.full(entry["buffer"], GUARD_BYTE, np.uint8)
            place = whole[entry["offset"]:entry["offset"] + entry["total"]].view(result.dtype)
            at = offset_array(entry)
            place[at] = result.reshape(-1)
            if self.writes_past_output and entry is plan[1]:
                past = entry["offset"] + (int(at.max()) + 1) * result.dtype.itemsize
                if past < whole.size:
                    whole[past] ^= 0xFF  # one byte of the element after the last one
            outputs.append(whole.tobytes())
        self.kept = OutputBuffers(outputs[0], outputs[1], tuple(plan))
        return values, indices


correct = LaidOutCall()
ignores_input_strides = LaidOutCall(ignores_input_strides=True)
writes_past_output = LaidOutCall(writes_past_output=True)
half_reversed = LaidOutCall(half_reversed=True)
