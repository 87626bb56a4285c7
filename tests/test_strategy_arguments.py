"""Every public strategy checks its arguments as Hypothesis's do: when first used, with one error
type (InvalidStrategyArgument, Hypothesis's InvalidArgument and a ValueError) whose message names
the argument and its value; never a bare TypeError, never a silent clamp."""
import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument

from topkspec import spec
from topkspec.spec import Case
from topkspec.strategies import (
    InvalidStrategyArgument, arrays_for, axis_sizes, breakable_rules, case_and_input, elements, invalid_descriptors,
    k_position, ks_for, plans_for, special_values, tie_density, valid_cases,
)

CASE = Case("onnx:24", "TopK", "float32", (2, 3), axis=1, k=2)

BAD = [
    # (strategy, the start of its message)
    (lambda: valid_cases("onnx:99x"), "profile='onnx:99x' is not a spec profile"),
    (lambda: valid_cases(24), "profile=24 must be a spec profile"),
    (lambda: valid_cases("onnx:24", ops="TopK"), "ops='TopK' must be a list of names"),
    (lambda: valid_cases("onnx:24", ops=["Sort"]), "ops=['Sort'] names 'Sort'"),
    (lambda: valid_cases("onnx:24", dtypes=[]), "dtypes=[] must name at least one"),
    (lambda: valid_cases("onnx:24", dtypes=["float"]), "dtypes=['float'] names 'float'"),
    (lambda: valid_cases("onnx:24", max_rank=0), "max_rank=0 must be at least 1"),
    (lambda: valid_cases("onnx:24", max_rank=2.0), "max_rank=2.0 must be an integer"),
    (lambda: valid_cases("onnx:24", max_axis_size=0), "max_axis_size=0 must be at least 1"),
    (lambda: valid_cases("onnx:24", max_axis_size="8"), "max_axis_size='8' must be an integer"),
    (lambda: valid_cases("onnx:24", max_total=0), "max_total=0 must be at least 1"),
    (lambda: valid_cases("dml:5.0", strict_doc=True, max_axis_size=1),
     "max_axis_size=1 must be at least 2 under strict_doc"),
    (lambda: valid_cases("onnx:24", strict_doc=1), "strict_doc=1 must be True or False"),
    (lambda: valid_cases("onnx:24", ranks=[0]), "ranks=[0] holds 0"),
    (lambda: valid_cases("onnx:24", ranks=3), "ranks=3 must be a list of ranks"),
    # a name asked for is drawn, or an error names it: none is dropped in silence
    (lambda: valid_cases("onnx:10", dtypes=["int8"]), "dtypes=['int8'] names 'int8', which no valid case at onnx:10"),
    (lambda: valid_cases("onnx:10", dtypes=["int8", "float32"]), "dtypes=['int8', 'float32'] names 'int8'"),
    (lambda: valid_cases("onnx:24", ops=["TOP_K", "TopK"]), "ops=['TOP_K', 'TopK'] names 'TOP_K'"),
    (lambda: valid_cases("dml:2.1", ranks=[2, 4]), "ranks=[2, 4] names 2, which no valid case at dml:2.1"),
    (lambda: valid_cases("onnx:24", ranks=[9]), "ranks=[9] names 9"),  # above max_rank=8
    (lambda: valid_cases("dml:2.1", max_rank=3), "ops=None, dtypes=None, ranks=None, max_rank=3 leave no operator"),
    (lambda: case_and_input("onnx:10", dtypes=["int8"]), "dtypes=['int8'] names 'int8'"),
    (lambda: case_and_input("onnx:24", max_axis_size=-1), "max_axis_size=-1 must be at least 1"),
    (lambda: case_and_input("onnx:24", allow_nan="yes"), "allow_nan='yes' must be True or False"),
    (lambda: case_and_input("onnx:24", require_nan=None), "require_nan=None must be True or False"),
    (lambda: arrays_for((2, 3)), "case=(2, 3) must be a topkspec.spec.Case"),
    (lambda: arrays_for(CASE, allow_nan=0), "allow_nan=0 must be True or False"),
    (lambda: arrays_for(CASE, require_nan="no"), "require_nan='no' must be True or False"),
    (lambda: axis_sizes(0), "max_axis_size=0 must be at least 1"),
    (lambda: axis_sizes(8, min_size=0), "min_size=0 must be at least 1"),
    (lambda: axis_sizes(4, min_size=5), "max_axis_size=4 must be at least min_size=5"),
    (lambda: ks_for(0), "n=0 must be at least 1"),
    (lambda: ks_for(1, strict_doc=True), "n=1 must be at least 2"),
    (lambda: ks_for([3]), "n=[3] must be an integer"),
    (lambda: ks_for(3, strict_doc="yes"), "strict_doc='yes' must be True or False"),
    (lambda: elements("float"), "dtype='float' must be a value type name"),
    (lambda: elements("int8", allow_nan=1), "allow_nan=1 must be True or False"),
    (lambda: invalid_descriptors("dml:9"), "profile='dml:9' is not a spec profile"),
    (lambda: invalid_descriptors("dml:5.0", "dml.no.such.rule"), "rule='dml.no.such.rule' is not a rule id"),
    (lambda: invalid_descriptors("dml:5.0", "out.order"), "rule='out.order' has no descriptor check"),
    (lambda: invalid_descriptors("dml:2.0", "dml.direction.enum"), "rule='dml.direction.enum' cannot be broken"),
]


@pytest.mark.parametrize("make,message", BAD, ids=[message for _, message in BAD])
def test_a_bad_argument_is_one_error_naming_it_when_the_strategy_is_used(make, message):
    strategy = make()  # lazily: making the strategy never raises
    with pytest.raises(InvalidStrategyArgument) as raised:
        strategy.validate()
    assert str(raised.value).startswith(message) or message in str(raised.value), str(raised.value)
    assert isinstance(raised.value, InvalidArgument) and isinstance(raised.value, ValueError)

    @settings(max_examples=1, database=None)
    @given(strategy)
    def draw(value):
        pass

    with pytest.raises(InvalidStrategyArgument):
        draw()  # a test that draws from it raises the same


# Helpers that give a value, not a strategy, check their arguments at once, with the same error.
EAGER = [
    (lambda: plans_for("onnx:99x"), "profile='onnx:99x' is not a spec profile"),
    (lambda: plans_for("onnx:24", ops="TopK"), "ops='TopK' must be a list of names"),
    (lambda: plans_for("onnx:24", max_rank=0), "max_rank=0 must be at least 1"),
    (lambda: plans_for("onnx:10", dtypes=["int8"]), "leave no operator of onnx:10"),
    (lambda: breakable_rules(24), "profile=24 must be a spec profile"),
    (lambda: breakable_rules("dml:5.0", strict_doc="yes"), "strict_doc='yes' must be True, False or None"),
    (lambda: k_position(0, 3), "k=0 must be at least 1"),
    (lambda: k_position(4, 3), "k=4 must be at most n=3"),
    (lambda: k_position(1, 0), "n=0 must be at least 1"),
    (lambda: special_values("float"), "dtype='float' must be a value type name"),
    (lambda: special_values("float32", allow_nan="x"), "allow_nan='x' must be True or False"),
]


@pytest.mark.parametrize("call,message", EAGER, ids=[message for _, message in EAGER])
def test_a_helper_given_a_bad_argument_raises_the_same_error_at_once(call, message):
    with pytest.raises(InvalidStrategyArgument) as raised:
        call()
    assert message in str(raised.value), str(raised.value)


def test_tie_density_takes_what_numpy_takes():
    assert tie_density([1, 2, 1, 2, 3]) == "heavy ties"


def test_valid_cases_draw_the_ranks_asked_for_where_the_profile_allows_them():
    @settings(max_examples=20, database=None)
    @given(valid_cases("dml:2.1", ranks=[4]))
    def draw(case):
        assert case.rank == 4 and spec.validate(case) == []

    draw()


def test_good_arguments_draw():
    for strategy in (valid_cases("onnx:24", ops=["TopK"], dtypes=["int8"], ranks=[2], max_axis_size=4),
                     case_and_input("dml:5.0", strict_doc=True, max_axis_size=2, max_total=8),
                     arrays_for(CASE, require_nan=True), axis_sizes(5, min_size=5), ks_for(2, strict_doc=True),
                     elements("bfloat16", allow_nan=True), invalid_descriptors("onnx:24", "onnx.k.positive")):
        strategy.validate()

    @settings(max_examples=5, database=None)
    @given(axis_sizes(5, min_size=5), ks_for(2, strict_doc=True))
    def draw(n, k):
        assert n == 5 and k == 1

    draw()
