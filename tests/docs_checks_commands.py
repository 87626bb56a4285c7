"""The checks of the docs' commands: each sets up what a block needs, runs it as written and
compares what the page says about the output (exit codes, counts, report folders, "N of M")
with what the commands give. tests/test_docs_blocks.py runs them by the block's mark."""
import json
import os
import pathlib
import re
import shlex
import shutil
import sys

import pytest

from docs_blocks import ROOT, page_text, prose_after, prose_before
from docs_run import (BLOCKS, Done, assert_code, claim, descriptors, needs_directml, needs_targets, number,
                      runnable, same_version, sh)
from topkspec.cli import build_parser


def check_quick_start(block, runs, where):
    """`pip install -e . && topkspec fuzz --target onnxruntime …`: the exit code, the number of
    reports, the folder the page names, the types it lists, and what `--known` does."""
    (command,) = block.commands()
    fuzz = runnable(command)
    claims = prose_after(block)
    if "exit code" not in claims:  # a page that shows the command alone: another says what it gives
        said = [b for b in BLOCKS if b.marks.get("check") == "quick-start" and "exit code" in prose_after(b)]
        assert any(b.commands() == block.commands() for b in said), f"{block.where}: no page says what it gives"
        return
    done = runs.once(fuzz)
    found = claim(r"ends with exit code (\d) and (\w+) reports", claims, block.where)
    assert done.code in (0, 1), str(done)
    same_version(block, claims, "onnxruntime", r"With ONNX Runtime ([\d.]+)")
    assert_code(done, int(found.group(1)), block.where)
    folders = sorted(p.name for p in (done.cwd / "topk-reports").iterdir())
    assert len(folders) == number(found.group(2)), f"{block.where}: reports {folders}\n{done}"
    for named in re.findall(r"`topk-reports/([^`/]+)/?`", claims):
        assert named in folders, f"{block.where} names topk-reports/{named}; the run wrote {folders}"
    listed = claim(r"no kernel for \(([^):]+)", claims, block.where).group(1)
    dtypes = sorted(json.loads((done.cwd / "topk-reports" / f / "case.json").read_text())["case"]["dtype"]
                    for f in folders if "rejects-a-valid-descriptor" in f)
    assert dtypes == sorted(t.strip() for t in listed.split(",")), f"{block.where}: the run's {dtypes}"
    if "each report says so at its top" in claims:
        # The types the page calls topkspec's own finding link it; every other report its public page.
        own = claim(r"(\w+) and (\w+) are topkspec's own finding", claims, block.where).groups()
        for folder in folders:
            top = (done.cwd / "topk-reports" / folder / "report.md").read_text().split("\n\n")[2]  # after the kind
            dtype = json.loads((done.cwd / "topk-reports" / folder / "case.json").read_text())["case"]["dtype"]
            if dtype in own and "rejects-a-valid-descriptor" in folder:
                assert top.startswith("**Known to topkspec, not reported upstream**") and "findings/" in top, top
            else:
                assert top.startswith("**Known upstream**") and "https://" in top, f"{folder}: {top}"
    known = runs.once(f"{fuzz} --known")
    assert_code(known, int(claim(r"`--known`.*?exits (\d)", claims, block.where).group(1)), block.where)
    assert not (known.cwd / "topk-reports").exists(), f"{block.where}: --known wrote reports\n{known}"


def check_known_toml(block, runs, where):
    """The known-deviation entry as shown loads, with every field it shows; as the page says, an
    entry naming a rule, class, type, profile or version range that does not exist is bad usage."""
    from topkspec.errors import UsageError
    from topkspec.known import load_known
    claim(r"names a rule, class, profile or field that does not exist, is\s+bad usage", prose_after(block), block.where)
    (where / "known.toml").write_text(block.text)
    (entry,) = load_known(str(where / "known.toml"), "onnxruntime").entries
    assert entry.rule == "onnx.k.positive" and entry.url.endswith("/pull/909"), entry
    for field, bogus in (("rule", "onnx.k.nothing"), ("class", "eats the input"), ("dtype", "uint61"),
                         ("profile", "onnx:x"), ("versions", "<<1")):
        (where / "bad.toml").write_text(re.sub(rf'^{field} = "[^"]*"', f'{field} = "{bogus}"', block.text, flags=re.M))
        with pytest.raises(UsageError):
            load_known(str(where / "bad.toml"), "onnxruntime")


def check_matrix(block, runs, where):
    """A row per rule, a column per target, broken cells linking their reports (run on a
    smaller budget here: the page claims the table's form, not its counts)."""
    (command,) = block.commands()
    targets = needs_targets(block, command)
    done = sh(re.sub(r"--max-examples \d+", "--max-examples 30", command), where)
    assert done.code == 1, f"{block.where}: the targets shown break rules (exit 1)\n{done}"
    table = (where / "matrix.md").read_text()
    header = table.splitlines()[0]
    assert all(f"`{name}`" in header for name in targets), header
    for link in re.findall(r"\]\(([^)]+/report\.md)\)", table):
        assert (where / link).is_file(), f"{block.where}: the matrix links {link}, which is not there"
    assert "broken" in table


def check_ci_pytest(block, runs, where):
    """The plugin run: exit code, groups failed and passed, and report folders, as the page says."""
    (command,) = block.commands()
    done = runs.once(command)
    claims = prose_after(block)
    same_version(block, claims, "onnxruntime", r"ONNX Runtime ([\d.]+)")
    found = claim(r"exits (\d): (\w+) groups? fail(?:s)? .*?(\w+) reports? in `topk-reports`", claims, block.where)
    assert_code(done, int(found.group(1)), block.where)
    assert f"{number(found.group(2))} failed" in done.out, str(done)
    folders = list((done.cwd / "topk-reports").iterdir())
    assert len(folders) == number(found.group(3)), f"{block.where}: {folders}\n{done}"


def corpus_of(runs) -> Done:
    done = runs.once("topkspec corpus topk-corpus")
    assert done.code == 0, str(done)
    return done


def check_corpus_write(block, runs, where):
    """The three corpus commands; the counts the page gives ("about N"), its size, --spec
    writing only the profiles asked, --from-reports taking the quick start's reports."""
    whole, only, from_reports = block.commands()
    done = corpus_of(runs)
    text = " ".join(page_text(block).split())
    onnx = len(list((done.cwd / "topk-corpus" / "onnx").iterdir()))
    cases = [json.loads(p.read_text()) for p in (done.cwd / "topk-corpus" / "dml").glob("*.json")]
    invalid = sum(case["expected"].get("outcome") == "refused" for case in cases)
    for said, got in ((claim(r"About (\d+) cases", text, block.where).group(1), onnx),
                      (claim(r"About (\d+) valid", text, block.where).group(1), len(cases) - invalid),
                      (claim(r"(\d+) invalid", text, block.where).group(1), invalid)):
        assert abs(int(said) - got) <= 0.05 * got, f"{block.where}: the page says about {said}, the corpus has {got}"
    size = sum(p.stat().st_size for p in (done.cwd / "topk-corpus").rglob("*") if p.is_file())
    mb = int(claim(r"the corpus is under (\d+) MB", text, block.where).group(1))
    assert size < mb * 1_000_000, f"{block.where}: the corpus is {size} bytes"

    assert_code(sh(only, where), 0, block.where)
    opsets = {re.match(r"test_topk(\d+)_", p.name).group(1) for p in (where / "topk-corpus" / "onnx").iterdir()}
    assert opsets == {"11"} and not list((where / "topk-corpus" / "dml").glob("*.json")), opsets

    reports = runs.once(runnable(next(b for b in BLOCKS if b.marks.get("check") == "quick-start").commands()[0]))
    shutil.copytree(reports.cwd / "topk-reports", where / "topk-reports")
    added = sh(from_reports, where)
    assert_code(added, 0, block.where)
    claim(r"It prints how many cases it took and, for each report folder that gave none, why", text, block.where)
    kept = [p for p in (where / "topk-corpus").glob("*/*") if "report_" in p.name]
    said = claim(r"(\d+) cases? taken; (\d+) report folders? skipped", added.out, block.where)
    assert int(said.group(1)) == len(kept) > 0, f"{block.where}: it says {said.group(0)}; {len(kept)} written\n{added}"
    skipped = [f.name for f in (where / "topk-reports").iterdir() if not any(f.name.replace("-", "_") in p.name for p in kept)]
    assert int(said.group(2)) == len(skipped), f"{block.where}: skipped {skipped}\n{added}"
    assert all(re.search(rf"^  {name}: \S", added.out, re.M) for name in skipped), f"{block.where}: a skip without why\n{added}"


def check_corpus_onnx(block, runs, where):
    """The ONNX Runtime loop over the ONNX cases ends and prints what the page says."""
    corpus = corpus_of(runs)
    (where / "topk-corpus").symlink_to(corpus.cwd / "topk-corpus")
    (where / "run_onnx.py").write_text(block.text)
    done = sh(f"{shlex.quote(sys.executable)} run_onnx.py", where)
    assert_code(done, 0, block.where)
    claims = prose_after(block)
    same_version(block, claims, "onnxruntime", r"With ONNX Runtime ([\d.]+)")
    printed = claim(r"prints `([^`]+)`", claims, block.where).group(1)
    assert printed in done.out, f"{block.where}: the page says it prints {printed!r}\n{done}"
    assert not done.err.strip(), f"{block.where}: it prints nothing else (no runtime warnings)\n{done.err[-2000:]}"


def check_corpus_replay(block, runs, where):
    """`topkspec directml replay`: exit code and "N of the M as stored; the other K"."""
    needs_directml()
    (command,) = block.commands()
    corpus = corpus_of(runs)
    (where / "topk-corpus").symlink_to(corpus.cwd / "topk-corpus")
    done = sh(command, where)
    claims = prose_after(block)
    found = claim(r"DirectML ([\d.]+) under Wine replays (\d+) of the (\d+) as stored; the other (\d+) are",
                  claims, block.where)
    stored, total, other = (int(found.group(i)) for i in (2, 3, 4))
    assert stored + other == total, f"{block.where}: {stored} + {other} is not {total}"
    assert_code(done, 0, block.where)
    assert f"{stored} as stored, 0 not as stored, {other} not judged" in done.out, f"{block.where}\n{done}"


def check_spec_validate(block, runs, where):
    """Each `spec.validate(...)` call gives the findings its `# ->` comment names."""
    from topkspec import spec
    calls = re.findall(r"(spec\.validate\(.*?\))\n# -> ([^\n]*)", block.text, re.S)
    assert len(calls) == block.text.count("spec.validate("), f"{block.where}: a call without `# ->`"
    for call, said in calls:
        got = [finding.rule for finding in eval(call, {"spec": spec})]  # the page's own code
        said = re.sub(r"\([^)]*\)", "", said).strip()  # the rule ids, the asides in brackets left out
        want = [] if said.startswith("[]") else [rule.strip() for rule in said.split(",")]
        assert sorted(got) == sorted(want), f"{block.where}: {call}\nthe page says {want}, it gives {got}"


def check_valid_descriptor(block, runs, where):
    """A descriptor shown as an example is valid: `topkspec validate -` exits 0."""
    (where / "descriptor.json").write_text(block.text)
    done = sh("topkspec validate descriptor.json", where)
    assert_code(done, 0, block.where)
    assert json.loads(done.out)["valid"] is True, str(done)


def check_spec_export(block, runs, where):
    """The export's own validator, made as its comment says, agrees with spec.validate."""
    from topkspec import spec
    assert_code(sh(claim(r"# (topkspec spec > [\w.-]+)", block.text, block.where).group(1), where), 0, block.where)
    for text in descriptors("docs/spec.md"):
        descriptor = json.loads(text)
        (where / "descriptor.json").write_text(text)  # the file the block reads: it defines all it uses
        namespace = {}
        cwd = os.getcwd()
        os.chdir(where)
        try:
            exec(block.text, namespace)
        finally:
            os.chdir(cwd)
        assert [f.rule for f in namespace["found"]] == [f.rule for f in spec.validate(descriptor)]


def onnx_model(path: pathlib.Path) -> None:
    import onnx
    from onnx import TensorProto, helper
    node = helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=-1)
    graph = helper.make_graph(
        [node], "topk", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("V", TensorProto.FLOAT, [3, 2]),
         helper.make_tensor_value_info("I", TensorProto.INT64, [3, 2])],
        [helper.make_tensor("K", TensorProto.INT64, [1], [2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), str(path))


def check_validate_commands(block, runs, where):
    """Each `topkspec validate` line on the files it names (the page's descriptors, a model):
    exit 0 when valid, 1 when not; `--against` adds the target's verdict."""
    dml, onnx_node = descriptors("docs/spec.md")
    (where / "descriptor.json").write_text(dml)
    (where / "descriptors.json").write_text(json.dumps([json.loads(dml), json.loads(onnx_node)]))
    (where / "desc.json").write_text(dml)
    onnx_model(where / "model.onnx")
    claims = prose_after(block)
    claim(r"exits 0 when\s+valid, 1 when invalid, 2 when the input cannot be read", claims, block.where)
    claim(r"3 means both", claims, block.where)
    for command in block.commands():
        if "--against directml" in command:
            needs_directml()
        done = sh(command, where)
        result = json.loads(done.out)
        results = result.get("items") or result.get("nodes") or [result]
        if command.endswith(".onnx"):
            claim(r'each node.s descriptor also carries `"K": \{"dtype", "shape"\}`', claims, block.where)
            assert all(set(node["descriptor"]["K"]) == {"dtype", "shape"} for node in results), str(done)
        want = 0 if all(r["valid"] for r in results) else 1
        assert_code(done, want, f"{block.where} `{command}`")
        if "--against" in command:
            assert all(r.get("against", {}).get("outcome") == "accepted" for r in results), str(done)
    broken = sh("topkspec validate broken.json", where)
    assert broken.code == 2 and "Traceback" not in broken.err, str(broken)
    (where / "both.json").write_text(json.dumps([{"op_type": "TopK"}, "no descriptor"]))
    both = sh("topkspec validate both.json", where)
    assert both.code == 3 and "item 1:" in both.err, str(both)


def check_other_commands(block, runs, where):
    """README's other commands: targets lists what is available; validate on a descriptor."""
    (where / "descriptor.json").write_text(descriptors("docs/spec.md")[0])
    targets, validate = block.commands()
    listed, valid = runs.once(targets), sh(validate, where)  # targets imports every runtime: once
    assert_code(listed, 0, block.where)
    assert "reference  [available]" in listed.out, str(listed)
    assert_code(valid, 0, block.where)


def check_bench(block, runs, where):
    """`topkspec bench`: one JSON line per target with the fields the page explains. A benchmark
    is run small here (--max-examples 10 --repeat 1); its figures are the page's to measure."""
    (command,) = block.commands()
    small = re.sub(r"--max-examples \d+", "--max-examples 10", command) + " --repeat 1 --quiet"
    names = needs_targets(block, command)
    done = sh(small, where)
    assert_code(done, 0, block.where)
    lines = [json.loads(line) for line in done.out.splitlines() if line.startswith("{")]
    by_target = {line.get("target"): line for line in lines if "target" in line}
    explained = ("of_floor", "of_floor_runs", "start_s", "in_worker", "cases_per_s", "bare_cases_per_s", "of_bare")
    fields = set(re.findall(r"`(" + "|".join(explained) + r")`", prose_before(block)))
    assert fields == set(explained), f"{block.where}: the page no longer explains {set(explained) - fields}"
    for name in names:
        assert name in by_target, f"{block.where}: no line for {name}\n{done}"
        line = by_target[name]
        assert fields <= set(line), f"{block.where}: {name} lacks {fields - set(line)}"
        assert line["cases"] > 0 and line["bare_cases_per_s"] > 0, f"{block.where}: {line}"
        assert line["of_bare"] == round(line["cases_per_s"] / line["bare_cases_per_s"], 4) or \
            abs(line["of_bare"] - line["cases_per_s"] / line["bare_cases_per_s"]) < 0.01, f"{block.where}: {line}"


def check_bench_bugs(block, runs, where):
    """`topkspec bench --bugs`, run from the repository (where tests/planted_bugs.py is) on two
    of the planted bugs and one seed: a line per bug with the fields the page names."""
    (command,) = block.commands()
    small = command.replace("tests/planted_bugs.py", "tests/planted_bugs.py:one_based_indices,ignores_direction")
    done = sh(small + " --seeds 1 --max-examples 60 --quiet", ROOT)
    assert_code(done, 0, block.where)
    bugs = [json.loads(line) for line in done.out.splitlines() if line.startswith('{"bug"')]
    assert [line["bug"] for line in bugs] == ["one_based_indices", "ignores_direction"], done
    for line in bugs:
        assert line["found"] == "1 of 1" and line["examples_median"] <= 60, line
    assert "median and max" in prose_before(block), f"{block.where}: the page no longer says what the figures are"


def check_bench_spec(block, runs, where):
    """`topkspec bench spec`, run small here (--repeat 1 --number 200): the rows of the page's
    table, fault counts included."""
    (command,) = block.commands()
    done = sh(command + " --repeat 1 --number 200", where)
    assert_code(done, 0, block.where)
    table = prose_after(block, 3)
    for faults in re.findall(r"with (\d+) faults", table):
        assert f"({faults} findings)" in done.out, f"{block.where}: no descriptor with {faults} findings\n{done}"
    for row in ("import topkspec.spec", "first spec.validate after it", "python -c pass"):
        assert row in done.out, f"{block.where}: no {row!r} row\n{done}"


def check_directml_setup(block, runs, where):
    """setup (idempotent, seconds when in place) and info run; `--version` and `--dll` change
    which DLL every later run uses, so they are parsed by the command line, not run."""
    needs_directml()
    for command in block.commands():
        words = shlex.split(command)
        if "--version" in words or "--dll" in words:
            build_parser().parse_args(words[1:])
            continue
        assert_code(sh(command, where), 0, f"{block.where} `{command}`")


def check_directml_targets_sample(block, runs, where):
    """The sample of `topkspec targets` has the shape of what `topkspec targets` prints here."""
    needs_directml()
    done = runs.once("topkspec targets")
    first, second = block.text.splitlines()[:2]
    lines = done.out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("directml "))
    assert lines[at].split("  on ")[0].split(" on ")[0] == first.split(" on ")[0], f"{first}\n{lines[at]}"
    assert lines[at + 1].split(";")[0] == second.split(";")[0], f"{second}\n{lines[at + 1]}"


def check_ep_targets_sample(block, runs, where):
    """The sample line of the DirectML EP in `topkspec targets` is what it prints here, up to
    the Wine stack (which differs between machines)."""
    needs_directml()
    done = runs.once("topkspec targets")
    sample = block.text.splitlines()[0]
    line = next((line for line in done.out.splitlines() if line.startswith("onnxruntime-directml ")), "")
    assert line.split(";")[0] == sample.split(";")[0], f"{sample}\n{line}"


def check_api_summary(block, runs, where):
    """The API page's summary lines run (descriptor: docs/spec.md's first) and give what their
    comments say."""
    from topkspec import spec
    namespace = {"spec": spec, "descriptor": json.loads(descriptors("docs/spec.md")[0])}
    for line in block.text.splitlines():
        code, _, comment = line.partition("#")
        if code.startswith("from "):
            exec(code, namespace)
        elif code.strip():
            got = eval(code, namespace)  # the page's own line
            quoted = re.fullmatch(r'\s*"([^"]*)"\s*', comment)
            if quoted:
                assert got == quoted.group(1), f"{block.where}: `{code.strip()}` gives {got!r}, the page says {comment}"
            if "Finding(" in comment:
                assert isinstance(got, list), f"{block.where}: `{code.strip()}` gives {got!r}"


CHECKS = {
    "quick-start": check_quick_start,
    "known-toml": check_known_toml,
    "matrix": check_matrix,
    "ci-pytest": check_ci_pytest,
    "corpus-write": check_corpus_write,
    "corpus-onnx": check_corpus_onnx,
    "corpus-replay": check_corpus_replay,
    "spec-validate": check_spec_validate,
    "valid-descriptor": check_valid_descriptor,
    "spec-export": check_spec_export,
    "validate-commands": check_validate_commands,
    "other-commands": check_other_commands,
    "bench": check_bench,
    "bench-spec": check_bench_spec,
    "bench-bugs": check_bench_bugs,
    "directml-setup": check_directml_setup,
    "directml-targets-sample": check_directml_targets_sample,
    "ep-targets-sample": check_ep_targets_sample,
    "api-summary": check_api_summary,
}
