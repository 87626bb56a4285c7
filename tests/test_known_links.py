"""Every link of a shipped known list describes its entry's behaviour, as far as a test can tell
without reading the web.

A known entry (topkspec/known/<target>.toml) links either a finding's report in findings/ or a
public page. What this test can check, and how:

- A finding's report: the finding is this target's (its folder is named for the target, or for
  the runtime the target wraps), and it describes the entry: the entry's rule is related to the
  finding's rule (the same; both rules of the result, since one wrong result breaks several, as
  NaN's rule and the order with the selection; a crash on an invalid descriptor, filed under
  out.invalid_rejected, for a finding of a descriptor rule), or else the report names the rule
  (a descriptor rule such as onnx.k.positive is a separate promise from onnx.k.max, so a report of
  K above the axis size must say, in so many words, that it also describes K = 0); the entry's
  dtype is the case's or the report names it; the entry's K is the case's or the report names it
  ("K = 1"). Whether the report's words describe the behaviour, and not only name it, no test
  reads.
- A public page: PAGES below records, by hand, what each linked page was read to say: its title,
  the value types it is about (an issue about int64 says nothing of uint64), the types a
  documented type table lists as supported, and phrases it carries that entries quote. An entry
  whose dtype the page is not about, whose refused dtype the page's table lists as supported, or
  that quotes a phrase recorded for another page, fails. UNREAD lists the links nobody has
  recorded here; they are checked for nothing but being listed, so a new public link must be
  recorded or consciously left unread.

Limits: the records are a person's reading, not the page; a page that changes after it was read
is not noticed; an entry that quotes a phrase no record holds is not checked; a link whose page
is about the right type and rule but another runtime's version is not caught.
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass

import pytest

from topkspec.known import KnownEntry, load_known, shipped_targets

FINDINGS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "findings")


@dataclass(frozen=True)
class Page:
    title: str
    dtypes: frozenset | None = None     # the value types the page is about; None: not about a type
    supported: frozenset | None = None  # a documented type table: the types it lists
    quotes: tuple = ()                  # phrases the page carries that entries quote


PAGES = {
    "https://www.tensorflow.org/api_docs/python/tf/raw_ops/TopK": Page(
        "tf.raw_ops.TopK", quotes=("an int that is >= 0",)),
    "https://www.tensorflow.org/api_docs/python/tf/raw_ops/TopKV2": Page("tf.raw_ops.TopKV2"),
    "https://github.com/openvinotoolkit/openvino/issues/35824": Page(
        "OpenVINO opset TopK misorders large int64 values on CPU", dtypes=frozenset({"int64"}),
        quotes=("TopK misorders large int64 values on CPU",)),
    "https://github.com/openvinotoolkit/openvino/pull/35921": Page(  # its i64 and u64 data inputs kept wide
        "Fix CPU TopK int64 precision handling", dtypes=frozenset({"int64", "uint64"})),
    "https://github.com/pytorch/pytorch/issues/58734": Page(
        "Support for `uint16`, `uint32`, and `uint64`", dtypes=frozenset({"uint16", "uint32", "uint64"})),
    "https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/topk_en.html": Page(
        "paddle.topk", supported=frozenset({"float32", "float64", "int32", "int64"})),
    "https://github.com/tensorflow/tensorflow/issues/119359": Page(
        "tf.sort gives different NaN behaviour in eager mode and XLA"),  # the sort path, any float type
    "https://github.com/microsoft/onnxruntime/pull/25084": Page(
        "Skip topk uint64 test added from ONNX 1.18", dtypes=frozenset({"uint64"})),
    "https://github.com/openvinotoolkit/openvino/pull/4681": Page(
        "[CPU][ONNX] Convert FP64 precision to FP32", dtypes=frozenset({"float64"}),
        quotes=("[CPU][ONNX] Convert FP64 precision to FP32",)),
    "https://github.com/onnx/onnx/issues/8478": Page(
        "TopK shape inference and ReferenceEvaluator accept non-positive K",
        quotes=("TopK shape inference and ReferenceEvaluator accept non-positive K",)),
    "https://github.com/pytorch/pytorch/issues/27542": Page(
        "Sorted topk behaves inconsistently depending on k", quotes=("Sorted topk behaves inconsistently depending on k",)),
    "https://www.tensorflow.org/api_docs/python/tf/keras/ops/top_k": Page("keras.ops.top_k"),
    "https://docs.pytorch.org/docs/stable/generated/torch.topk.html": Page("torch.topk"),
    "https://github.com/microsoft/onnxruntime/issues/29072": Page(  # any type: a load failure
        "Shape of Gather output is wrong making it unusable as K input to TopK operator",
        quotes=("K input must be a one-dimensional tensor of size 1",)),
}
# Public links no record above describes: listed so that a new one is recorded or left here on
# purpose. Each is checked for nothing else.
UNREAD = {
    "https://github.com/PaddlePaddle/Paddle/issues/25626",
    "https://github.com/google-ai-edge/LiteRT/blob/main/tflite/kernels/topk_v2.cc",
    "https://github.com/jax-ml/jax/blob/main/jax/_src/lax/lax.py",
    "https://github.com/jax-ml/ml_dtypes/blob/v0.6.0/ml_dtypes/tests/custom_float_test.py",
    "https://github.com/keras-team/keras/pull/23367",
    "https://github.com/llvm/torch-mlir/pull/2083",
    "https://github.com/microsoft/onnxruntime/issues/16449",
    "https://github.com/microsoft/onnxruntime/issues/28768",
    "https://github.com/microsoft/onnxruntime/pull/909",
    "https://github.com/pytorch/pytorch/issues/49205",
    "https://github.com/sonos/tract/blob/main/test-rt/suite-onnx/node.txt",
    "https://github.com/tinygrad/tinygrad/blob/master/test/backend/test_edgecases.py",
    "https://github.com/tinygrad/tinygrad/issues/6909",
    "https://www.mindspore.cn/docs/en/r2.5.0/api_python/bfloat16_support.html",
    "https://www.tensorflow.org/mlir/tfl_ops#tfltopk_v2_tfltopkv2op",
}
# A target whose findings are filed under another target's name (the runtime it wraps).
FINDINGS_OF = {"onnxruntime-directml": "directml", "jax-gpu": "jax", "torch-cuda": "torch"}
QUOTED = re.compile(r"'([^']{8,}?)'")


def _finding(folder: str) -> tuple[dict, str]:
    with open(os.path.join(FINDINGS, folder, "case.json")) as handle:
        case = json.load(handle)
    with open(os.path.join(FINDINGS, folder, "report.md")) as handle:
        return case, handle.read()


def _case_rules(case: dict) -> set:
    rules = {case.get("rule")} | set(case.get("found_by", {}).get("violation", {}).get("rules", []))
    return {rule for rule in rules if rule}


def _case_value(case: dict, field: str):
    if field == "dtype":
        return (case.get("descriptor") or {}).get("X", {}).get("dtype") or (case.get("case") or {}).get("dtype")
    return (case.get("descriptor") or {}).get("k", (case.get("case") or {}).get("k"))


RESULT_ONLY = ("out.valid_accepted", "out.invalid_rejected")


def related(entry_rule: str, rule: str) -> bool:
    """Whether a finding filed under `rule` shows what an entry of `entry_rule` declares."""
    if fnmatch.fnmatchcase(rule, entry_rule):
        return True
    if entry_rule == "out.invalid_rejected":  # a crash on a descriptor that breaks `rule`
        return rule.startswith(("onnx.", "dml."))

    def of_result(name):
        return name.startswith("out.") and name not in RESULT_ONLY

    return of_result(entry_rule) and of_result(rule)


def finding_link_problems(target: str, entry: KnownEntry, case: dict, report: str, register_rule: str | None) -> list:
    """Why the finding an entry links does not describe the entry (empty when it does)."""
    folder = entry.url.split("/")[1]
    problems = []
    owner = FINDINGS_OF.get(target, target)
    if not folder.startswith(owner + "-"):
        problems.append(f"{folder} is not a finding of {owner}")
    rules = _case_rules(case) | ({register_rule} if register_rule else set())
    if not any(related(entry.rule, rule) for rule in rules) and f"`{entry.rule}`" not in report:
        problems.append(f"rule {entry.rule}: the finding is filed under {sorted(rules)} and its report names no {entry.rule}")
    if entry.dtype and _case_value(case, "dtype") != entry.dtype and not re.search(rf"\b{entry.dtype}\b", report):
        problems.append(f"dtype {entry.dtype}: the case is {_case_value(case, 'dtype')} and the report names no {entry.dtype}")
    if entry.k is not None and _case_value(case, "k") != entry.k and not re.search(rf"\b[kK] = {entry.k}\b", report):
        problems.append(f"K = {entry.k}: the case's K is {_case_value(case, 'k')} and the report names no K = {entry.k}")
    return problems


def page_link_problems(entry: KnownEntry, pages: dict = PAGES) -> list:
    """Why the public page an entry links does not describe it, by the page's record."""
    page, problems = pages.get(entry.url), []
    for quote in QUOTED.findall(entry.reason):
        owners = [url for url, other in pages.items() if any(quote.lower() in q.lower() or q.lower() in quote.lower()
                                                             for q in other.quotes)]
        if owners and entry.url not in owners:
            problems.append(f"it quotes {quote!r}, which is {pages[owners[0]].title}'s ({owners[0]}), not its link's")
    if page is None or entry.dtype is None:
        return problems
    if page.dtypes is not None and entry.dtype not in page.dtypes:
        problems.append(f"dtype {entry.dtype}: {page.title} is about {sorted(page.dtypes)} only")
    if page.supported is not None and entry.dtype in page.supported:
        problems.append(f"dtype {entry.dtype}: {page.title} lists it as supported, so it documents no refusal of it")
    return problems


def _register_rules() -> dict:
    with open(os.path.join(FINDINGS, "README.md")) as handle:
        return {m.group(1): m.group(2) for m in re.finditer(r"^\| \[([\w-]+)\]\([^)]*\) \| [^|]* \| [^|]* \| `([\w.]+)`",
                                                            handle.read(), re.M)}


ENTRIES = [(target, entry) for target in sorted(shipped_targets()) for entry in load_known(None, target)]


@pytest.mark.parametrize("target, entry", ENTRIES, ids=[f"{t}-{e.rule}-{e.dtype or 'any'}-{i}" for i, (t, e) in enumerate(ENTRIES)])
def test_each_link_describes_its_entry(target, entry):
    if entry.url.startswith("findings/"):
        folder = entry.url.split("/")[1]
        case, report = _finding(folder)
        assert finding_link_problems(target, entry, case, report, _register_rules().get(folder)) == [], entry.url
    else:
        assert entry.url in PAGES or entry.url in UNREAD, f"{entry.url}: record what it says in PAGES, or list it in UNREAD"
        assert page_link_problems(entry) == [], entry.url


def test_no_page_is_both_recorded_and_unread():
    assert not set(PAGES) & UNREAD, sorted(set(PAGES) & UNREAD)


def test_the_link_checks_catch_a_wrong_page_a_wrong_type_and_a_report_that_does_not_describe_it():
    # A quote from the TopK page linked to TopKV2's.
    quoted = KnownEntry("onnx.k.positive", reason="the op documents k as 'an int that is >= 0'",
                        url="https://www.tensorflow.org/api_docs/python/tf/raw_ops/TopKV2")
    assert "tf.raw_ops.TopK's" in page_link_problems(quoted)[0]
    assert page_link_problems(KnownEntry("onnx.k.positive", reason=quoted.reason,
                                         url="https://www.tensorflow.org/api_docs/python/tf/raw_ops/TopK")) == []
    # An int64 issue linked for uint64.
    wrong_type = KnownEntry("out.*", dtype="uint64", url="https://github.com/openvinotoolkit/openvino/issues/35824")
    assert "is about ['int64'] only" in page_link_problems(wrong_type)[0]
    assert page_link_problems(KnownEntry("out.*", dtype="int64", url=wrong_type.url)) == []
    # A type table that lists the type it is said to refuse.
    table = KnownEntry("out.valid_accepted", dtype="int32",
                       url="https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/topk_en.html")
    assert "lists it as supported" in page_link_problems(table)[0]
    # A finding's report that neither is filed under the entry's rule nor names it.
    case = {"descriptor": {"X": {"dtype": "float32"}, "k": 5}, "rule": "onnx.k.max"}
    k_zero = KnownEntry("onnx.k.positive", url="findings/tract-k-above-axis-size-padded/report.md")
    silent = "K = 0 gives empty outputs; this report does not count onnx.k.positive."
    assert "names no onnx.k.positive" in finding_link_problems("tract", k_zero, case, silent, "onnx.k.max")[0]
    described = silent + " Declared under `onnx.k.positive` in tract's known list."
    assert finding_link_problems("tract", k_zero, case, described, "onnx.k.max") == []
    assert "not a finding of iree" in finding_link_problems("iree", k_zero, case, described, "onnx.k.max")[0]
    typed = KnownEntry("onnx.k.max", dtype="uint32", url=k_zero.url)
    assert "names no uint32" in finding_link_problems("tract", typed, case, silent, "onnx.k.max")[0]
    one = KnownEntry("onnx.k.max", k=1, url=k_zero.url)
    assert "names no K = 1" in finding_link_problems("tract", one, case, silent, "onnx.k.max")[0]
    # Rules that one wrong result breaks together are related; a crash on an invalid descriptor
    # is filed under out.invalid_rejected; the bounds of K are separate promises.
    assert related("out.nan.unspecified", "out.values.select") and related("out.order", "out.values.select")
    assert related("out.invalid_rejected", "onnx.axis.range") and not related("out.invalid_rejected", "out.order")
    assert not related("onnx.k.positive", "onnx.k.max") and not related("out.valid_accepted", "out.values.select")
