"""A runtime that, like one real runtime did, installs a SIGCHLD handler on import that ends the
process when any child dies, and a target around it written as docs/targets.md shows: it
imports the runtime in available() and version(), which run in the run's own process. Its
TopK crashes its process (os.abort) for K of 2 or more, so an isolated run sees a worker die."""
import os
import signal

import numpy as np

from topkspec.targets.base import Rejected, Target, selects_largest


def _install_handler():
    signal.signal(signal.SIGCHLD, lambda *_: os._exit(97))  # what the runtime did on import


class SigchldRuntimeTarget(Target):
    name = "sigchld-runtime"
    validates = True
    native = True

    def available(self):
        _install_handler()  # "import the runtime"
        return True, ""

    def version(self):
        _install_handler()
        return "sigchld-runtime 1.0"

    def run(self, case, x):
        if not 0 <= case.lowered_axis < x.ndim or not 1 <= case.k <= x.shape[case.lowered_axis]:
            raise Rejected("k or axis out of range")
        if case.k >= 2:
            os.abort()
        axis, largest = case.lowered_axis, selects_largest(case)
        key = -x.astype(np.float64) if largest else x.astype(np.float64)
        order = np.argsort(key, axis=axis, kind="stable")
        indices = np.take(order, range(case.k), axis=axis)
        return np.take_along_axis(x, indices, axis=axis), indices.astype(case.index_dtype)


target = SigchldRuntimeTarget()
