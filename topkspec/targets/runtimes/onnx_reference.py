"""The `onnx-reference` target: onnx.reference.ReferenceEvaluator running the shared model.

One evaluator per ONNX form (and per K at opset 1, where K is an attribute); K is a graph
input otherwise. The evaluator implements every opset the installed onnx package knows.
"""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target
from topkspec.targets.onnx_builder import (build_case_model, build_topk_model, graph_detail, keep_recent_graphs,
                                           model_key, onnx_form, onnx_repro_fill)
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts


class OnnxReferenceTarget(Target):
    contract = runtime_contracts.onnx_importer("ONNX reference evaluator (ONNX TopK)")
    name = "onnx-reference"
    default_profile = "onnx:24"
    index_dtype = "int64"
    # ONNX's own evaluator answers to ONNX's text (https://onnx.ai/onnx/operators/onnx__TopK.html):
    # K is "a single positive value" and the axis's "Accepted range is [-r, r-1]", so it is held
    # to refusing the rest; what it accepts instead is in its known list.
    validates = True
    graph_contexts = True  # a case's TopK runs inside its graph (Case.context)

    def __init__(self):
        self._evaluators: dict = {}
        self._support: dict = {}

    def version(self) -> str:
        try:
            import onnx
        except ImportError:
            return "not installed"
        return f"onnx {onnx.__version__} ReferenceEvaluator"

    def available(self):
        try:
            from onnx.reference import ReferenceEvaluator  # noqa: F401
        except ImportError as exc:
            return False, f"the onnx package with onnx.reference (pip install onnx): {exc}"
        return True, ""

    def _evaluator(self, form, k, model=None, key=()):
        key = (form, k if form.opset < 10 else None) + key
        if key not in self._evaluators:
            from onnx.reference import ReferenceEvaluator

            model = model or build_topk_model(form, k=k)  # the adapter's own code: its failure is the adapter's
            try:
                self._evaluators[key] = ReferenceEvaluator(model)
            except Exception as exc:  # the evaluator refused the model
                raise Rejected(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        return self._evaluators[key]

    def supports(self, case):
        """Probes each value type once with a tiny call: the evaluator fails for types its
        numpy kernels cannot handle."""
        form = onnx_form(case)
        if form.dtype not in self._support:
            probe = np.arange(3).astype(dtypes.numpy_dtype(form.dtype))
            probe_form = form.__class__(max(form.opset, 11), form.dtype, 1, 0, True, True)
            try:
                self._evaluator(probe_form, 1).run(None, {"X": probe, "K": np.array([1])})
                self._support[form.dtype] = None
            except Exception as exc:  # the evaluator refused the type (building or running)
                exc = exc.__cause__ if isinstance(exc, Rejected) and exc.__cause__ else exc
                self._support[form.dtype] = (f"onnx.reference cannot run TopK on {form.dtype}: "
                                             f"{type(exc).__name__}: {exc}")
        if self._support[form.dtype]:
            raise Rejected(self._support[form.dtype])
        return None

    def run(self, case, x):
        form = onnx_form(case)
        if case.context:  # the TopK inside a graph (spec.graphs): one evaluator per sizes and K
            model, feeds = build_case_model(form, case, x)
            evaluator = self._evaluator(form, int(case.k), model, model_key(case, x))
            keep_recent_graphs(self._evaluators)
        else:
            feeds = {"X": x}
            if form.opset >= 10:
                feeds["K"] = np.array([case.k], dtype=np.int64)
            evaluator = self._evaluator(form, int(case.k))
        try:
            values, indices = evaluator.run(None, feeds)[:2]  # a graph's further outputs follow
        except Exception as exc:  # the evaluator refused the call
            raise Rejected(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        return np.asarray(values), np.asarray(indices)

    def close(self):
        self._evaluators.clear()


def _repro_stack(target, case, _spec=None) -> RuntimeStack:
    return RuntimeStack("ONNX reference evaluator", f"TopK-{onnx_form(case).opset}", "", versions("onnx"),
                        ("onnx.reference.ReferenceEvaluator over a one-node model, K as a graph input",
                         *graph_detail(case)))


register_repro_writer("onnx-reference", ReproWriter("onnx_reference.tmpl", "numpy and onnx", onnx_repro_fill,
                                                    _repro_stack), target_class=OnnxReferenceTarget)
