"""The checks of the docs' example targets (docs/targets.md, docs/validators.md): the buggy ones
are reported for their bug alone, the correct ones give no report, over stand-ins for the
runtime or compiler a page names."""
import pathlib
import re
import shlex
import sys

from docs_blocks import page_text, prose_after
from docs_run import BLOCKS, assert_code, claim, failures, load_file, sh
from topkspec.spec.profiles import STANDARD_PROFILES


def wraps_around(failure: dict) -> bool:
    """The bug docs/targets.md plants: -x wraps for unsigned types and the most negative integer."""
    import numpy as np
    dtype = re.search(r"\b(u?int\d+)\[", failure["case"])
    if failure["cls"] != "wrong result" or not dtype or "largest" not in failure["case"]:
        return False
    info = np.iinfo(dtype.group(1))
    if failure["input"] is None:  # with --report-dir the summary shows none: wrapped_input reads it
        return True
    return info.min == 0 or str(info.min) in failure["input"]


def check_my_topk(block, runs, where):
    """Both ways of naming my_topk.py find its bug and only it; the example the page gives of
    the bug is what the function does; a module path without PYTHONPATH=. stops as the page says."""
    import numpy as np
    page_topk = load_file(where / "my_topk.py").topk
    said = claim(r"`int64\[2\] = \[0, (-\d+)\]` with\s+K = 1 returns the second", page_text(block), block.where)
    x = np.array([0, int(said.group(1))], dtype=np.int64)
    assert page_topk(x, axis=0, k=1, largest=True)[1].tolist() == [1], f"{block.where}: the bug's example"
    for number, command in enumerate(block.commands()):
        done = sh(command + (" --report-dir reports" if number == 0 else ""), where)
        assert_code(done, 1, f"{block.where} `{command}`")
        found = failures(done)
        assert found and all(wraps_around(f) for f in found), f"{block.where}: not only the wrap-around\n{done}"
    repros_fail_until_fixed(where, "my_topk.py", block.where)
    module = next(c for c in block.commands() if c.startswith("PYTHONPATH=. "))
    bare = sh(module.removeprefix("PYTHONPATH=. "), where)
    message = claim(r"exit (\d), with `([^`]+)`", prose_after(block), block.where)
    assert bare.code == int(message.group(1)) and message.group(2) in bare.err, str(bare)
    assert "Traceback" not in bare.err, str(bare)


def wrapped_input(folder: pathlib.Path) -> bool:
    """The input a report stored is one -x wraps around for: unsigned, or holding the type's minimum."""
    import numpy as np
    x = np.load(folder / "inputs.npz")["x0"]
    return x.dtype.kind == "u" or (x.dtype.kind == "i" and np.iinfo(x.dtype).min in x)


def repros_fail_until_fixed(where: pathlib.Path, buggy: str, label: str) -> list[pathlib.Path]:
    """Each report's repro.py under where/reports exits 1 in a fresh process; once `buggy` holds
    the page's fixed my_topk_fixed.py, 0 (the file is put back after)."""
    folders = sorted((where / "reports").iterdir())
    assert folders, f"{label}: no report written"
    python = shlex.quote(sys.executable)
    for folder in folders:
        assert wrapped_input(folder), f"{label}: {folder.name} is not the wrap-around"
        assert_code(sh(f"cd {shlex.quote(str(folder))} && {python} repro.py", where), 1, f"{label}: {folder.name}")
    kept = (where / buggy).read_text()
    (where / buggy).write_text((where / "my_topk_fixed.py").read_text())
    try:
        for folder in folders:
            assert_code(sh(f"cd {shlex.quote(str(folder))} && {python} repro.py", where), 0,
                        f"{label}: {folder.name}, fixed")
    finally:
        (where / buggy).write_text(kept)
    return folders


def check_callable_target(block, runs, where):
    """The CallableTarget example: the wrap-around bug again, each report titled by its name=,
    naming its version=, its repro.py calling my_topk's topk (no topkspec), exit 1 until fixed."""
    (command,) = block.commands()
    done = sh(command, where)
    assert_code(done, 1, block.where)
    found = failures(done)
    assert found and all(wraps_around(f) for f in found), f"{block.where}: not only the wrap-around\n{done}"
    text = " ".join(page_text(block).split())
    title = claim(r"titles and summaries call it \(`([^`(]+) \(", text, block.where).group(1)
    target = (where / "my_topk_target.py").read_text()
    version = claim(r'version="([^"]+)"', target, block.where).group(1)
    for folder in repros_fail_until_fixed(where, "my_topk.py", block.where):
        report = (folder / "report.md").read_text()
        assert report.startswith(f"# {title.split()[0]} "), f"{folder.name}: not titled by name=: {report[:120]}"
        assert f"{title.split()[0]} {version}" in report, f"{folder.name}: the version {version} is not named"
        source = (folder / "repro.py").read_text()
        assert "'my_topk').topk" in source and "topkspec" not in source, f"{folder.name}: repro.py\n{source}"
    assert any((f / "report.md").read_text().startswith(f"# {title} ") for f in (where / "reports").iterdir()), title


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


def if_branch_model(path) -> None:
    """The model docs/validators.md describes: X of shape [N, 4], its only TopK in an If's
    then-branch, along N, with K from a graph input."""
    import onnx
    from onnx import TensorProto, helper
    out = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, None)  # noqa: E731
    then = helper.make_graph([helper.make_node("TopK", ["X", "K"], ["V", "I"], name="top", axis=0)], "then", [],
                             [out("V")])
    other = helper.make_graph([helper.make_node("Identity", ["X"], ["W"])], "else", [], [out("W")])
    graph = helper.make_graph(
        [helper.make_node("If", ["C"], ["Y"], name="choose", then_branch=then, else_branch=other)], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("C", TensorProto.BOOL, []),
         helper.make_tensor_value_info("K", TensorProto.INT64, [1])], [out("Y")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))


def check_model_checker(block, runs, where):
    """The checker as written, on the model the page describes, prints what its comments say."""
    import contextlib
    import io
    import os
    claim(r"shape `\[N, 4\]`, and its only TopK sits in an If branch, sorts along `N`, and\s+takes K from a "
          r"graph input", page_text(block), block.where)
    if_branch_model(where / "model.onnx")
    printed, cwd = io.StringIO(), os.getcwd()
    os.chdir(where)
    try:
        with contextlib.redirect_stdout(printed):
            exec(block.text, {})
    finally:
        os.chdir(cwd)
    said = [line[2:] for line in block.text.splitlines() if line.startswith("# ")]
    assert printed.getvalue().splitlines() == said, f"{block.where}: prints\n{printed.getvalue()}the page says {said}"


def check_my_backend(block, runs, where):
    """The Backend API example: the run exits 1 with the one report the page names, K = 0 accepted;
    its repro.py, in the Backend API (no topkspec), exits 1, then 0 once the page's backend
    refuses K = 0 in `run`, then 2 once the backend's file is gone."""
    (command,) = block.commands()
    done = sh(command, where)
    says = prose_after(block)
    assert_code(done, int(claim(r"The run exits (\d)", says, block.where).group(1)), block.where)
    folder = claim(r"one report, `([^`]+)`", says, block.where).group(1)
    found = failures(done)
    assert [(f["rule"], f["cls"]) for f in found] == [("onnx.k.positive", "accepts an invalid one")], str(done)
    assert sorted(p.name for p in (where / "reports").iterdir()) == [folder.split("/")[-1]], str(done)
    repro = where / folder / "repro.py"
    source = repro.read_text()
    assert "MyBackend.prepare" in source and 'function(model, "CPU")' in source, source
    assert not re.search(r"^\s*(import|from) topkspec", source, re.M), f"{repro} imports topkspec"
    run = f"{shlex.quote(sys.executable)} {folder}/repro.py"
    assert_code(sh(run, where), 1, f"{block.where}: {folder}/repro.py")
    backend = where / "my_backend.py"
    answer = "        return self.session.run(None, dict(zip(self.names, inputs)))"
    assert answer in backend.read_text(), "the page's MyRep.run"
    backend.write_text(backend.read_text().replace(answer, "        if len(inputs) > 1 and int(inputs[1][0]) < 1:\n"
                                                          "            raise ValueError('K must be positive')\n" + answer))
    assert_code(sh(run, where), 0, f"{block.where}: {folder}/repro.py once run refuses K = 0")
    backend.unlink()
    done = sh(run, where)
    assert_code(done, 2, f"{block.where}: {folder}/repro.py without my_backend.py")
    assert "cannot run" in done.err and "Traceback" not in done.err, str(done)


CHECKS = {
    "model-checker": check_model_checker,
    "my-topk": check_my_topk,
    "my-backend": check_my_backend,
    "my-topk-fixed": check_my_topk_fixed,
    "callable-target": check_callable_target,
    "npu-target": check_npu_target,
    "repro-writer": check_repro_writer,
    "my-checks": check_my_checks,
    "compiler-checks": check_compiler_checks,
}
