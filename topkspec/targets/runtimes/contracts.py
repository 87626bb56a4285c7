"""What each built-in runtime promises about TopK (spec.contracts), quoted from its own
documentation; each adapter declares its runtime's as its `contract`.

A framework with an API of its own is held to that API's page, point by point: a point the page
states is "documented"; where it is silent but the API implies it (K above the axis size cannot
give K elements; a dimension the tensor lacks is none) the promise is our reading, with the
reason; where it is silent and nothing follows, the point is "unspecified" and fails no target.
ONNX importers promise ONNX TopK at the opsets they import; DirectML promises its own text.
"""
from __future__ import annotations

from dataclasses import replace

from topkspec.spec.contracts import INTERPRETATION, Promise, dml_contract, onnx_contract

_IMPLIED_K = "Returning K elements of a dimension that has fewer is impossible; the page names no other outcome."
_IMPLIED_AXIS = "A dimension the input does not have is no dimension to select along; the page names no other."
_SILENT = "The page does not say."


def _framework(name: str, url: str, title: str, value_types=None, **points) -> "Contract":  # noqa: F821
    """A framework's contract: each point (value, quote) documented, (value, quote, reason) our
    reading, or value alone: unspecified (or implied), with no sentence to quote; `value_types`
    (types, quote): the value types the page offers (spec.offered), None for every type."""
    from topkspec.spec.contracts import Contract, POINTS
    from topkspec.spec.offered import offered_from

    promises = []
    for point in POINTS:
        given = points[point]
        value, quote, reason = (given + ("", ""))[:3] if isinstance(given, tuple) else (given, "", _SILENT)
        status = INTERPRETATION if reason else "documented"
        promises.append(Promise(point, value, quote, url, title, status, reason))
    return Contract(name, "own", tuple(promises), value_types=offered_from(value_types, url=url, title=title))


TORCH = _framework(
    "PyTorch torch.topk", "https://docs.pytorch.org/docs/stable/generated/torch.topk.html", "torch.topk (PyTorch)",
    k_zero="unspecified",
    k_above_axis=("refused", "Returns the k largest elements of the given input tensor along a given dimension.",
                  _IMPLIED_K),
    axis_out_of_range=("refused", "dim (int, optional) – the dimension to sort along", _IMPLIED_AXIS),
    sorted=("optional", "The boolean option sorted if True, will make sure that the returned k elements are "
                        "themselves sorted"),
    smallest=("offered", "If largest is False then the k smallest elements are returned."),
    indices=("returned", "A namedtuple of (values, indices) is returned with the values and indices of the largest "
                         "k elements of each row of the input tensor in the given dimension dim."),
    ties=("unspecified", "When using torch.topk, the indices of tied elements are not guaranteed to be stable and "
                         "may vary across different invocations."),
    nan="unspecified", signed_zeros="unspecified")

JAX = _framework(
    "JAX jax.lax.top_k", "https://docs.jax.dev/en/latest/_autosummary/jax.lax.top_k.html", "jax.lax.top_k (JAX)",
    k_zero="unspecified",
    k_above_axis=("refused", "k (int) – integer specifying the number of top entries.", _IMPLIED_K),
    axis_out_of_range=("refused", "axis (int) – optional integer specifying the axis along which to compute the "
                                  "top k entries.", _IMPLIED_AXIS),
    sorted=("always", "values[..., i, ...] is the i-th largest entry in operand along the specified axis, and its "
                      "index is indices[..., i, ...]."),
    smallest=("not_offered", "Returns top k values and their indices along the specified axis of operand."),
    indices=("returned", "indices is an array containing the indices corresponding to values."),
    ties=("index_order", "If two elements are equal, the lower-index element appears first."),
    nan="unspecified",
    signed_zeros=("tied", "If two elements are equal, the lower-index element appears first.",
                  "Equal under IEEE comparison, as -0.0 and +0.0 are."))

_TF_URL, _TF_TITLE = "https://www.tensorflow.org/api_docs/python/tf/math/top_k", "tf.math.top_k (TensorFlow)"
TENSORFLOW = _framework(
    "TensorFlow tf.math.top_k", _TF_URL, _TF_TITLE,
    k_zero=("empty", "k: 0-D int32 Tensor. Number of top elements to look for along the last dimension (along "
                     "each row for matrices).",
            "No lower bound is set; TensorFlow's TopK op documents k as 'An int that is >= 0'."),
    k_above_axis=("refused", "input: 1-D or higher Tensor with last dimension at least k."),
    axis_out_of_range=("refused", "Finds values and indices of the k largest entries for the last dimension.",
                       "top_k has no axis: the adapter moves the axis last with TensorFlow's own moveaxis, which "
                       "refuses an axis the input lacks."),
    sorted=("optional", "sorted: If true the resulting k elements will be sorted by the values in descending order."),
    smallest=("not_offered", "Finds values and indices of the k largest entries for the last dimension."),
    indices=("returned", "indices: The indices of values within the last dimension of input."),
    ties=("index_order", "If two elements are equal, the lower-index element appears first."),
    nan="unspecified",
    signed_zeros=("tied", "If two elements are equal, the lower-index element appears first.",
                  "Equal under IEEE comparison, as -0.0 and +0.0 are."))

# LiteRT runs what a TensorFlow user ships: tf.math.top_k, converted to TOPK_V2.
LITERT = replace(TENSORFLOW, name="LiteRT TOPK_V2 (a converted tf.math.top_k)", promises=tuple(
    replace(p, title=f"{_TF_TITLE}, the op LiteRT's TOPK_V2 is converted from") for p in TENSORFLOW.promises))

KERAS = _framework(
    "Keras keras.ops.top_k", "https://www.tensorflow.org/api_docs/python/tf/keras/ops/top_k", "keras.ops.top_k (Keras 3)",
    k_zero="unspecified",
    k_above_axis=("refused", "k: An integer representing the number of top elements to retrieve.", _IMPLIED_K),
    axis_out_of_range=("refused", "Finds the top-k values and their indices in a tensor.",
                       "top_k has no axis: the adapter moves the axis last with keras.ops.moveaxis, which refuses "
                       "an axis the input lacks."),
    sorted=("optional", "sorted: A boolean indicating whether to sort the output in descending order. Defaults to "
                        "True."),
    smallest=("not_offered", "Finds the top-k values and their indices in a tensor.",
              "Only descending order is named: the top-k are the largest."),
    indices=("returned", "A tuple containing two tensors. The first tensor contains the top-k values, and the second "
                         "tensor contains the indices of the top-k values in the input tensor."),
    ties="unspecified", nan="unspecified", signed_zeros="unspecified")

PADDLE = _framework(
    "PaddlePaddle paddle.topk", "https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/topk_en.html",
    "paddle.topk (PaddlePaddle)",
    k_zero="unspecified",
    k_above_axis=("refused", "k (int, Tensor) – The number of top elements to look for along the axis.", _IMPLIED_K),
    axis_out_of_range=("refused", "The effective range is [-R, R), where R is x.ndim."),
    sorted=("optional", "sorted (bool, optional) – controls whether to return the elements in sorted order, default "
                        "value is True."),
    smallest=("offered", "largest (bool, optional) – largest is a flag, if set to true, algorithm will sort by "
                         "descending order, otherwise sort by ascending order."),
    indices=("returned", "tuple(Tensor), return the values and indices."),
    ties="unspecified", nan="unspecified", signed_zeros="unspecified")

_MS_URL = "https://www.mindspore.cn/docs/en/master/api_python/ops/mindspore.ops.topk.html"
MINDSPORE = _framework(
    "MindSpore mindspore.ops.topk", _MS_URL, "mindspore.ops.topk (MindSpore)",
    k_zero="unspecified",
    k_above_axis=("refused", "k (int) – The number of elements to be returned.", _IMPLIED_K),
    axis_out_of_range=("refused", "dim (int, optional) – Specify the dimension for sorting.", _IMPLIED_AXIS),
    sorted=("optional", "If False , the obtained elements will not be sorted."),
    smallest=("offered", "If False , then return smallest elements."),
    indices=("returned", "Tuple(values, indices) of 2 tensors."),
    ties="unspecified", nan="unspecified", signed_zeros="unspecified")
# ops.topk's page defers to Tensor.topk's for the tie rule, stated there.
_MS_TENSOR = ("https://www.mindspore.cn/docs/en/stable/api_python/mindspore/Tensor/mindspore.Tensor.topk.html",
              "mindspore.Tensor.topk (MindSpore)")
_MS_TIES = "If the two compared elements are the same, the one with the smaller index value is returned first."
MINDSPORE = MINDSPORE.replaced(
    ties=Promise("ties", "index_order", _MS_TIES, *_MS_TENSOR),
    signed_zeros=Promise("signed_zeros", "tied", _MS_TIES, *_MS_TENSOR, INTERPRETATION,
                         "Equal under IEEE comparison, as -0.0 and +0.0 are."))

_TG_URL = "https://docs.tinygrad.org/tensor/ops/"
TINYGRAD = _framework(
    "tinygrad Tensor.topk", _TG_URL, "Tensor.topk (tinygrad)",
    k_zero="unspecified",
    k_above_axis=("refused", "Computes the top-k elements of the tensor along the specified `dim`.", _IMPLIED_K),
    axis_out_of_range=("refused", "Computes the top-k elements of the tensor along the specified `dim`.",
                       _IMPLIED_AXIS),
    sorted=("always", "Computes the top-k elements of the tensor along the specified `dim`.",
            "Only sorted_=True is implemented (sorted_=False raises NotImplementedError)."),
    smallest=("offered", "topk(k:int, dim:int=-1, largest:bool=True, sorted_:bool=True)",
              "The signature's largest flag; the page says no more."),
    indices=("returned", "Order of indices for equivalent elements is always preserved."),
    ties=("index_order", "Order of indices for equivalent elements is always preserved."),
    nan="unspecified", signed_zeros="unspecified")

#: The ONNX opsets whose TopK an importer is held to.
ONNX_OPSETS = (1, 10, 11, 24)


def onnx_importer(name: str, opsets=ONNX_OPSETS):
    """An ONNX importer's contract: ONNX TopK's text at the opsets it imports."""
    return onnx_contract(name, opsets)


DIRECTML = dml_contract("DirectML DML_OPERATOR_TOP_K1", ("2.1", "3.1", "5.0", "6.4"))
