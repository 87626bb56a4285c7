"""One report per bug, under a title the evidence supports: different bugs breaking one rule are
each filed, one bug under several rules once; a refused value type is a finding per type, and
a type the contract does not offer is none; a library failing inside its own code is no
refusal; a relation that compared no result does not hold; a runtime's quieting hook is
entered around its calls."""
import logging
import os
import warnings

import numpy as np
import pytest
from slow import slow

from topkspec.fuzz import RunConfig, format_summary, run_fuzz
from topkspec.fuzz.results import Failure
from topkspec.fuzz.verdicts import HOLDS, rule_verdicts
from topkspec.properties import evidence, failures
from topkspec.properties.failures import Violation
from topkspec.properties.nan_order import check_nan_order
from topkspec.report.wording import what_happened
from topkspec.spec import Case
from topkspec.spec.contracts import own_contract
from topkspec.spec.dtypes import ALL_VALUE_TYPES
from topkspec.spec.nan_order import reference_topk_nan
from topkspec.spec.reference import reference_topk
from topkspec.targets.base import CallableTarget, Rejected
from topkspec.targets.quiet import RUNTIME_LOGS_ENV, Quieting

HERE = os.path.dirname(os.path.abspath(__file__))
BY_BUG = os.path.join(HERE, "planted_by_bug.py")
PLANTED = os.path.join(HERE, "planted_bugs.py")
CASE = Case("dml:5.0", "TOP_K1", "float32", (4,), 0, 2)


def _run(target, **options):
    options.setdefault("max_examples", 200)
    options.setdefault("seed", 1)
    return run_fuzz(RunConfig(target=target, settings="ci", **options))


def _failure(rules, x, values, indices, case=CASE):
    violation = Violation(rules, "planted")
    out = (np.asarray(values, x.dtype), np.asarray(indices, np.int64))
    return Failure(target="t", group="valid", violation=violation, case=case, x=x, calls=[(case, x)], outputs=[out])


# -- the evidence and the titles it supports -----------------------------------------------------

def test_the_evidence_tells_wrong_values_from_order_from_ties():
    x = np.array([1, 3, 3, 0], np.float32)
    assert evidence.diagnosis(CASE, x, np.array([3, 3], np.float32), [1, 2]) == evidence.RIGHT
    assert evidence.diagnosis(CASE, x, np.array([3, 3], np.float32), [2, 1]) == evidence.TIES
    assert evidence.diagnosis(CASE, x, np.array([3, 3], np.float32), [2, 3]) == evidence.VALUES  # 0 at index 3
    three = CASE.with_(k=3)
    assert evidence.diagnosis(three, x, np.array([3, 1, 3], np.float32), [1, 0, 2]) == evidence.ORDER
    assert evidence.one_based(CASE, x, np.array([3, 3], np.float32), [2, 3])
    assert not evidence.one_based(CASE, x, np.array([3, 3], np.float32), [-65279, 3])
    nan = np.array([1, np.nan, 3, 0], np.float32)
    assert evidence.signature(three, nan, np.array([3, np.nan, 1], np.float32), [2, 1, 0]) == ("order", "NaN")


def test_the_signature_reads_the_sequence_the_violation_names():
    # one sequence shows only an order bug, another wrong values: the key follows the one the rule
    # was decided on, so that a reducer cutting the case down to that sequence keeps it
    case = Case("onnx:24", "TopK", "float32", (4, 2), 0, 3)
    x = np.array([[0, -1], [np.nan, 0], [1, np.nan], [0, 0]], np.float32)
    values = np.array([[0, 0], [np.nan, -1], [1, np.nan]], np.float32)
    indices = np.array([[0, 1], [1, 0], [2, 2]])
    assert evidence.signature(case, x, values, indices) == ("values", "NaN")
    assert evidence.signature(case, x, values, indices, sequence=(0,)) == ("order", "NaN")
    assert evidence.signature(case, x, values, indices, sequence=(1,)) == ("values", "NaN")
    assert evidence.signature(case, x, values, indices, sequence=(5,)) == ("values", "NaN")  # no such sequence


def test_a_nan_failure_is_the_twin_of_a_nan_free_one_of_its_rule_and_kind_on_any_type():
    # the nan group draws bfloat16 where the valid group drew float32: one bug, one report
    from topkspec.fuzz.results import RunResult, group_failures

    def failure(dtype, x, values, indices, signature):
        case = Case("onnx:24", "TopK", dtype, (3,), 0, 3)
        found = _failure(("out.order",), np.asarray(x, dtype), values, indices, case=case)
        found.violation.signature = signature  # the key reads it
        return found

    nan = failure("float32", [0, np.nan, 1], [0, np.nan, 1], [0, 1, 2], ("order", "NaN"))
    other_type = failure("float16", [0, 1, 2], [0, 2, 1], [0, 2, 1], ("order", "no NaN"))
    other_kind = failure("float32", [0, 1, 2], [0, 2, 1], [0, 2, 1], ("values", "no NaN"))
    for nan_free, kept in ((other_type, [other_type]), (other_kind, [other_kind, nan])):
        result = RunResult(target="t", version="1", profile="onnx:24", settings="ci", seed=0, max_examples=1)
        result.failures = [nan_free, nan]
        group_failures(result)
        assert result.failures == kept, (nan_free.violation.signature, [(f.rule, f.dtype) for f in result.failures])


@pytest.mark.parametrize("rules, values, indices, title", [
    (("out.indices.range_distinct", "out.indices.base"), [3, 3], [2, 3], "returns indices counted from 1"),
    (("out.indices.range_distinct", "out.indices.base"), [3, 3], [-65279, 3],
     "returns indices out of range or repeated"),
    (("out.values.gather", "out.indices.base"), [3, 3], [0, 1], "returns values that are not the input elements"),
    (("out.ties.index_order",), [3, 3], [2, 1], "returns tied values out of index order"),
    (("out.ties.index_order",), [3, 3], [1, 3], "returns wrong values"),  # garbage: no tie diagnosis
    (("out.ties.kth_place",), [3, 3], [2, 1], "keeps a later tied value"),
])
def test_a_title_states_a_diagnosis_only_where_the_evidence_supports_it(rules, values, indices, title):
    x = np.array([1, 3, 3, 0], np.float32)
    said = what_happened(_failure(rules, x, values, indices))
    assert said.startswith(title), f"rules {rules}, indices {indices}: expected a title starting {title!r}, got {said!r}"


# -- grouping by bug -----------------------------------------------------------------------------

@slow
def test_two_bugs_breaking_rules_in_different_ways_are_each_filed_and_titled_truly():
    result = _run(f"{BY_BUG}:garbage_in_int8_and_nan_tail", max_examples=200)
    with_nan = [f for f in result.failures if f.x is not None and np.isnan(np.asarray(f.x, np.float64)).any()]
    garbage = [f for f in result.failures if f.dtype in ("int8", "uint8")]
    assert len(with_nan) == 1 and garbage, format_summary(result)
    assert len({f.dtype for f in garbage}) == len(garbage), f"one garbage report per value type at most: " \
                                                            f"{[(f.rule, f.dtype) for f in garbage]}"
    assert len(result.failures) == len(with_nan) + len(garbage), format_summary(result)
    for failure in result.failures:
        said = what_happened(failure)
        assert "counted from 1" not in said and "tied" not in said, f"{failure.rule}: untrue title {said!r}"


def test_one_tie_bug_breaking_two_tie_rules_is_one_report():
    result = _run(f"{BY_BUG}:ties_first_last_from_3", groups=("valid",), max_examples=100)
    assert len(result.failures) == 1, format_summary(result)
    assert what_happened(result.failures[0]).startswith(("returns tied values", "keeps a later tied")), \
        what_happened(result.failures[0])


# -- refusals: per value type, not offered, internal errors -----------------------------------

@slow
def test_a_refused_value_type_is_a_finding_per_type():
    result = _run(f"{BY_BUG}:refuses_wide_unsigned", groups=("valid",), max_examples=150)
    refused = sorted(f.key[3] for f in result.failures if f.failure_class == failures.REJECTS_VALID)
    assert refused == ["uint32", "uint64"], format_summary(result)


def test_a_refusal_of_anything_but_the_type_is_one_finding():
    result = _run(f"{BY_BUG}:refuses_with_value_error", groups=("valid",), max_examples=100)
    assert [f.failure_class for f in result.failures] == [failures.REJECTS_VALID], format_summary(result)


def _offering(*types, **points):
    points = {"sorted": "always", "smallest": "offered", "indices": "returned", **points}
    return own_contract("planted", url="https://example.org/topk", title="planted.topk",
                        value_types=(list(types), f"Supported types: {', '.join(types)}."), **points)


def test_a_value_type_the_contract_does_not_offer_is_not_promised():
    import planted_by_bug

    offered = [t for t in ALL_VALUE_TYPES if t not in ("uint32", "uint64")]
    target = CallableTarget(planted_by_bug.refuses_wide_unsigned, name="no-wide-unsigned",
                            contract=_offering(*offered))
    result = run_fuzz(RunConfig(target=target, settings="ci", max_examples=150, seed=1, confirm=False,
                                groups=("valid",)), target=target)
    assert result.ok, format_summary(result)
    assert not {dtype for dtype, _ in result.coverage} & {"uint32", "uint64"}, result.coverage


def test_an_internal_error_of_the_library_is_no_refusal(tmp_path):
    result = _run(f"{BY_BUG}:internal_error_on_rank_3", groups=("valid",), max_examples=100,
                  report_dir=str(tmp_path))
    assert [f.failure_class for f in result.failures] == [failures.INTERNAL_ERROR], format_summary(result)
    failure = result.failures[0]
    assert what_happened(failure).startswith("fails with an internal error"), what_happened(failure)
    report = open(os.path.join(failure.report_dir, "report.md")).read()
    assert "failed inside its own code" in report and "AttributeError" in report, report
    assert "refused the case" not in report, report


def test_python_own_unpacking_error_inside_the_library_is_an_internal_error():
    """A ValueError that Python raises for a wrong unpacking in the library's own code names no
    argument and refuses nothing: an internal error. The library's own ValueError stays a refusal."""
    import planted_by_bug
    from topkspec.targets.refusal import InternalError, as_judged

    case = Case(profile="onnx:11", op="TopK", dtype="float32", shape=(3,), axis=0, k=3, largest=True,
                sorted=True, index_dtype="int64")
    x = np.arange(3, dtype=np.float32)
    for fn, internal in ((planted_by_bug.unpacks_wrongly_at_whole_axis, True),
                         (planted_by_bug.refuses_with_value_error, False)):
        target = CallableTarget(fn, name=fn.__name__)
        with pytest.raises(Rejected) as refused:
            target.run(case, x)
        judged = as_judged(target, refused.value)
        assert isinstance(judged, InternalError) is internal, (fn.__name__, type(judged).__name__, str(judged))


# -- verdicts: no vacuous holds ------------------------------------------------------------------

def test_a_target_that_answers_no_valid_call_holds_no_result_rule():
    result = _run(f"{PLANTED}:refuses_everything", max_examples=200)
    held = [v.rule for v in rule_verdicts(result) if v.kind == HOLDS and v.rule.startswith("out.")
            and v.rule != "out.invalid_rejected"]
    assert held == [], format_summary(result)


# -- NaN after every number in both directions ---------------------------------------------------

@pytest.mark.parametrize("largest", [True, False])
def test_nan_last_accepts_that_order_only(largest):
    x = np.array([1.0, np.nan, 3.0, 0.0], np.float32)
    case = Case("onnx:24", "TopK", "float32", (4,), 0, 4, largest=largest)
    values, indices = reference_topk_nan(x, axis=0, k=4, largest=largest, order="last")
    assert np.isnan(values[-1]), values
    check_nan_order(case, x, values, indices, order="last")
    first = reference_topk_nan(x, axis=0, k=4, largest=largest, order="largest" if largest else "smallest")
    with pytest.raises(Violation) as info:
        check_nan_order(case, x, *first, order="last")
    assert info.value.rules == ("out.nan.order",), info.value


def _nan_largest_first(x, *, axis, k, largest=True):
    return reference_topk_nan(np.asarray(x), axis=axis, k=k, largest=largest, order="largest")


def _nan_last(x, *, axis, k, largest=True):
    return reference_topk_nan(np.asarray(x), axis=axis, k=k, largest=largest, order="last")


@pytest.mark.parametrize("fn, broken", [(_nan_last, False), (_nan_largest_first, True)])
def test_a_contract_promising_nan_last_fails_other_orders(fn, broken):
    target = CallableTarget(fn, name=fn.__name__, contract=_offering("float32", "float64", nan="last"))
    result = run_fuzz(RunConfig(target=target, settings="ci", max_examples=80, seed=1, confirm=False,
                                groups=("nan",)), target=target)
    assert [f.rule for f in result.failures] == (["out.nan.order"] if broken else []), format_summary(result)


# -- the quieting hook ---------------------------------------------------------------------------

def test_a_quieting_turns_down_loggers_and_warnings_unless_logs_are_kept(monkeypatch):
    monkeypatch.delenv(RUNTIME_LOGS_ENV, raising=False)
    quiet = Quieting(loggers=("planted.runtime",), warnings=("planted noise",))
    logging.getLogger("planted.runtime").setLevel(logging.DEBUG)
    with quiet(), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="planted noise")  # as the hook sets it inside
        warnings.warn("planted noise from the runtime")
    assert logging.getLogger("planted.runtime").level == logging.ERROR and not seen, seen


def test_a_callable_targets_quiet_hook_is_entered_around_each_call():
    entered = []

    class Hook:
        active = False

        def __call__(self):
            import contextlib

            @contextlib.contextmanager
            def around():
                Hook.active = True
                entered.append(1)
                try:
                    yield
                finally:
                    Hook.active = False
            return around()

    def topk(x, *, axis, k, largest=True):
        values, indices = reference_topk(x, axis=axis, k=k, largest=largest)
        return (values, indices) if Hook.active else (values, indices + 1)  # wrong unless quieted

    target = CallableTarget(topk, name="quieted", quiet=Hook())
    result = run_fuzz(RunConfig(target=target, settings="ci", max_examples=30, seed=1, confirm=False,
                                groups=("valid",)), target=target)
    assert result.ok and entered, format_summary(result)


def test_the_quieting_example_of_the_targets_page_keeps_the_runtimes_noise_out(tmp_path):
    """docs/targets.md's noisy_framework.py, run as the page shows: exit 0 and none of its noise
    in the output (its worker enters the hook), all of it with TOPKSPEC_RUNTIME_LOGS=keep."""
    import subprocess
    import sys

    from docs_blocks import blocks_of
    import pathlib

    page = pathlib.Path(HERE).parent / "docs" / "targets.md"
    blocks = blocks_of(page)
    (saved,) = [b for b in blocks if b.file_name == "noisy_framework.py"]
    (tmp_path / "noisy_framework.py").write_text(saved.text)
    (command,) = [b for b in blocks if "noisy_framework.py:target" in b.text and b.lang == "sh"][0].commands()
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(HERE).parent)}
    env.pop(RUNTIME_LOGS_ENV, None)
    for keep, noisy in ((False, False), (True, True)):
        if keep:
            env[RUNTIME_LOGS_ENV] = "keep"
        done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        heard = "compiling a kernel" in done.stderr + done.stdout and "falling back" in done.stderr + done.stdout
        assert heard == noisy, f"TOPKSPEC_RUNTIME_LOGS={'keep' if keep else 'unset'}: expected the runtime's noise " \
                               f"{'shown' if noisy else 'kept out'}, got:\n{done.stderr[-2000:]}"


def test_a_contract_file_lists_the_value_types_with_the_sentence_behind_them(tmp_path):
    from topkspec.spec.contracts import Contract, ContractError, load_contract

    path = tmp_path / "typed.toml"
    path.write_text('name = "typedfw.topk"\nimplements = "onnx"\nprofiles = ["onnx:11"]\n'
                    'url = "https://typedfw.example/docs/topk"\ntitle = "typedfw.topk"\n'
                    '[promises]\nnan = "last"\n'
                    '[value_types]\ntypes = ["float32", "int64"]\nquote = "Supported dtypes: float32, int64."\n')
    contract = load_contract(str(path))
    assert contract.value_types.types == ("float32", "int64") and contract.value("nan") == "last", contract
    assert contract.value_types.url == "https://typedfw.example/docs/topk", contract.value_types
    assert Contract.from_dict(contract.to_dict()) == contract  # as a worker process receives it
    path.write_text(path.read_text().replace('"int64"]', '"int65"]'))
    with pytest.raises(ContractError, match="'int65' is no value type"):
        load_contract(str(path))


def test_a_known_entry_declaring_the_refusal_still_declares_the_internal_error(tmp_path):
    known = tmp_path / "known.toml"
    known.write_text('[[known]]\nrule = "out.valid_accepted"\nclass = "rejects a valid descriptor"\n'
                     'reason = "declared as a refusal before internal errors were told apart"\n'
                     'url = "https://example.org/issues/1"\n')
    result = _run(f"{BY_BUG}:internal_error_on_rank_3", groups=("valid",), max_examples=60, known=str(known))
    assert result.ok and result.known_seen, format_summary(result)
