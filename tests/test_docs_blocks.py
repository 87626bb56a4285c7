"""Every fenced block of README.md and docs/ runs as written, and what the page says about its
output (exit codes, counts, report folders, "N of M") is what the commands give.

tests/docs_blocks.py finds the blocks and their marks. A block with no mark runs as written; a
block marked `check: NAME` runs through the check of that name (docs_checks_commands.py,
docs_checks_examples.py, docs_checks_kinds.py), which reads the page's claims next to it; every
other block carries the reason it does not run here. A new block on any page is
picked up by itself: unmarked, it runs, and fails loudly if it does not work as written."""
import importlib.util
import pathlib
import re

import pytest
from slow import slow

import docs_checks_commands
import docs_checks_examples
import docs_checks_kinds
from docs_blocks import ROOT, Block, blocks_of, pages
from docs_run import BLOCKS, Runs, run_plain, write_files
from topkspec.cli import build_parser

CHECKS = {**docs_checks_commands.CHECKS, **docs_checks_examples.CHECKS, **docs_checks_kinds.CHECKS}


RUNNERS = ("sh", "python", "json")


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    return Runs(tmp_path_factory.mktemp("docs-runs"))


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
@slow
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
