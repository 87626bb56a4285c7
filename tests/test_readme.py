"""The example of docs/strategies.md (Use the strategies and properties in your own tests) runs as
written: it passes on the reference and catches a bug."""
import os
import pathlib

import pytest

from docs_blocks import blocks_of
from topkspec import reference_topk, spec
from topkspec.properties.failures import Violation

PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "strategies.md")


def _example() -> str:
    """The block docs/strategies.md marks `checked-by: tests/test_readme.py`."""
    return next(b.text for b in blocks_of(pathlib.Path(PAGE))
                if b.marks.get("checked-by", "").startswith("tests/test_readme.py"))


def _run(my_topk):
    namespace = {"my_topk": my_topk, "my_validate": spec.validate}
    # not the page itself: the snippet's line numbers are its own, so its source cannot be looked up there
    exec(compile(_example(), "<docs/strategies.md example>", "exec"), namespace)
    namespace["test_my_validator"]()
    namespace["test_my_topk"]()


def test_the_strategies_example_passes_on_the_reference():
    _run(reference_topk)


def test_the_strategies_example_catches_a_wrong_direction():
    def ignores_direction(x, *, axis, k, largest):
        return reference_topk(x, axis=axis, k=k, largest=True)

    # Hypothesis raises the Violation, or a group of them when it finds several distinct ones.
    with pytest.raises((Violation, ExceptionGroup)) as raised:
        _run(ignores_direction)
    if isinstance(raised.value, ExceptionGroup):
        _, others = raised.value.split(Violation)
        assert others is None, f"not Violations: {others!r}"


def test_the_layout_section_names_every_folder_of_the_package_and_no_other():
    """README's Layout block lists topkspec/'s sub-packages, each once, and the repository's
    top-level folders it names exist."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parent.parent
    text = (root / "README.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    named = re.findall(r"^  (\w+)/ ", block, flags=re.MULTILINE)
    packages = sorted(path.name for path in (root / "topkspec").iterdir()
                      if path.is_dir() and (path / "__init__.py").exists())
    assert sorted(named) == packages, f"README Layout names {sorted(named)}, the package has {packages}"
    for folder in re.findall(r"^([\w./]+)/ ", block, flags=re.MULTILINE):
        assert (root / folder).is_dir(), f"README Layout names {folder}/, which is not in the repository"
