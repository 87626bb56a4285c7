"""The property groups: what each draws (its strategy) and what it checks (its body), which
groups apply to a target, and how the run's budget is shared among them."""
from __future__ import annotations

import time

from topkspec.properties import failures
from topkspec.spec import dtypes
from topkspec.properties.catalogue import BY_CHECK, in_group
from topkspec.properties.failures import Violation
from topkspec.fuzz.config import GROUP_WEIGHTS
from topkspec.fuzz.context import GroupContext, RefusedKAtAxisSize
from topkspec.targets.base import Target


def _float_types(profile) -> list[str]:
    from topkspec import spec

    names = set()
    for op in spec.ops(profile):
        names.update(spec.value_types(profile, op))
    return sorted(t for t in names if dtypes.is_float(t))  # bfloat16 too (numpy calls its kind "V")


def _result_body(ctx: GroupContext, data) -> bool:
    from topkspec.properties import check_shape, matches_reference, reference_result, result_checks

    case, x = data
    judged = ctx.judged_if_supported(case)
    if judged is None:
        return False
    expected = []  # the reference's result, worked out while a worker process runs the target
    try:
        values, indices = ctx.run(judged, x, meanwhile=lambda: expected.append(reference_result(judged, x)))
    except RefusedKAtAxisSize:
        ctx.result.refused_k_at_axis_size += 1
        return False
    ctx.held("accepts_valid")
    ctx.result.coverage[(judged.dtype, judged.rank)] += 1
    ctx.result.graphs[judged.context] += judged.family == "onnx"
    checks = result_checks(judged, x)
    start = time.perf_counter()
    same = matches_reference(judged, x, values, indices, expected[0])
    ctx.result.timing["checks_s"] += time.perf_counter() - start
    for check in checks:
        name = BY_CHECK[check].name
        if same:  # the reference keeps every result rule (tests/test_properties.py), so a copy does
            ctx.held(name)
        elif not ctx.evaluate(name, check, judged, x, values, indices) and check is check_shape:
            return True  # nothing else can be read from outputs of the wrong shape
    _promised_nan_order(ctx, judged, x, values, indices)
    return True


def _promised_nan_order(ctx: GroupContext, case, x, values, indices) -> None:
    """out.nan.order, where the contract (or --nan-order) promises an order for NaN and the
    input holds NaN: the reference under that order decides (properties.nan_order)."""
    from topkspec.properties import has_nan
    from topkspec.properties.nan_order import check_nan_order

    order = ctx.contract.value("nan")
    if order == "unspecified" or not has_nan(x):
        return
    ties = ctx.contract.value("ties") == "index_order" and ctx.contract.value("indices") == "returned"
    ctx.evaluate("nan_order", check_nan_order, case, x, values, indices, order=order, ties=ties)


def _asking_once(run):
    """`run` for one example that asks the target once per (case, input array): the K-prefix
    and the axis checks both run the case as drawn, and one answer serves both relations."""
    answers = {}

    def ask(case, x):
        key = (case, id(x))
        if key not in answers:
            answers[key] = (x, run(case, x))  # x kept, so its id is not reused within the example
        return answers[key][1]
    return ask


def _metamorphic_body(group: str, *, share_calls: bool):
    """The body of a group of metamorphic properties (catalogue.in_group). share_calls:
    identical calls within an example are made once (never where the property is about
    repeating a call)."""
    from topkspec.properties import check_prefix

    checks = [prop.check for prop in in_group(group)]

    def body(ctx: GroupContext, data) -> None:
        case, x = data
        judged = ctx.judged_if_supported(case)
        if judged is None:
            return False
        if group == "layout":
            if judged.layout.is_plain:
                return False  # packed, at 0, alone, no flags: the valid group's call, nothing to compare
            _count_layout(ctx, judged)
        ctx.result.coverage[(judged.dtype, judged.rank)] += 1
        ctx.result.graphs[judged.context] += judged.family == "onnx"
        run = _asking_once(ctx.run) if share_calls else ctx.run
        compared = False  # some check called the target and compared (others may not apply)
        for check in checks:
            prop = BY_CHECK[check]
            name = prop.name
            options = {}
            if prop.self_consistency:
                from topkspec.properties import self_consistency
                if not self_consistency.judges(prop, x, ctx.unpromised, ctx.target):
                    continue  # the existing rules decide this input, or K goes one way only
                options = self_consistency.options(prop, ctx.contract, ctx.unpromised, ctx.target)
                if prop.name == "self_prefix" and judged.family == "dml" and ctx.strict_doc:
                    options["max_k"] = judged.axis_size - 1  # the literal text: K below the axis size
            if prop.group == "layout":
                from topkspec.properties import layouts
                if not layouts.judges(prop.name, judged):
                    continue  # nothing to judge in this layout (no guard bytes, flags leaving it open)
                if prop.name == "no_write_outside":  # the buffers the call left: the target keeps them
                    options["buffers"] = getattr(ctx.target, "last_output_buffers", lambda: None)
            if check is check_prefix and judged.family == "dml" and ctx.strict_doc:
                options["max_k"] = judged.axis_size - 1  # the literal text: K below the axis size
            calls = len(ctx.calls)
            try:
                ctx.evaluate(name, check, judged, x, run, **options)
            except RefusedKAtAxisSize:
                ctx.result.refused_k_at_axis_size += 1
                if not (check is check_prefix and judged.k < judged.axis_size - 1):
                    continue
                calls = len(ctx.calls)
                ctx.evaluate(name, check, judged, x, run, max_k=judged.axis_size - 1)  # the prefix below it
            compared = compared or len(ctx.calls) > calls
        return compared
    return body


def _count_layout(ctx: GroupContext, case) -> None:
    """The coverage of the layout group: each example's input and output layout, flags, graph."""
    from topkspec.spec.layouts import layout_of

    layout = layout_of(case)
    for part in (f"input {layout.input}", f"output {layout.output}", "graph" if layout.graph else "alone",
                 *(f"flag {name}" for name in layout.flag_names or ["none"])):
        ctx.result.layouts[part] += 1


def _invalid_body(ctx: GroupContext, draw) -> None:
    from topkspec.properties import check_rejects_invalid

    if draw.case is None or not ctx.target.computes:  # a validator judges every descriptor as written
        if _descriptor_verdict(ctx, draw) is not None:
            return True
        ctx.result.not_runnable += 1  # a broken tensor field, say: only `validate` judges it
        return False
    # A case the target does not implement at all (no kernel for the type) proves nothing
    # when refused: the refusal must come from the rule the draw breaks.
    if ctx.judged_if_supported(draw.case, refusal_is_finding=False) is None:
        return False
    fatal = []

    def run(case, x):
        try:
            return ctx.raw_run(ctx.judged(case), x, rule="out.invalid_rejected")
        except Violation as violation:  # a crash or hang: not a refusal
            fatal.append(violation)
            raise

    def refused(draw, run):
        check_rejects_invalid(draw, run)  # takes any exception for a refusal, so:
        if fatal:
            raise fatal[0]  # a crash or hang is not one

    ctx.result.coverage[(draw.case.dtype, draw.case.rank)] += 1
    if ctx.evaluate("rejects_invalid", refused, draw, run):
        ctx.kept.update(draw.rules)  # the descriptor rules it breaks held too: each gets its verdict
    return True


def _descriptor_verdict(ctx: GroupContext, draw):
    """For a target that takes descriptors as written (`check_descriptor`, e.g. directml): its
    verdict on a broken descriptor no Case carries; None when it cannot be asked."""
    check = getattr(ctx.target, "check_descriptor", None)
    if check is None or not set(draw.rules) & set(getattr(ctx.target, "descriptor_rules", ())):
        return None
    start = time.perf_counter()
    try:
        verdict = ctx._guard(lambda: check(draw.descriptor), draw.case or _DescriptorOnly(draw),
                             rule="out.invalid_rejected")
    finally:
        ctx.result.timing["target_s"] += time.perf_counter() - start
    if verdict is None:
        return None
    if ctx.evaluate("rejects_invalid", _refused, draw, verdict):
        ctx.kept.update(draw.rules)
    return verdict


def _refused(draw, verdict) -> None:
    """out.invalid_rejected: a target's verdict on a broken descriptor is a refusal."""
    if verdict["accepted"]:
        rules = ("out.invalid_rejected",) + tuple(sorted(draw.rules))
        raise Violation(rules, f"the descriptor is invalid ({draw.how}) but was accepted ({verdict['detail']})",
                        failure_class=failures.ACCEPTS_INVALID, expected="a refusal", actual=verdict["detail"],
                        call=draw.case if draw.case is not None else _DescriptorOnly(draw))


class _DescriptorOnly:
    """Stands for a Case where a broken descriptor cannot be read as one."""

    def __init__(self, draw):
        from topkspec import spec

        self.draw = draw
        self.profile = draw.profile
        self.family = spec.parse_profile(draw.profile).family
        descriptor = draw.descriptor if isinstance(draw.descriptor, dict) else {}
        kind = descriptor.get("Type") or descriptor.get("op_type")
        self.op = kind.replace("DML_OPERATOR_", "") if isinstance(kind, str) else None
        self.dtype = None

    def describe(self) -> str:
        return self.draw.describe()

    def call_text(self) -> str:
        """The call as a failure message ends it: no Case carries the descriptor, so it is named."""
        return f"[{self.op + ' ' if self.op else ''}descriptor as written]"

    def to_dict(self) -> dict:
        return {"profile": self.draw.profile, "descriptor": self.draw.descriptor}


def case_of(draw):
    """The Case a broken descriptor describes (its input, axis, K), else a stand-in naming it."""
    from topkspec import spec

    try:
        return spec.case_from_descriptor(draw.descriptor, draw.profile)
    except ValueError:
        return _DescriptorOnly(draw)


def descriptor_rules_in_force(target: Target, profile: str, *, strict_doc: bool = False, contract=None) -> list:
    """The descriptor rules the invalid group holds the target to at `profile`: those a call can
    carry (or the target takes as written), the profile's tables only for a target that knows
    them (the literal K bound, when asked for, for every target: it replaces the K bound every
    target is held to), and only what its contract promises to refuse (spec.contracts)."""
    from topkspec.spec.contracts import unpromised_rules
    from topkspec.spec.rules import IMPOSSIBLE_RULES
    from topkspec.strategies import breakable_rules
    from topkspec.strategies.invalid import carries_cases
    from topkspec import spec

    contract = contract or target.contract
    if not (target.validates or contract.implements == "own"):
        return []
    open_rules = unpromised_rules(contract)
    tables = spec.parse_profile(profile).family in target.validates_tables
    by_descriptor = set(getattr(target, "descriptor_rules", ()))  # reach the target without a Case
    return [rule for rule in breakable_rules(profile, strict_doc=strict_doc)
            if (carries_cases(profile, rule) or rule in by_descriptor) and rule not in open_rules
            and (tables or rule in IMPOSSIBLE_RULES or (strict_doc and rule == "dml.k.max_strict"))]


def plan_groups(target: Target, profile: str, *, strict_doc: bool = False, max_axis_size: int | None = None,
                max_elements: int | None = None, contract=None) -> dict:
    """{group: (strategy, body)} for the groups that apply to the target at `profile`.
    strict_doc: the literal DirectML text, so a K equal to the axis size is invalid (valid
    cases draw K below it, and the invalid group holds every target to refusing it).
    max_axis_size, max_elements: the longest axis and the most elements a drawn input has
    (default: the strategies'; invalid descriptors stay small)."""
    from hypothesis import strategies as st

    from topkspec.strategies import breakable_rules, case_and_input, invalid_descriptors
    from topkspec.spec.rules import IMPOSSIBLE_RULES
    from topkspec.strategies.invalid import carries_cases
    from topkspec import spec

    options = dict(strict_doc=strict_doc)
    if max_axis_size is not None:
        options["max_axis_size"] = max_axis_size
    if max_elements is not None:
        options["max_total"] = max_elements
    offered = _offered_types(profile, contract or target.contract)
    if offered:  # the value types the contract offers: no example of another type is drawn
        options["dtypes"] = offered
    if getattr(target, "graph_contexts", False) and profile.startswith("onnx"):
        options["graph_contexts"] = True  # the TopK inside a graph too (Case.context)
    groups = {"valid": (case_and_input(profile, allow_nan=False, **options), body_of("valid"))}
    floats = [t for t in _float_types(profile) if not offered or t in offered]
    options.pop("dtypes", None)
    if floats:
        groups["nan"] = (case_and_input(profile, dtypes=floats, allow_nan=True, require_nan=True, **options),
                         body_of("nan"))
    if offered:
        options["dtypes"] = offered
    groups["metamorphic"] = (case_and_input(profile, allow_nan=True, **options), body_of("metamorphic"))
    breakable = descriptor_rules_in_force(target, profile, strict_doc=strict_doc, contract=contract)
    if breakable:
        groups["invalid"] = (st.one_of([invalid_descriptors(profile, rule) for rule in breakable]), body_of("invalid"))
    if not target.computes:  # a validator: it is handed descriptors, valid and broken, and computes nothing
        from topkspec.fuzz.validator_groups import accepts_group
        return {"accepts": accepts_group(target, profile, strict_doc), **{g: groups[g] for g in ("invalid",)
                                                                           if g in groups}}
    groups["deterministic"] = (case_and_input(profile, allow_nan=True, **options), body_of("deterministic"))
    options.pop("graph_contexts", None)  # the self group compares calls of one model
    if _self_judges(target, floats, contract or target.contract):
        groups["self"] = (_open_inputs(profile, floats, options), body_of("self"))
    if getattr(target, "draws_layouts", False) and spec.parse_profile(profile).family == "dml":
        from topkspec.strategies.layouts import layout_inputs  # strides, offsets, flags, graphs
        groups["layout"] = (layout_inputs(case_and_input(profile, allow_nan=False, **options)), body_of("layout"))
    return {name: plan for name, plan in groups.items()
            if not _nothing_to_judge(name, contract or target.contract, profile)}


def _offered_types(profile, contract) -> list | None:
    """The profile's value types the contract offers, or None (it offers every one, or none of
    the profile's: then every case is set aside as unsupported, and the run says so)."""
    from topkspec import spec

    if contract is None or contract.value_types is None:
        return None
    names = sorted({t for op in spec.ops(profile) for t in spec.value_types(profile, op)})
    return [t for t in names if contract.value_types.offers(t)] or None


def _self_judges(target, floats, contract) -> bool:
    """Whether the self group can judge anything: input where the answer is open (a float
    type: NaN, subnormals), a relation the contract leaves open, or K passed two ways."""
    from topkspec.properties.self_consistency import SETTLED_BY
    from topkspec.spec.contracts import unpromised_rules

    return bool(floats) or bool(set(SETTLED_BY.values()) & unpromised_rules(contract).keys()) \
        or len(getattr(target, "k_forms", ()) or ()) >= 2


def _open_inputs(profile, floats, options):
    """The self group's inputs: where the answer is open, NaN of both signs (half the draws,
    for a profile with float types), otherwise the strategies' mix of ties, signed zeros,
    infinities and subnormals."""
    from hypothesis import strategies as st

    from topkspec.strategies import case_and_input

    anything = case_and_input(profile, allow_nan=True, **options)
    if not floats:
        return anything
    others = {name: value for name, value in options.items() if name != "dtypes"}  # floats are offered ones
    return st.one_of(case_and_input(profile, dtypes=floats, allow_nan=True, require_nan=True, **others), anything)


def _nothing_to_judge(group: str, contract, profile) -> bool:
    """A metamorphic group every property of which checks only rules the contract leaves open
    (a runtime whose ties are unspecified promises neither a prefix nor equal repeated calls),
    or cannot judge any case at the profile (the two DirectML operators compared where there
    is one): nothing to judge, so its examples would only make the run look thin."""
    from topkspec.spec.contracts import unpromised_rules

    props = in_group(group)
    open_rules = unpromised_rules(contract)
    return bool(props) and all(set(prop.rule_ids) <= open_rules.keys()
                               or (prop.judges_at is not None and not prop.judges_at(profile))
                               for prop in props)


def body_of(group: str):
    """The body that checks one example of a group that calls the target (None for a
    validator's): plan_groups pairs it with the group's strategy, and a failure is confirmed
    by running it again (fuzz.confirm)."""
    if group in ("valid", "nan"):
        return _result_body
    if group in ("metamorphic", "deterministic", "self", "layout"):
        # the self group's relations are each reported with their own calls: none is shared
        return _metamorphic_body(group, share_calls=group == "metamorphic")
    return _invalid_body if group == "invalid" else None


def split_budget(total: int, groups) -> dict:
    """The run's budget shared among `groups` by GROUP_WEIGHTS, at least one example each."""
    weights = {g: GROUP_WEIGHTS.get(g, 0.1) for g in groups}
    scale = sum(weights.values())
    shares = {g: max(1, int(total * w / scale)) for g, w in weights.items()}
    first = next(iter(shares))
    shares[first] += max(0, total - sum(shares.values()))  # rounding leftovers to the first
    return shares
