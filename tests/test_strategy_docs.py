"""Every public strategy and helper of topkspec.strategies has a docstring with one line per
argument (`- name: ...`) and an example that runs as written."""
import doctest
import inspect
import re
import warnings

import pytest
from hypothesis.errors import NonInteractiveExampleWarning

import topkspec.strategies as strategies

PUBLIC = sorted(name for name in strategies.__all__ if inspect.isfunction(getattr(strategies, name)))


def test_the_public_functions_are_found():
    assert {"valid_cases", "case_and_input", "arrays_for", "invalid_descriptors", "tie_density"} <= set(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_the_docstring_has_a_line_for_each_argument(name):
    function = getattr(strategies, name)
    doc = inspect.getdoc(function) or ""
    missing = [arg for arg in inspect.signature(function).parameters
               if not re.search(rf"^- {re.escape(arg)}: \S", doc, re.MULTILINE)]
    assert not missing, f"{name}'s docstring has no '- NAME: ...' line for {missing}"
    if not inspect.signature(function).parameters:
        assert "no arguments" in doc, f"{name}'s docstring does not say it takes no arguments"


@pytest.mark.parametrize("name", PUBLIC)
def test_the_docstring_example_runs(name):
    function = getattr(strategies, name)
    # Examples run among the public names, as a user who imported them would run them.
    globs = {public: getattr(strategies, public) for public in strategies.__all__}
    tests = doctest.DocTestFinder(recurse=False).find(function, name, globs=globs)
    assert tests and tests[0].examples, f"{name}'s docstring has no >>> example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with warnings.catch_warnings():
        # .example() outside a test warns that it is for the interactive prompt: so are these.
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        for test in tests:
            runner.run(test, out=lambda text: print(text, end=""))
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (output above)"
