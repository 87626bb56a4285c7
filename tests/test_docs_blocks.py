"""Every fenced block of README.md and docs/ runs as written, and what the page says about its
output (exit codes, counts, report folders, "N of M") is what the commands give.

tests/docs_blocks.py finds the blocks and their marks. A block with no mark runs as written; a
block marked `check: NAME` runs through CHECKS[NAME] below, which reads the page's claims next
to it; every other block carries the reason it does not run here. A new block on any page is
picked up by itself: unmarked, it runs, and fails loudly if it does not work as written."""
import importlib.util
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tomllib

import pytest

from docs_blocks import ROOT, Block, all_blocks, blocks_of, page_text, pages, prose_after, prose_before
from topkspec.cli import build_parser
from topkspec.spec.profiles import STANDARD_PROFILES

BLOCKS = all_blocks()
WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
RUNNERS = ("sh", "python", "json")
TIMEOUT = 600


def env() -> dict:
    """The tests' own install, with this checkout first on the path, as a new user's shell has it."""
    out = dict(os.environ)
    out["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), out.get("PATH", "")])
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), out.get("PYTHONPATH", "")) if p)
    out.pop("TOPKSPEC_DIRECTML_DLL", None)
    return out


class Done:
    def __init__(self, command: str, cwd: pathlib.Path, proc: subprocess.CompletedProcess):
        self.command, self.cwd, self.code = command, cwd, proc.returncode
        self.out, self.err = proc.stdout, proc.stderr

    def __str__(self):
        return f"$ {self.command}  (in {self.cwd}, exit {self.code})\n{self.out[-4000:]}{self.err[-4000:]}"


def sh(command: str, cwd: pathlib.Path, timeout: int = TIMEOUT) -> Done:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    return Done(command, cwd, proc)


class Runs:
    """Commands several pages share (the quick start is on three) run once a session, each in
    a folder of its own that later checks read from."""

    def __init__(self, base: pathlib.Path):
        self.base, self.done = base, {}

    def once(self, command: str) -> Done:
        if command not in self.done:
            cwd = self.base / f"run{len(self.done)}"
            cwd.mkdir()
            self.done[command] = sh(command, cwd)
        return self.done[command]


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    return Runs(tmp_path_factory.mktemp("docs-runs"))


# -- what every block may carry ----------------------------------------------------------------

def extras() -> set:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project.get("optional-dependencies", {}))


def install_checked(command: str) -> bool:
    """A `pip install -e` of this project is checked, not run: the tests run in that install.
    True when `command` is one (and its extras exist)."""
    words = shlex.split(command)
    if words[:2] != ["pip", "install"] or "-e" not in words:
        return False
    target = words[words.index("-e") + 1]
    wanted = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
    assert wanted, f"`{command}`: installs {target!r}, not this project"
    missing = set(filter(None, (wanted.group(1) or "").split(","))) - extras()
    assert not missing, f"`{command}`: pyproject.toml has no extra {sorted(missing)}"
    return True


def runnable(command: str) -> str:
    """The part of `pip install -e . && CMD` that runs; the install part is checked."""
    parts = command.split(" && ")
    while parts and install_checked(parts[0]):
        parts.pop(0)
    return " && ".join(parts)


def files_of(page: str) -> list[Block]:
    return [b for b in BLOCKS if b.page == page and b.lang == "python" and b.file_name]


def write_files(page: str, where: pathlib.Path) -> None:
    for block in files_of(page):
        (where / block.file_name).parent.mkdir(parents=True, exist_ok=True)
        (where / block.file_name).write_text(block.text)


def load_file(path: pathlib.Path):
    loader = importlib.util.spec_from_file_location(f"docs_{path.stem}", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def number(word: str) -> int:
    return int(word) if word.isdigit() else WORDS[word.lower()]


def claim(pattern: str, text: str, where: str):
    found = re.search(pattern, text, re.S)
    assert found, f"{where}: the page no longer says /{pattern}/ (update the check with the page):\n{text}"
    return found


def needs_directml():
    from directml_needed import need
    from topkspec.targets.registry import get_target
    need(get_target("directml")).close()


def needs_targets(block: Block, command: str) -> list[str]:
    """The targets `--targets` names, or a skip naming the first that cannot run here."""
    from topkspec.targets.registry import get_target
    names = claim(r"--targets ([\w,-]+)", command, block.where).group(1).split(",")
    for name in names:
        target = get_target(name)
        ok, why = target.available()
        target.close()
        if not ok:
            pytest.skip(f"{block.where} needs the {name} target: {why}")
    return names


def same_version(block: Block, claims: str, package: str, pattern: str) -> None:
    """The page's figures are for the version it names: skip comparing them under another."""
    from importlib.metadata import version
    named = claim(pattern, claims, block.where).group(1)
    if version(package) != named:
        pytest.skip(f"{block.where} gives figures for {package} {named}; {version(package)} is installed")


def assert_code(done: Done, code: int, where: str) -> None:
    assert done.code == code, f"{where}: the page says exit {code}\n{done}"


# -- the unmarked blocks: run as written ------------------------------------------------------

def run_plain(block: Block, where: pathlib.Path) -> None:
    write_files(block.page, where)
    if block.lang == "json":
        json.loads(block.text)
    elif block.lang == "python":
        if block.file_name:  # a file the page asks you to save: it must at least import
            module = block.file_name[:-3].replace("/", ".")
            done = sh(f"{shlex.quote(sys.executable)} -c 'import {module}'", where)
        else:
            (where / "block.py").write_text(block.text)
            done = sh(f"{shlex.quote(sys.executable)} block.py", where)
        assert_code(done, 0, block.where)
    else:
        for command in block.commands():
            command = runnable(command)
            if command:
                assert_code(sh(command, where), 0, block.where)


# -- the checks: what a page says about its blocks' output ---------------------------------------

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
        for folder in folders:
            top = (done.cwd / "topk-reports" / folder / "report.md").read_text().split("\n\n")[1]
            assert top.startswith("**Known upstream**") and "https://" in top, f"{folder}: {top}"
    known = runs.once(f"{fuzz} --known")
    assert_code(known, int(claim(r"`--known`.*?exits (\d)", claims, block.where).group(1)), block.where)
    assert not (known.cwd / "topk-reports").exists(), f"{block.where}: --known wrote reports\n{known}"


def check_known_toml(block, runs, where):
    """The known-deviation entry as shown loads, with every field it shows."""
    from topkspec.known import load_known
    (where / "known.toml").write_text(block.text)
    known = load_known(str(where / "known.toml"), "onnxruntime")
    (entry,) = known.entries
    assert entry.rule == "onnx.k.positive" and entry.url.endswith("/pull/909"), entry


def check_matrix(block, runs, where):
    """A row per rule, a column per target, broken cells linking their reports."""
    (command,) = block.commands()
    targets = needs_targets(block, command)
    done = sh(command, where)
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


def descriptors(page: str) -> list[str]:
    return [b.text for b in BLOCKS if b.page == page and b.lang == "json"]


def check_spec_export(block, runs, where):
    """The export's own validator, made as its comment says, agrees with spec.validate."""
    from topkspec import spec
    assert_code(sh(claim(r"# (topkspec spec > [\w.-]+)", block.text, block.where).group(1), where), 0, block.where)
    for text in descriptors("docs/spec.md"):
        descriptor = json.loads(text)
        namespace = {"descriptor": descriptor}
        cwd = os.getcwd()
        os.chdir(where)
        try:
            exec(block.text.replace("validator.validate(descriptor)", "found = validator.validate(descriptor)"),
                 namespace)
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
    fields = set(re.findall(r"`(of_floor|of_floor_runs|start_s)`", prose_before(block)))
    assert fields, f"{block.where}: the page no longer explains of_floor, of_floor_runs and start_s"
    for name in names:
        assert name in by_target, f"{block.where}: no line for {name}\n{done}"
        assert fields <= set(by_target[name]), f"{block.where}: {name} lacks {fields - set(by_target[name])}"


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


FAILURE = re.compile(r"^  \[(?P<cls>[^\]]+)\] (?P<rule>\S+) \((?P<status>[^)]+)\): (?P<case>[^\n]*?)(?: -> \S+)?\n"
                     r"(?:\s+what:[^\n]*\n)?(?:\s+input:\s+(?P<input>[^\n]*)\n)?", re.M)


def failures(done: Done) -> list[dict]:
    """The summary's failure lines: class, rule, the case and (without --report-dir) the input."""
    return [m.groupdict() for m in FAILURE.finditer(done.out)]


def wraps_around(failure: dict) -> bool:
    """The bug docs/targets.md plants: -x wraps for unsigned types and the most negative integer."""
    import numpy as np
    dtype = re.search(r"\b(u?int\d+)\[", failure["case"])
    if failure["cls"] != "wrong result" or not dtype or "largest" not in failure["case"]:
        return False
    info = np.iinfo(dtype.group(1))
    return info.min == 0 or str(info.min) in (failure["input"] or "")


def check_my_topk(block, runs, where):
    """Both ways of naming my_topk.py find its bug and only it; the example the page gives of
    the bug is what the function does; a module path without PYTHONPATH=. stops as the page says."""
    import numpy as np
    page_topk = load_file(where / "my_topk.py").topk
    said = claim(r"`int64\[2\] = \[0, (-\d+)\]` with\s+K = 1 returns the second", page_text(block), block.where)
    x = np.array([0, int(said.group(1))], dtype=np.int64)
    assert page_topk(x, axis=0, k=1, largest=True)[1].tolist() == [1], f"{block.where}: the bug's example"
    for command in block.commands():
        done = sh(command, where)
        assert_code(done, 1, f"{block.where} `{command}`")
        found = failures(done)
        assert found and all(wraps_around(f) for f in found), f"{block.where}: not only the wrap-around\n{done}"
    module = next(c for c in block.commands() if c.startswith("PYTHONPATH=. "))
    bare = sh(module.removeprefix("PYTHONPATH=. "), where)
    message = claim(r"exit (\d), with `([^`]+)`", prose_after(block), block.where)
    assert bare.code == int(message.group(1)) and message.group(2) in bare.err, str(bare)
    assert "Traceback" not in bare.err, str(bare)


def holds_everywhere(command: str, where: pathlib.Path, label: str, first: int) -> None:
    """A correct example gives no report: three profiles here, from `first` on, one seed each, so
    the three correct examples of the pages together cover every standard profile."""
    for i in range(first, first + 3):
        profile, seed = STANDARD_PROFILES[i % len(STANDARD_PROFILES)], i
        done = sh(f"{command} --spec {profile} --seed {seed} --quiet", where)
        assert done.code == 0 and "every property held" in done.out, f"{label} at {profile}, seed {seed}\n{done}"


def check_my_topk_fixed(block, runs, where):
    (command,) = block.commands()
    done = sh(command, where)
    assert_code(done, 0, block.where)
    assert "every property held" in done.out, str(done)
    holds_everywhere(re.sub(r" --spec \S+ --seed \d+", "", command), where, block.where, 4)


NPU = """\
# A stand-in for a runtime's Python package: the page's fixed topk, with an error type of its own.
from my_topk_fixed import topk as _topk

__version__ = "0.1"


class Error(Exception):
    pass


def topk(x, k, *, axis, largest):
    if not -x.ndim <= axis < x.ndim:
        raise Error(f"axis {axis} is out of range for rank {x.ndim}")
    try:
        return _topk(x, axis=axis, k=k, largest=largest)
    except ValueError as exc:
        raise Error(str(exc)) from exc
"""


def check_npu_target(block, runs, where):
    """NpuTarget as written, over a stand-in my_npu that computes right: no report anywhere,
    bfloat16 reported unsupported with the reason it gives."""
    (where / "my_npu" / "__init__.py").write_text(NPU)
    command = f"PYTHONPATH=. topkspec fuzz --target {block.file_name[:-3].replace('/', '.')}:NpuTarget"
    done = sh(f"{command} --seed 0", where)
    assert_code(done, 0, block.where)
    assert "my_npu has no bfloat16 type" in done.out or "bfloat16" not in done.out, str(done)
    holds_everywhere(command, where, block.where, 0)


def check_my_checks(block, runs, where):
    """The validator example: exit 1, every failure an accepted invalid descriptor, none under
    the rule it checks, no adapter error."""
    (command,) = block.commands()
    done = sh(command, where)
    claims = prose_after(block)
    claim(r"[Tt]he run exits 1", claims, block.where)
    assert_code(done, 1, block.where)
    found = failures(done)
    checked = claim(r"none is under\s+`([\w.]+)`", claims, block.where).group(1)
    assert found and all(f["cls"] == "accepts an invalid one" for f in found), f"{block.where}\n{done}"
    assert not [f for f in found if f["rule"] == checked], f"{block.where}: failed under {checked}\n{done}"
    assert "adapter error" not in done.out, str(done)


COMPILER = """\
# A stand-in for a compiler's own check: it refuses what the spec finds broken.
from topkspec import spec


class Invalid(Exception):
    pass


def check_topk(descriptor):
    broken = spec.validate(descriptor)
    if broken:
        raise Invalid(", ".join(finding.rule for finding in broken))
"""


def check_compiler_checks(block, runs, where):
    """CompilerChecks as written, over a my_compiler that refuses exactly what the spec does:
    no report at any profile."""
    (where / "my_compiler.py").write_text(COMPILER)
    holds_everywhere(f"PYTHONPATH=. topkspec fuzz --target ./{block.file_name}:CompilerChecks", where,
                     block.where, 3)


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


def check_repro_writer(block, runs, where):
    """The repro writer as shown, registered beside NpuTarget, with the page's template saved as
    my_npu/repro.tmpl: a bug planted in the stand-in my_npu (it ignores the direction) is
    reported under the title the page gives, and each repro.py, which imports no topkspec,
    exits 1 on it and 0 once my_npu computes right."""
    page = [b for b in BLOCKS if b.page == block.page]
    npu = next(b for b in page if b.marks.get("check") == "npu-target")
    template = next(b for b in page if b.lang == "text" and "$" in b.text)
    (where / npu.file_name).write_text(npu.text + "\n\n" + block.text)
    (where / "my_npu" / "repro.tmpl").write_text(template.text)
    (where / "my_npu" / "__init__.py").write_text(NPU.replace("largest=largest)", "largest=True)"))
    done = sh("PYTHONPATH=. topkspec fuzz --target my_npu.topkspec_target:NpuTarget --seed 0 --quiet "
              "--report-dir reports", where)
    assert_code(done, 1, block.where)
    title = claim(r"the report's title reads `([^`]+)`", " ".join(page_text(block).split()), block.where).group(1)
    folders = sorted((where / "reports").iterdir())
    assert folders, str(done)
    for folder in folders:
        assert (folder / "report.md").read_text().startswith(f"# {title} "), f"{folder.name}: not titled {title}"
        assert "topkspec" not in (folder / "repro.py").read_text(), f"{folder.name}/repro.py imports topkspec"
        assert_code(sh(f"PYTHONPATH=. {shlex.quote(sys.executable)} {folder}/repro.py", where), 1, folder.name)
    (where / "my_npu" / "__init__.py").write_text(NPU)
    for folder in folders:
        assert_code(sh(f"PYTHONPATH=. {shlex.quote(sys.executable)} {folder}/repro.py", where), 0, f"{folder.name}, fixed")


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
    "directml-setup": check_directml_setup,
    "directml-targets-sample": check_directml_targets_sample,
    "api-summary": check_api_summary,
    "my-topk": check_my_topk,
    "my-topk-fixed": check_my_topk_fixed,
    "npu-target": check_npu_target,
    "repro-writer": check_repro_writer,
    "my-checks": check_my_checks,
    "compiler-checks": check_compiler_checks,
}


def how(block: Block) -> str:
    if block.directive:
        return "sphinx"
    for mark in ("not-run", "checked-by", "check"):
        if mark in block.marks:
            return mark
    return "plain"


def runs_here(block: Block) -> bool:
    return how(block) in ("plain", "check")


@pytest.mark.parametrize("block", [b for b in BLOCKS if runs_here(b)], ids=lambda b: b.where)
def test_the_block_runs_as_the_page_says(block, runs, tmp_path):
    write_files(block.page, tmp_path)
    if how(block) == "check":
        CHECKS[block.marks["check"].split()[0]](block, runs, tmp_path)
    else:
        run_plain(block, tmp_path)


def unaccounted(blocks: list[Block]) -> list[str]:
    """Each block that neither runs here nor says why not, and each check no block uses."""
    problems = []
    for block in blocks:
        kind = how(block)
        if kind == "not-run" and len(block.marks["not-run"]) < 12:
            problems.append(f"{block.where}: `not-run` needs a reason a reader of the source understands")
        elif kind == "checked-by":
            test = block.marks["checked-by"].split()[0]
            if not (ROOT / test).is_file() or pathlib.PurePath(block.page).name not in (ROOT / test).read_text():
                problems.append(f"{block.where}: checked-by {test}, which does not read {block.page}")
        elif kind == "check" and block.marks["check"].split()[0] not in CHECKS:
            problems.append(f"{block.where}: no check named {block.marks['check']!r}")
        elif kind == "plain" and block.lang not in RUNNERS:
            problems.append(f"{block.where}: a ```{block.lang or '(no language)'} block runs nowhere: "
                            "mark it <!-- not-run: why --> or <!-- check: NAME -->")
    used = {b.marks["check"].split()[0] for b in blocks if how(b) == "check"}
    return problems + [f"CHECKS[{name!r}] checks no block" for name in sorted(set(CHECKS) - used)]


def test_every_block_is_run_or_says_why_not():
    problems = unaccounted(BLOCKS)
    assert not problems, "\n".join(problems)


PLANTED_PAGE = """\
<!-- not-run: -->
```text
a reason too short to say anything
```

```toml
[unmarked] = "runs nowhere"
```

<!-- check: no-such-check -->
```sh
topkspec targets
```

<!-- checked-by: tests/test_docs.py -->
```python
print("test_docs.py never reads planted.md")
```

```sh
topkspec fuzz --target no-such-target --max-examples 5
```
"""


def test_a_stale_or_unmarked_block_is_caught(tmp_path, monkeypatch):
    page = tmp_path / "planted.md"
    page.write_text(PLANTED_PAGE)
    monkeypatch.setattr("docs_blocks.ROOT", tmp_path)
    planted = blocks_of(page)
    problems = "\n".join(unaccounted(planted))
    for line in (2, 6, 11, 16):
        assert f"planted.md:{line}:" in problems, f"line {line} not caught:\n{problems}"
    with pytest.raises(AssertionError, match="exit 2"):  # an unmarked command that fails
        run_plain(planted[-1], tmp_path)


def inline_spans() -> list[tuple[str, str]]:
    """Every `code span` of the pages' prose that names a command, module or file of topkspec."""
    spans = []
    for path in pages():
        text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
        page = path.relative_to(ROOT).as_posix()
        spans += [(page, m) for m in re.findall(r"`((?:python -m )?topkspec[^`]*)`", text.replace("\n", " "))]
    return spans


def test_the_commands_and_names_in_the_prose_exist():
    """A command in a sentence names a subcommand and options the command line has (a value it
    leaves out is fine: the sentence names the option); a module, object or file path exists."""
    from topkspec.errors import UsageError
    problems = []
    for page, span in inline_spans():
        words = span.split()
        if words[0] == "topkspec" and len(words) > 1 and not words[1].startswith("<"):
            try:
                build_parser().parse_args(words[1:])
            except UsageError as exc:
                if re.search(r"unrecognized arguments|invalid choice", str(exc)):
                    problems.append(f"{page}: `{span}`: {exc}")
            except SystemExit:  # --version and --help print and exit
                pass
        elif words[0] == "python":
            if importlib.util.find_spec(words[2]) is None:
                problems.append(f"{page}: `{span}`: no module {words[2]}")
        elif "/" in span and "<" not in span:
            if not (ROOT / span).exists():
                problems.append(f"{page}: `{span}`: no such file in the repository")
        elif re.fullmatch(r"topkspec(\.\w+)+", span.split("(")[0]):
            if not named(span.split("(")[0]):
                problems.append(f"{page}: `{span}`: topkspec has no such name")
    assert not problems, "\n".join(problems)


def named(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False
