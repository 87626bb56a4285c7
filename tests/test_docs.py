"""The documentation site (docs/) builds with Sphinx without a warning, the README links every
page of it, and the README stays short."""
import pathlib
import re
import subprocess
import sys
from slow import slow

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 250


def pages() -> list[str]:
    """Every page of the site but its index, as a path from the repository root."""
    return sorted(p.relative_to(ROOT).as_posix() for p in DOCS.rglob("*.md")
                  if p.name != "index.md" and "_build" not in p.parts)


@slow
def test_the_docs_build_without_warnings(tmp_path):
    """sphinx-build -W, as docs/install.md builds the site: any warning (a docstring that is not valid reStructuredText, a broken
    link between pages, an object autodoc cannot import) fails the build."""
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, (f"sphinx-build failed (exit {done.returncode}; the docs extra is "
                                  f"pip install -e '.[docs]'):\n{done.stdout}{done.stderr}")
    assert (tmp_path / "html" / "index.html").is_file()


def test_the_readme_links_every_docs_page():
    linked = {m.group(1) for m in re.finditer(r"\]\((docs/[^)#\s]+\.md)(?:#[^)\s]*)?\)", README.read_text(encoding="utf-8"))}
    missing = [page for page in pages() if page not in linked]
    assert pages(), "docs/ has no pages"
    assert not missing, f"README.md does not link {missing}"
    gone = sorted(link for link in linked if not (ROOT / link).is_file())
    assert not gone, f"README.md links pages that do not exist: {gone}"


def test_the_readme_is_short():
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; at most {README_MAX_LINES} (move the rest to docs/)"
