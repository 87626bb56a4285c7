"""The fenced blocks of README.md and docs/, with the marks a page puts before them.

A mark is an HTML comment on the lines just before a block's fence (readers of the page never
see it). Each block is run by tests/test_docs_blocks.py in one of four ways:

- no mark: run as written. `sh` runs each command line in a fresh folder (a `pip install` is
  checked against pyproject.toml's extras instead: the tests run in that install); `python`
  runs as a program there, after the page's file blocks (a `python` block whose first line
  is `# name.py`) are written beside it; `json` must parse.
- `<!-- check: NAME -->`: run by the check of that name, which sets up what the block needs
  and compares what the page says about the output with what the commands give.
- `<!-- checked-by: tests/FILE.py -->`: another test file runs it.
- `<!-- not-run: REASON -->`: not runnable as written (an output sample, a template, a
  fragment); the reason is required.

MyST directives (```{toctree}, ```{eval-rst}) are built by the Sphinx test in test_docs.py.
"""
import dataclasses
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!--\s*([\w-]+)\s*(?::\s*(.*?))?\s*-->")
FENCE = re.compile(r"^(`{3,})\s*(\S*)\s*$")


@dataclasses.dataclass
class Block:
    page: str          # path from the repository root
    line: int          # the line of the opening fence, from 1
    lang: str          # the fence's info string: sh, python, {toctree}, "" …
    text: str          # the block's content
    marks: dict        # mark name -> its value ("" when it has none)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def file_name(self):
        """`name.py` when the block is a file the page asks you to save (`# name.py` first)."""
        first = self.text.split("\n", 1)[0]
        found = re.fullmatch(r"#\s*([\w./-]+\.py)\s*", first)
        return found.group(1) if found else None

    @property
    def directive(self) -> bool:
        return self.lang.startswith("{")

    def commands(self) -> list[str]:
        """A shell block's commands: continuation lines joined, comments dropped."""
        joined = re.sub(r"\\\n\s*", " ", self.text)
        out = []
        for line in joined.splitlines():
            line = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
        return out


def pages() -> list[pathlib.Path]:
    """README.md and every page of docs/, as found: a new page is picked up by itself."""
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)
    return [ROOT / "README.md", *docs]


def marks_before(lines: list[str], index: int) -> dict:
    """The marks on the comment lines (blank lines between allowed) just above lines[index]."""
    marks = {}
    i = index - 1
    while i >= 0 and (not lines[i].strip() or MARK.fullmatch(lines[i].strip())):
        found = MARK.fullmatch(lines[i].strip())
        if found:
            marks.setdefault(found.group(1), found.group(2) or "")
        i -= 1
    return marks


def blocks_of(path: pathlib.Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == opened.group(1)), None)
        assert end is not None, f"{path.relative_to(ROOT)}:{i + 1}: a fence that never closes"
        out.append(Block(path.relative_to(ROOT).as_posix(), i + 1, opened.group(2),
                         "\n".join(lines[i + 1:end]) + "\n", marks_before(lines, i)))
        i = end + 1
    return out


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks_of(path)]


def page_text(block: Block) -> str:
    return (ROOT / block.page).read_text(encoding="utf-8")


def prose_after(block: Block, paragraphs: int = 1) -> str:
    """The paragraphs of prose right after a block (where a page says what it gives), one line."""
    text = page_text(block).splitlines()
    end = next(j for j in range(block.line, len(text)) if text[j].strip().startswith("```"))
    rest = "\n".join(text[end + 1:]).strip().split("\n\n")
    return " ".join(" ".join(rest[:paragraphs]).split())


def prose_before(block: Block) -> str:
    """The paragraph just above a block (marks left out), one line."""
    text = page_text(block).splitlines()[:block.line - 1]
    kept = [line for line in text if not MARK.fullmatch(line.strip())]
    return " ".join(" ".join("\n".join(kept).strip().split("\n\n")[-1:]).split())
