"""Sphinx configuration for topkspec's documentation site: Markdown pages (MyST) and an API
reference from the docstrings (autodoc).

Build it with warnings as errors, as tests/test_docs.py does:

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""
import os
import sys

sys.path.insert(0, os.path.abspath(".."))

from topkspec import __version__  # noqa: E402

project = "topkspec"
author = "the topkspec authors"
copyright = "the topkspec authors"
release = version = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# Docstrings write code in single backticks: show it as code.
default_role = "literal"
# Command-line options (--target) stay as written, not turned into dashes.
smartquotes = False

myst_enable_extensions = ["colon_fence", "deflist"]
# Links such as [Verdicts](fuzzing.md#verdicts) reach headings down to the third level.
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"

html_theme = "furo"
html_title = f"topkspec {release}"
