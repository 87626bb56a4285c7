"""A target that asks for a longer time limit per call (a compiler's first build of a shape)."""
from topkspec.spec.reference import reference_topk
from topkspec.targets import Target
from topkspec.targets.base import selects_largest


class SlowCompiler(Target):
    name = "slow-compiler"
    native = True
    min_timeout = 42.0

    def run(self, case, x):
        return reference_topk(x, axis=case.norm_axis, k=case.k, largest=selects_largest(case))
