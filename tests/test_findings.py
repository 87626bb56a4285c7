"""The findings register (findings/): every finding has its report, case and repro, names the
contract it breaks and the kind of argument it makes, and every finding marked new (or a
duplicate of one) still reproduces where its runtime runs, printing the wrong result it observed
(else the register must say it was fixed). A finding of kind open is no bug: it is listed under
"Not filed", never in the register."""
import json
import os
import re
import subprocess
import sys

import pytest
from slow import slow

sys.path.insert(0, os.path.dirname(__file__))
import required_targets  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "findings")
ROW = re.compile(r"^\| \[(?P<folder>[^\]]+)\]\([^)]+\) \| (?P<runtime>[^|]+) \| (?P<version>[^|]+) \| "
                 r"`(?P<rule>[^`]+)` \| (?P<kind>[^|]+) \| (?P<contract>[^|]+) \| (?P<status>[^|]+) \|$")
# A row of the table under "Not filed": an open point, no rule, no status.
OPEN_ROW = re.compile(r"^\| \[(?P<folder>[^\]]+)\]\([^)]+\) \| (?P<runtime>[^|]+) \| (?P<version>[^|]+) \| "
                      r"(?P<point>[^|`]+) \| (?P<choice>[^|]+) \| (?P<why>[^|]+) \|$")
# The kinds of argument a finding makes (findings/README.md, "Kind").
KINDS = ("own-documentation", "crash", "contradicts-itself", "standard", "feature-request", "open")
# The line after a report's title that names its kind.
KIND_LINE = re.compile(r"^Kind: \*\*(?P<kind>[a-z-]+)\*\*", re.M)
STATUSES = ("new", "known upstream: https://", "fixed in ", "duplicate of ", "withdrawn: ")
# A contract is a link to the text broken (the runtime's documentation, or ONNX's or DirectML's
# for a runtime that implements them) or plain correctness, which needs no text.
LINK = re.compile(r"^\[(?P<label>[^\]]+)\]\((?P<url>https://[^)\s]+)\)$")
CORRECTNESS = ("a crash", "a value not in the input", "a value not among the K largest",
               "a value not among the K smallest")
IMPLEMENTERS = {"ONNX": ("tract", "IREE", "ONNX Runtime", "OpenVINO", "onnx checker", "onnx reference", "Apache TVM"),
                "DirectML": ("DirectML",)}
TARGET_OF_RUNTIME = {"DirectML": "directml", "tract": "tract", "IREE": "iree", "MindSpore": "mindspore",
                     "TensorFlow": "tensorflow", "Keras (numpy backend)": "keras-numpy", "tinygrad": "tinygrad",
                     "onnx checker": "onnx-checker", "ONNX Runtime": "onnxruntime", "JAX": "jax",
                     "OpenVINO": "openvino", "onnx reference": "onnx-reference", "Apache TVM": "tvm", "Jittor": "jittor"}
# The line on which a repro shows the wrong result it saw; a repro that replays a corpus case
# through the DirectML worker shows it as the replay's verdict line.
OBSERVED = re.compile(r"^(observed: |NOT AS STORED )\S", re.M)
TRACEBACK = "Traceback (most recent call last)"


def findings():
    """The register's rows: the findings filed, or to be filed, as bugs (and feature requests)."""
    with open(os.path.join(ROOT, "README.md")) as handle:
        return [{k: v.strip() for k, v in m.groupdict().items()}
                for m in map(ROW.match, handle.read().splitlines()) if m]


def not_filed():
    """The rows under "Not filed": findings of kind open, each a difference between runtimes."""
    with open(os.path.join(ROOT, "README.md")) as handle:
        text = handle.read()
    assert "\n## Not filed: open points\n" in text, "findings/README.md has no section 'Not filed: open points'"
    section = text.split("\n## Not filed: open points\n", 1)[1]
    return [dict(m.groupdict(), kind="open") for m in map(OPEN_ROW.match, section.splitlines()) if m]


def case_of(folder) -> dict:
    with open(os.path.join(ROOT, folder, "case.json")) as handle:
        return json.load(handle)


def report(finding) -> str:
    with open(os.path.join(ROOT, finding["folder"], "report.md")) as handle:
        return handle.read()


def test_the_register_lists_every_folder_and_each_has_its_report_and_repro():
    from topkspec import spec

    listed = [f["folder"] for f in findings() + not_filed()]
    folders = {name for name in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, name))}
    assert set(listed) == folders, f"listed {sorted(listed)}, folders {sorted(folders)}"
    assert len(listed) == len(set(listed)), f"a finding is listed twice: {sorted(listed)}"
    for finding in not_filed():
        for name in ("report.md", "repro.py"):
            assert os.path.isfile(os.path.join(ROOT, finding["folder"], name)), f"{finding['folder']} has no {name}"
    for finding in findings():
        folder = os.path.join(ROOT, finding["folder"])
        for name in ("report.md", "repro.py"):
            assert os.path.isfile(os.path.join(folder, name)), f"{finding['folder']} has no {name}"
        assert finding["rule"] in spec.RULES, finding
        assert finding["status"].startswith(STATUSES), finding["status"]
        assert finding["runtime"] in TARGET_OF_RUNTIME, f"which target runs {finding['runtime']}?"


def _tensors(case: dict):
    """Every stored tensor of a finding's case.json: its input and those of its further calls."""
    for call in [case] + case.get("more", []):
        if call.get("input") is not None:
            yield call["input"]


def value_problems(data: dict) -> list[str]:
    """Where a stored tensor's readable `values` disagree with its bytes (`base64`)."""
    import numpy as np

    from topkspec.corpus.dml_files import read_tensor

    dtype = data["DataType"].removeprefix("DML_TENSOR_DATA_TYPE_").lower()
    stored = read_tensor(data, dtype).reshape(-1)
    if "values" not in data:
        return [] if stored.size > 64 else ["no readable values"]
    shown = data["values"]
    if len(shown) != stored.size:
        return [f"{len(shown)} values for {stored.size} elements"]
    problems = []
    for position, (said, held) in enumerate(zip(shown, stored.tolist())):
        held_text = "nan" if held != held else "inf" if held == float("inf") else "-inf" if held == float("-inf") else None
        if isinstance(said, str) or held_text is not None:
            agree = said == held_text
        else:
            agree = said == held and np.signbit(said) == np.signbit(held)
        if not agree:
            problems.append(f"position {position}: values says {said!r}, the bytes hold {held!r}")
    return problems


def test_value_problems_finds_a_readable_value_the_bytes_do_not_hold():
    import base64

    import numpy as np

    data = {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [3],
            "base64": base64.b64encode(np.array([1.0, np.nan, -0.0], "<f4").tobytes()).decode(),
            "values": [1.0, "-inf", 0.0]}
    assert value_problems(data) == ["position 1: values says '-inf', the bytes hold nan",
                                    "position 2: values says 0.0, the bytes hold -0.0"]
    assert value_problems(dict(data, values=[1.0, "nan", -0.0])) == []


@pytest.mark.parametrize("finding", findings(), ids=lambda f: f["folder"])
def test_each_finding_has_its_case_and_its_readable_values_are_its_bytes(finding):
    path = os.path.join(ROOT, finding["folder"], "case.json")
    assert os.path.isfile(path), f"{finding['folder']} has no case.json"
    with open(path) as handle:
        case = json.load(handle)
    assert case.get("descriptor"), f"{finding['folder']}: case.json holds no descriptor"
    for data in _tensors(case):
        assert value_problems(data) == [], finding["folder"]


def contract_parts(finding):
    return [part.strip() for part in finding["contract"].split(";")]


def contract_problems(finding, text) -> list[str]:
    """What is wrong with a finding's contract cell, given its report's text."""
    problems, labels = [], []
    for part in contract_parts(finding):
        link = LINK.match(part)
        if link:
            labels.append(link["label"])
            if link["url"] not in text:
                problems.append(f"the report does not cite {link['url']}")
        elif part.startswith("correctness: ") and part[len("correctness: "):] in CORRECTNESS:
            labels.append("correctness")
        elif part.startswith(("promises: ", "leaves open: ")) and labels:
            pass  # the linked page's promise (tests/test_findings_contracts.py checks it)
        else:
            problems.append(f"{part!r} is neither a link to the text broken nor correctness: one of {CORRECTNESS}")
    if finding["status"].startswith(("new", "duplicate of ")):
        # A runtime with an API of its own is not held to a text it does not implement.
        borrowed = [label for label in labels if label.split()[0] in IMPLEMENTERS]
        foreign = [label for label in borrowed if finding["runtime"] not in IMPLEMENTERS[label.split()[0]]]
        if foreign and len(foreign) == len(labels):
            problems.append(f"{finding['runtime']} does not implement {foreign[0]}, and it names nothing else: "
                            f"withdraw it, or name the runtime's own text")
        if not re.search(r"\bsearch", text, re.I):
            problems.append("the report records no tracker search")
    return problems


@pytest.mark.parametrize("finding", findings(), ids=lambda f: f["folder"])
def test_each_finding_names_the_contract_it_breaks_and_its_report_cites_it(finding):
    assert contract_problems(finding, report(finding)) == [], finding["folder"]


def test_a_new_finding_that_breaks_only_onnx_in_a_runtime_of_its_own_is_refused():
    onnx = "[ONNX TopK](https://onnx.ai/onnx/operators/onnx__TopK.html)"
    text = f"Contract: {onnx}. Tracker search: nothing."
    keras = {"runtime": "Keras (numpy backend)", "status": "new", "contract": onnx}
    assert "does not implement ONNX TopK" in contract_problems(keras, text)[0]
    assert contract_problems(dict(keras, status="withdrawn: exporters handle it"), text) == []
    assert contract_problems(dict(keras, contract=f"{onnx}; correctness: a crash"), text) == []
    assert contract_problems(dict(keras, runtime="tract"), text) == []
    assert contract_problems(dict(keras, runtime="tract"), "no word of it") == [
        "the report does not cite https://onnx.ai/onnx/operators/onnx__TopK.html", "the report records no tracker search"]
    assert "neither a link" in contract_problems(dict(keras, contract="ONNX says so"), text)[0]


def test_a_duplicate_names_a_new_finding_of_the_same_runtime():
    by_folder = {f["folder"]: f for f in findings()}
    for finding in by_folder.values():
        if finding["status"].startswith("duplicate of "):
            original = by_folder.get(finding["status"].split()[2])
            assert original and original["status"].startswith("new"), finding["status"]
            assert original["runtime"] == finding["runtime"], finding["status"]
            assert finding["folder"] in report(original), f"{original['folder']}'s report must cover {finding['folder']}"


def known_links(finding) -> set:
    """The urls a known entry of the finding may link: its report, a duplicate's original's,
    and the public page its status names once it is known upstream."""
    links = {f"findings/{finding['folder']}/report.md"}
    status = finding["status"]
    if status.startswith("duplicate of "):
        links.add(f"findings/{status.split()[2]}/report.md")
    if status.startswith("known upstream: "):
        links.add(status.split()[2].rstrip(";,"))
    return links


@pytest.mark.parametrize("finding", [f for f in findings() if not f["status"].startswith("withdrawn: ")],
                         ids=lambda f: f["folder"])
def test_each_finding_is_in_its_targets_known_list(finding):
    # What a runtime does wrong goes in its known list (docs/develop.md), so a campaign run with
    # --known, as the shipped CI workflows run it, counts what the register holds instead of failing.
    from topkspec.known import load_known

    target = TARGET_OF_RUNTIME[finding["runtime"]]
    linked = {entry.url for entry in load_known(None, target)} & known_links(finding)
    assert linked, f"{finding['folder']}: no entry of topkspec/known/{target}.toml links {sorted(known_links(finding))}"


def kind_problems(finding, case: dict, text: str) -> list[str]:
    """Where a finding's kind is missing or disagrees: the register's (or Not filed's) kind, its
    case.json's `kind` and the `Kind: **...**` line that opens its report (before its first
    section) must be one and the same of KINDS; the register holds no kind open and no
    withdrawal, and Not filed holds only kind open."""
    kind, problems = finding["kind"], []
    if kind not in KINDS:
        problems.append(f"kind {kind!r} is none of {KINDS}")
    if case.get("kind") != kind:
        problems.append(f"case.json's kind is {case.get('kind')!r}, the table's {kind!r}")
    opening = KIND_LINE.search(text.split("\n## ", 1)[0])
    if opening is None:
        problems.append("the report's opening lines name no kind (a line 'Kind: **<kind>**' after the title)")
    elif opening["kind"] != kind:
        problems.append(f"the report opens with kind {opening['kind']!r}, the table's {kind!r}")
    if "status" in finding and kind == "open":
        problems.append("a finding of kind open is no bug: list it under 'Not filed', not in the register")
    if finding.get("status", "").startswith("withdrawn"):
        problems.append("a withdrawn finding is not filed: list it under 'Not filed' (kind open)")
    return problems


def contradiction_problems(case: dict) -> list[str]:
    """What a kind contradicts-itself case.json lacks: its two calls (the case, and the second under
    `more`), each named by `call` and holding what it `observed`, with two different answers."""
    calls = [case] + case.get("more", [])[:1]
    if len(calls) < 2:
        return ["case.json holds one call: the second goes under `more`"]
    problems = [f"call {n} has no {field!r}" for n, call in enumerate(calls, 1) for field in ("call", "observed")
                if not call.get(field)]
    if not problems and calls[0]["observed"] == calls[1]["observed"]:
        problems.append(f"both calls observed {calls[0]['observed']}: no contradiction")
    return problems


@pytest.mark.parametrize("finding", findings() + not_filed(), ids=lambda f: f["folder"])
def test_each_finding_has_one_kind_in_the_table_its_case_and_its_report(finding):
    case = case_of(finding["folder"])
    assert kind_problems(finding, case, report(finding)) == [], finding["folder"]
    if finding["kind"] == "contradicts-itself":
        assert contradiction_problems(case) == [], finding["folder"]


def test_the_kind_checks_catch_a_missing_kind_an_open_bug_and_a_contradiction_of_one_call():
    text = "# Title\n\nKind: **standard** (ONNX): it breaks TopK.\n\n## Summary\n"
    row = {"folder": "f", "kind": "standard", "status": "new"}
    assert kind_problems(row, {"kind": "standard"}, text) == []
    assert kind_problems(row, {}, text) == ["case.json's kind is None, the table's 'standard'"]
    assert "opens with kind 'standard'" in kind_problems(dict(row, kind="crash"), {"kind": "crash"}, text)[0]
    assert "name no kind" in kind_problems(row, {"kind": "standard"}, text.replace("Kind:", "Sort:"))[0]
    late = "# Title\n\n## Summary\n\nKind: **standard**\n"
    assert "name no kind" in kind_problems(row, {"kind": "standard"}, late)[0], "the kind line opens the report"
    opened = text.replace("standard", "open")
    assert "list it under 'Not filed'" in kind_problems(dict(row, kind="open"), {"kind": "open"}, opened)[0]
    assert kind_problems({"folder": "f", "kind": "open"}, {"kind": "open"}, opened) == []
    assert "withdrawn" in kind_problems(dict(row, status="withdrawn: x"), {"kind": "standard"}, text)[0]
    one = {"call": "K a constant", "observed": {"values": [1.0]}}
    assert contradiction_problems(one) == ["case.json holds one call: the second goes under `more`"]
    same = dict(one, more=[{"call": "K an input", "observed": {"values": [1.0]}}])
    assert "no contradiction" in contradiction_problems(same)[0]
    unnamed = dict(one, more=[{"observed": {"values": [3.0]}}])
    assert contradiction_problems(unnamed) == ["call 2 has no 'call'"]
    assert contradiction_problems(dict(one, more=[{"call": "K an input", "observed": {"values": [3.0]}}])) == []


def test_no_open_finding_is_in_the_register_and_every_open_one_is_in_the_divergence_table():
    # Kind open is never filed as a bug: it goes to docs/runtimes.md's table of differences.
    assert all(f["kind"] != "open" for f in findings()), [f["folder"] for f in findings() if f["kind"] == "open"]
    with open(os.path.join(os.path.dirname(ROOT), "docs", "runtimes.md")) as handle:
        page = handle.read()
    title = "\n## Where runtimes differ and every document is silent\n"
    assert title in page, "docs/runtimes.md has no section 'Where runtimes differ and every document is silent'"
    table = page.split(title, 1)[1].split("\n## ", 1)[0]
    for finding in not_filed():
        assert f"findings/{finding['folder']}/report.md" in table, f"{finding['folder']} is not in the divergence table"


# The lines on which a kind contradicts-itself repro shows each of its two calls' answers.
CALLS = (re.compile(r"^call 1: \S", re.M), re.compile(r"^call 2: \S", re.M))


def check_repro_output(folder, returncode, output, kind=None):
    """The failure message when a repro's run does not show its bug still there, else None. A
    repro of kind contradicts-itself must show both calls (`call 1: ...`, `call 2: ...`)."""
    if TRACEBACK in output:
        return f"{folder}: the repro died with a traceback, which shows no bug:\n{output}"
    if returncode != 1:
        return (f"{folder} no longer reproduces (exit {returncode}): if the runtime fixed it, "
                f"say 'fixed in version X' in findings/README.md\n{output}")
    if not OBSERVED.search(output):
        return f"{folder}: the repro exits 1 but prints no `observed: ...` line with the wrong result:\n{output}"
    if kind == "contradicts-itself" and not all(line.search(output) for line in CALLS):
        return f"{folder}: a repro of kind contradicts-itself makes two calls and prints each on `call 1: ...` and `call 2: ...`:\n{output}"
    return None


def test_the_check_needs_the_observed_line_and_no_traceback():
    shown = "values [1.0]\nobserved: values [1.0] indices [0] (expected NaN or 3)\n"
    assert check_repro_output("f", 1, shown) is None
    assert check_repro_output("f", 1, "NOT AS STORED case.json: sequence 0 ...\n") is None
    assert "no longer reproduces" in check_repro_output("f", 0, "fixed: values [3.0]\n")
    assert "prints no `observed" in check_repro_output("f", 1, "values [1.0]\n")
    died = "Traceback (most recent call last):\n  ...\nFileNotFoundError: [Errno 2] No such file: 'clang'\n"
    assert "traceback" in check_repro_output("f", 1, died)
    assert "traceback" in check_repro_output("f", 1, "observed: values [1.0]\n" + died)
    both = "call 1: K constant: [1.0, nan]\ncall 2: K input: [3.0, 1.0]\nobserved: two answers\n"
    assert check_repro_output("f", 1, both, kind="contradicts-itself") is None
    assert "two calls" in check_repro_output("f", 1, "call 1: [1.0, nan]\nobserved: wrong\n", kind="contradicts-itself")
    assert check_repro_output("f", 1, "call 1: [1.0, nan]\nobserved: wrong\n", kind="standard") is None


def repro_interpreter(target: str):
    """(interpreter, environment) a repro runs under: this one, or for a runtime in a Python
    environment of its own (topkspec.targets.foreign) that environment's, as its worker runs."""
    from topkspec.targets.foreign import ForeignTarget, find_python
    from topkspec.targets.registry import get_target

    made = get_target(target)
    if not isinstance(made, ForeignTarget) or find_python(made.environment)[0] is None:
        return sys.executable, None
    return str(find_python(made.environment)[0]), made.worker_environment()


@pytest.mark.parametrize("finding", [f for f in findings() if f["status"].startswith(("new", "duplicate of "))],
                         ids=lambda f: f["folder"])
@slow
def test_a_new_finding_still_reproduces(finding):
    repro = os.path.join(ROOT, finding["folder"], "repro.py")
    python, env = repro_interpreter(TARGET_OF_RUNTIME[finding["runtime"]])
    done = subprocess.run([python, repro], capture_output=True, text=True, timeout=600, env=env)
    output = done.stdout + done.stderr
    if done.returncode == 2 and TRACEBACK not in output:
        target = TARGET_OF_RUNTIME[finding["runtime"]]
        if target in required_targets.required():
            pytest.fail(f"{target} is required here but the repro cannot run it:\n{output}")
        pytest.skip(f"{finding['runtime']} cannot run here: {output.strip().splitlines()[-1:]}")
    failure = check_repro_output(finding["folder"], done.returncode, output, finding["kind"])
    if failure:
        pytest.fail(failure)
