"""A plug-in loaded by file path: its attributes are the forms get_target accepts."""
from sibling_topk import numpy_topk  # a sibling module, found because the file's directory is on sys.path

from topkspec.targets import CallableTarget, Target


def topk(x, *, axis, k, largest):
    return numpy_topk(x, axis=axis, k=k, largest=largest)


class PluginTarget(Target):
    name = "plugin-class"
    validates = True

    def run(self, case, x):
        return numpy_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)


instance = PluginTarget()


def make_target():
    return CallableTarget(numpy_topk, name="plugin-factory")


def refuses_everything(x, *, axis, k, largest):
    raise RuntimeError("this implementation refuses every input")


not_a_target = 42
