"""topkspec divergence: each probe read as a choice, on planted runtimes whose choice is known,
and the table's layout."""
import numpy as np
import pytest

import planted_bugs
from topkspec.cli import main
from topkspec.fuzz.divergence import PROBES, Row, divergence_table, probe_cell
from topkspec.spec.reference import reference_topk
from topkspec.targets.base import CallableTarget
from topkspec.targets.runtimes.contracts import TORCH

COLUMNS = [probe.column for probe in PROBES]
REFERENCE = {"NaN, largest": "as the largest", "NaN, smallest": "as the largest", "-NaN, largest": "as the largest",
             "-NaN, smallest": "as the largest", "signed zeros": "tied (index order) †",
             "subnormals": "compared as numbers (IEEE)", "ties": "index order †"}


def higher_index_first(x, *, axis, k, largest=True):
    """Ties broken by the higher index: the reference on the reversed input, indices mapped back."""
    n = np.shape(x)[axis]
    values, indices = reference_topk(np.flip(x, axis=axis), axis=axis, k=k, largest=largest)
    return values, n - 1 - indices


def cells(fn, contract=None) -> dict:
    target = CallableTarget(fn, name=fn.__name__, default_profile="onnx:24", contract=contract)
    return {probe.column: probe_cell(target, probe) for probe in PROBES}


def test_the_reference_choices_are_read_as_they_are():
    got = cells(planted_bugs.CORRECT)
    assert got == REFERENCE, f"the reference's row: expected {REFERENCE}, got {got}"


@pytest.mark.parametrize("bug, column, choice", [
    ("nan_placed_last", "NaN, largest", "as the smallest"),
    ("nan_placed_last", "NaN, smallest", "as the smallest"),
    ("nan_breaks_order", "NaN, largest", "numbers out of order: [1, nan, 3]"),
    ("signed_zero_order", "signed zeros", "-0.0 below +0.0 †"),
    ("subnormals_as_zero", "subnormals", "compared as zero"),
])
def test_a_planted_choice_shows_in_its_column(bug, column, choice):
    got = cells(getattr(planted_bugs, bug))
    assert got[column] == choice, f"{bug}, column {column!r}: expected {choice!r}, got {got[column]!r}"
    others = {c: got[c] for c in COLUMNS if c != column and "NaN" not in c and got[c] != REFERENCE[c]}
    assert not others, f"{bug} changed other columns than NaN's too: {others}"


def test_ties_a_contract_leaves_open_carry_no_mark_and_are_read_as_they_come():
    got = cells(higher_index_first, contract=TORCH)
    assert got["ties"] == "higher index first", f"ties under torch's contract (unspecified): {got['ties']!r}"
    assert cells(higher_index_first)["ties"] == "higher index first †", "under ONNX's text, which promises them"


def test_the_table_has_a_column_per_probe_and_lists_what_did_not_run_under_it():
    table = divergence_table([Row("mine", "mine 1.0", [REFERENCE[c] for c in COLUMNS]),
                              Row("gone", "", [], "not installed")])
    lines = table.splitlines()
    assert lines[0] == "| runtime | version | " + " | ".join(COLUMNS) + " |", lines[0]
    assert lines[2].startswith("| mine | mine 1.0 | as the largest |"), lines[2]
    assert lines[3] == "- `gone`: not run here: not installed", lines[3]


def test_an_unknown_target_is_bad_usage(capsys):
    assert main(["divergence", "--targets", "no-such-runtime"]) == 2
    assert "no-such-runtime" in capsys.readouterr().err


def test_a_runtime_whose_two_answers_differ_made_no_choice():
    got = cells(planted_bugs.alternating_ties)["ties"]  # every other call breaks ties by the higher index
    assert got in ("varies: index order / higher index first †", "varies: higher index first / index order †"), \
        f"alternating ties: expected the two answers, got {got!r}"
