"""The checks of the docs' blocks on kinds of failure and the divergence table: `--fail-on` and
`--topk-fail-on` as the pages say they exit, and the divergence table's rows as the command
prints them. tests/test_docs_blocks.py runs them by the block's mark."""
import json
import re

import pytest

from docs_blocks import page_text, prose_after
from docs_run import assert_code, claim, number, runnable, same_version


def _kinds_of_reports(done, where) -> list:
    folders = sorted((done.cwd / "topk-reports").iterdir())
    return [json.loads((folder / "case.json").read_text())["kind"] for folder in folders]


def check_fail_on(block, runs, where):
    """`topkspec fuzz … --fail-on` exits as the page says, with its reports of the kinds it names,
    those left out of --fail-on not failing the run and the others failing it."""
    (command,) = block.commands()
    done = runs.once(runnable(command))
    claims = prose_after(block)
    same_version(block, claims, "onnxruntime", r"ONNX Runtime ([\d.]+)")
    found = claim(r"exits (\d) with (\w+) reports\. (\w+) are of kind `([\w-]+)`.*?do not fail the run; "
                  r"(\w+) is of kind `([\w-]+)`.*?fails it", claims, block.where)
    assert_code(done, int(found.group(1)), block.where)
    left_out, failing = found.group(4), found.group(6)
    kinds = _kinds_of_reports(done, block.where)
    assert sorted(kinds) == sorted([left_out] * number(found.group(3)) + [failing] * number(found.group(5))), \
        f"{block.where}: the reports' kinds {kinds}\n{done}"
    assert len(kinds) == number(found.group(2)), f"{block.where}: {len(kinds)} reports\n{done}"
    for kind, fails in ((left_out, "does not fail the run"), (failing, "fails the run")):
        assert done.out.count(f"kind: {kind} ({fails})") == kinds.count(kind), f"{block.where}: {kind}\n{done}"
        assert f"  {kind:<28} {kinds.count(kind)}" in done.out, f"{block.where}: no count for {kind}\n{done}"


def check_ci_fail_on(block, runs, where):
    """The plugin with --topk-fail-on: exit code, the one group failing (on a kind the option
    keeps) and the other passing, the reports and their kinds."""
    (command,) = block.commands()
    done = runs.once(command)
    claims = prose_after(block)
    same_version(block, claims, "onnxruntime", r"ONNX Runtime ([\d.]+)")
    found = claim(r"It exits (\d) .*?failing one group, `(\w+)`.*?the `(\w+)` group passes", claims, block.where)
    assert_code(done, int(found.group(1)), block.where)
    assert "1 failed" in done.out.splitlines()[-1], f"{block.where}: one group fails\n{done}"
    assert f"FAILED ::test_{found.group(2)}" in done.out and f"FAILED ::test_{found.group(3)}" not in done.out, \
        f"{block.where}: {found.group(2)} fails, {found.group(3)} passes\n{done}"
    count = claim(r"the (\w+) reports are written", claims, block.where).group(1)
    kinds = _kinds_of_reports(done, block.where)
    assert len(kinds) == number(count) and set(kinds) == {"feature-request", "standard"}, \
        f"{block.where}: {kinds}\n{done}"


def check_divergence(block, runs, where):
    """`topkspec divergence` on the block's targets that run here prints, for each, the row the
    page's table holds for it, word for word (versions included)."""
    from topkspec.targets.registry import get_target

    (command,) = block.commands()
    names = claim(r"--targets ([\w,-]+)", command, block.where).group(1).split(",")
    here = []
    for name in names:
        target = get_target(name)
        ok, _ = target.available()
        target.close()
        if ok:
            here.append(name)
    if not here:
        pytest.skip(f"{block.where}: none of {names} runs here")
    done = runs.once(command.replace(",".join(names), ",".join(here)))
    assert done.code == 0, str(done)
    def rows(text):  # the table's rows: a runtime's name, then its cells
        return [line for line in text.splitlines() if re.match(r"\| [\w-]+ \| ", line)
                and line.count("|") == 10 and not line.startswith("| runtime |")]
    page_rows = {line.split("|")[1].strip(): line for line in rows(page_text(block))}
    printed = rows(done.out)
    assert [line.split("|")[1].strip() for line in printed] == here, f"{block.where}: rows {printed}\n{done}"
    for line in printed:
        name = line.split("|")[1].strip()
        assert page_rows.get(name) == line, (f"{block.where}: the page's row for {name} is\n{page_rows.get(name)}\n"
                                             f"the command prints\n{line}")


CHECKS = {
    "fail-on": check_fail_on,
    "ci-fail-on": check_ci_fail_on,
    "divergence": check_divergence,
}
