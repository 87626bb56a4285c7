"""repro.py: a standalone program in the runtime's own API, rendered from template files.

It is the head (title, rule, exit codes), the writer's runtime part (imports and
`topk(x, k, axis)`), the data of the shrunk example as literals, and the check of the
failure's relation. It exits 1 while the bug is there and 0 once it is fixed.

A failure judged on a descriptor as written, with no call to the target (a validator, or a
broken descriptor no Case carries), replays that descriptor instead: the writer's descriptor
part defines `validate(descriptor)`, and the check asks for a refusal of a broken descriptor
or the acceptance of a valid one.
"""
from __future__ import annotations

import textwrap
from importlib import resources
from string import Template

import numpy as np

from topkspec.spec import dtypes
from topkspec.properties.sequences import nan_mask
from topkspec.repro.calls import calls_for, expected_result
from topkspec.repro.relations import REPLAYS
from topkspec.repro.writers import adapter_writer, descriptor_writer_for, read_template

INLINE_LIMIT = 256  # elements written into the program; larger arrays load from inputs.npz


def render(name: str, **values) -> str:
    """One of the report's own templates (templates/ beside this module: the head and the
    checks) with its $names filled (a missing name is an error, not a silent gap)."""
    text = resources.files("topkspec.repro").joinpath("templates", "program", name).read_text()
    return Template(text).substitute(values)


def render_runtime(template, **values) -> str:
    """A writer's runtime part (see topkspec.repro.writers), its $names filled."""
    return Template(read_template(template)).substitute(values)


def _number(value, kind: str) -> str:
    if kind in "iu":
        return str(int(value))
    value = float(value)
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def array_literal(arr, name: str, key: str) -> tuple[str, set]:
    """`NAME = np.array([...], dtype=...)` exact to the bit, and the names it needs (ml_dtypes,
    nan, inf); arrays above INLINE_LIMIT elements load from inputs.npz instead."""
    arr = np.asarray(arr)
    type_name = dtypes.name_of(arr.dtype)
    native = arr.dtype.type.__module__ == "numpy"
    dtype = f"np.{type_name}" if native else f"ml_dtypes.{type_name}"
    needs = set() if native else {"ml_dtypes"}
    if arr.size > INLINE_LIMIT:
        view = "" if native else f".view({dtype})"
        return f'{name} = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs.npz"))' \
               f'["{key}"]{view}  # {arr.size} elements', needs | {"os"}
    kind = "f" if arr.dtype.kind in "fV" else arr.dtype.kind
    numbers = [_number(v, kind) for v in arr.reshape(-1).tolist()] if native else \
        [_number(float(v), "f") for v in arr.reshape(-1)]
    needs |= {w for w in ("nan", "inf") if any(w in n for n in numbers)}
    shape = f".reshape({list(arr.shape)})" if arr.ndim != 1 else ""
    text = f"{name} = np.array([{', '.join(numbers)}], dtype={dtype}){shape}"
    if not _round_trips(text, arr):  # a NaN payload, say: write the bits
        bits = arr.view(f"uint{arr.dtype.itemsize * 8}")
        text = (f"{name} = np.array({bits.reshape(-1).tolist()}, dtype=np.uint{arr.dtype.itemsize * 8})"
                f".view({dtype}){shape}  # bit patterns")
    return text, needs


def _round_trips(text: str, arr) -> bool:
    import ml_dtypes

    space = {"np": np, "ml_dtypes": ml_dtypes, "nan": float("nan"), "inf": float("inf")}
    exec(text.replace(text.split(" = ", 1)[0], "_value", 1), space)
    got = np.asarray(space["_value"])
    return got.shape == arr.shape and got.tobytes() == np.ascontiguousarray(arr).tobytes()


def values_only(contract) -> bool:
    """True when the runtime's contract returns no indices: its result is its values alone."""
    return contract is not None and contract.value("indices") == "not_returned"


def check_of(relation: str, case, x, contract=None) -> str:
    """The check template for a relation (results: exact, unsorted, with NaN, or the values alone
    where the contract returns no indices; comparisons of two calls: bit for bit, or with NaN the
    non-NaN values only)."""
    if relation in REPLAYS and REPLAYS[relation].check:  # a relation with a check of its own
        return REPLAYS[relation].check
    if relation == "result":
        if nan_mask(np.asarray(x)).any():
            return "check_nan.tmpl"
        if values_only(contract):
            return "check_values.tmpl"
        return "check_exact.tmpl" if case.sorted else "check_unsorted.tmpl"
    same = "check_same_nan.tmpl" if nan_mask(np.asarray(x)).any() else "check_same.tmpl"
    return {"reject": "check_reject.tmpl", "accept": "check_accept.tmpl", "crash": "check_crash.tmpl",
            "hang": "check_crash.tmpl", "adapter": "check_adapter.tmpl"}.get(relation, same)


def _data(relation: str, calls, takes_op: bool, contract=None) -> tuple[list[str], set, dict]:
    """The data lines, the names they need, and the check's template values."""
    case, x = calls[0]
    lines, needs = [], set()
    text, more = array_literal(x, "X", "x0")
    lines.append(text)
    needs |= more
    lines.append(f"K, AXIS = {case.k}, {case.axis}")
    values = {}
    if relation == "result":
        expected = expected_result(case, x)
        check = check_of(relation, case, x, contract)
        if check == "check_values.tmpl":
            any_order = not case.sorted or contract.value("sorted") == "never"
            values.update(order=", in any order" if any_order else "", compare=(
                "np.sort(values, axis=AXIS % X.ndim) == np.sort(EXPECTED_VALUES, axis=AXIS % X.ndim)"
                if any_order else "values == EXPECTED_VALUES"))
        if expected is not None and check != "check_nan.tmpl":
            named = (("EXPECTED_VALUES", expected[0]), ("EXPECTED_INDICES", expected[1]))
            for name, arr in named[:1] if check == "check_values.tmpl" else named:
                text, more = array_literal(arr, name, name.lower())
                lines.append(text)
                needs |= more
        else:
            lines.append(f"LARGEST, SORTED = {case.largest}, {case.sorted}")
    if relation in REPLAYS:
        replay = REPLAYS[relation]
        lines += replay.data(calls)
        pair = replay.pair_with_op if takes_op and replay.pair_with_op else replay.pair
        pair = pair(calls) if callable(pair) else pair
        values = {"pair": pair, "what": replay.differs, "fixed": replay.agrees}
    return lines, needs, values


def descriptor_of(failure) -> dict | None:
    """The descriptor a failure was judged on as written, when no call to the target carried
    it: the broken descriptor drawn (that of the failure's draw, or of the stand-in for a
    case), else the valid case's JSON form. None for a failure seen through a call."""
    from topkspec import spec

    if failure.calls or failure.x is not None:
        return None
    draw = failure.draw if failure.draw is not None else getattr(failure.case, "draw", None)
    if draw is not None:
        return draw.descriptor
    try:
        return spec.descriptor(failure.case)
    except Exception:
        return None


def broken_rules(failure) -> list[str]:
    """The rules the failure's descriptor was drawn to break (none for a valid one)."""
    draw = failure.draw if failure.draw is not None else getattr(failure.case, "draw", None)
    return sorted(draw.rules) if draw is not None else []


def descriptor_literal(descriptor, name: str = "DESCRIPTOR") -> tuple[str, set]:
    """`NAME = {...}` as a Python literal equal to the descriptor (its JSON text read back
    with json.loads when no literal holds it, a NaN say), and the modules that needs."""
    import ast
    import json
    import pprint

    text = pprint.pformat(descriptor, width=100, sort_dicts=False)
    try:
        if ast.literal_eval(text) == descriptor:
            return f"{name} = {text}", set()
    except (ValueError, SyntaxError, RecursionError):
        pass
    return f"{name} = json.loads({json.dumps(descriptor)!r})", {"json"}


def _head(title: str, rule_line: str, needs: str) -> str:
    wrapped = "\n".join(textwrap.wrap(rule_line, 100, break_long_words=False, break_on_hyphens=False))
    return render("head.tmpl", title=title.replace('"', "'"), rule=wrapped.replace('"""', "'''"), needs=needs)


def _descriptor_source(failure, descriptor, *, target, target_spec, title: str, rule_line: str,
                       why: str) -> str:
    """repro.py for a failure judged on a descriptor as written (see the module text)."""
    adapter = failure.relation == "adapter"
    writer = adapter_writer() if adapter else descriptor_writer_for(target)
    case = failure.case
    runtime = render_runtime(writer.descriptor_template, **writer.descriptor_fill(target, case, target_spec))
    broken = broken_rules(failure)
    if adapter:  # the adapter broke: fixed once it gives a verdict, whatever the verdict
        check = render("check_descriptor_adapter.tmpl")
    elif broken:
        check = render("check_descriptor_reject.tmpl", why=why.replace('"', "'"), rules=", ".join(broken))
    else:
        check = render("check_descriptor_accept.tmpl", why=why.replace('"', "'"),
                       profile=getattr(case, "profile", "its profile"))
    literal, needs = descriptor_literal(descriptor)
    head = _head(title, rule_line, writer.descriptor_needs or writer.needs)
    head = head.replace("\nimport numpy as np\n", "")  # no arrays to hold
    head = head.replace("import sys\n", "".join(f"import {name}\n" for name in sorted(needs | {"sys"})))
    return head + "\n" + runtime + "\n\n" + literal + "\n" + check


def earlier_source(failure, runtime: str, *, writer, target, target_spec, main_case=None) -> tuple[str, set]:
    """The part of repro.py that makes the calls a failure needs before its own (Failure.prior:
    it fails in a fresh process only after them): each call's input, how `topk` makes it, and
    `earlier_calls()`, which makes them and lets each one's own result or refusal pass. A writer
    with call options makes every call through the one `topk` (one target, as in the run),
    passing a call's options where they differ from the main call's; else each call's runtime
    is set up as the run set it up (the main `topk` when that is the same). ("", set()) for a
    failure that fails alone."""
    prior = getattr(failure, "prior", None) or []
    if not prior:
        return "", set()
    functions, defined, entries, lines, needs = {runtime: "topk"}, [], [], [], set()
    main_case = main_case if main_case is not None else failure.case  # the one `topk` is set up for
    main = writer.call_options(target, main_case, target_spec) if writer.call_options else None
    for number, (case, x) in enumerate(prior, 1):
        options = {}
        if main is not None:
            call, own = "topk", writer.call_options(target, case, target_spec)
            options = {key: value for key, value in own.items() if main.get(key) != value}
        else:
            template = writer.template(case) if callable(writer.template) else writer.template
            text = render_runtime(template, **writer.fill(target, case, target_spec))
            if text not in functions:  # another type or option: `topk` set up as for that call
                functions[text] = f"topk_as_call_{number}"
                defined.append(f"\n\ndef runtime_of_call_{number}():\n    \"\"\"`topk` as earlier call {number} ran "
                               f"it.\"\"\"\n{textwrap.indent(text.strip(), '    ')}\n    return topk\n\n\n"
                               f"{functions[text]} = runtime_of_call_{number}()\n")
            call = functions[text]
        literal, more = array_literal(x, f"X_EARLIER_{number}", f"earlier_x{number}")
        needs |= more
        lines.append(literal)
        shown = "{" + ", ".join(f"{key!r}: {value}" for key, value in options.items()) + "}"
        entries.append(f"({call}, X_EARLIER_{number}, {case.k}, {case.axis}, {shown})")
    source = ("".join(defined) + "\n\n# It fails only after these calls in the same process, which set its state:\n"
              + "\n".join(lines) + f"\nEARLIER = [{', '.join(entries)}]  # (topk, x, K, axis, options) of each, in order\n"
              + render("earlier.tmpl"))
    return source, needs


def _crash_values(failure, relation: str, why: str) -> dict:
    """What a crash or hang check expects: a result of a valid case, a refusal (a clean error)
    of an invalid one, which is then the fix."""
    if relation not in ("crash", "hang"):
        return {}
    why = why.replace('"', "'")
    if broken_rules(failure):
        return {"expected": "a refusal", "verdict": (
            'if "\\nrefused: " not in "\\n" + output:\n'
            f'    sys.exit("no crash, but the invalid case was accepted: expected a refusal, because {why}")\n'
            'print("fixed: the invalid case is refused")\n')}
    return {"expected": "a result", "verdict": (
        'if "\\nrefused: " in "\\n" + output:\n'
        f'    sys.exit("expected a result (the case is valid: {why}), got a refusal")\n'
        'print("fixed: the call returned a result")\n')}


def repro_source(failure, relation: str, *, writer, target, target_spec, title: str, rule_line: str,
                 why: str, timeout: float, contract=None) -> str:
    """The whole repro.py (`contract`: the one the run held the target to)."""
    descriptor = descriptor_of(failure)
    if descriptor is not None:
        return _descriptor_source(failure, descriptor, target=target, target_spec=target_spec, title=title,
                                  rule_line=rule_line, why=why)
    if relation == "adapter":  # topkspec's adapter broke: only a program through it shows that
        writer = adapter_writer()
    calls = calls_for(failure, relation)
    if not calls:  # no call was made: the target refused or broke when asked about the case
        calls = [(failure.case, failure.x)]
    case, x = calls[0]
    data, needs, check_values = _data(relation, calls, writer.takes_op, contract)
    template = writer.template(case) if callable(writer.template) else writer.template
    runtime = render_runtime(template, **writer.fill(target, case, target_spec))
    index_type = (getattr(target, "index_dtype", None) or case.index_dtype) if writer.checks_index_type else None
    if index_type:
        check_values.update(index_type_test=f' or indices.dtype != np.{index_type}',
                            index_type_text=f"{dtypes.name_of(np.asarray(x).dtype)} values and {index_type} indices")
    else:
        check_values.update(index_type_test="", index_type_text=f"{dtypes.name_of(np.asarray(x).dtype)} values and integer indices")
    earlier, more = earlier_source(failure, runtime, writer=writer, target=target, target_spec=target_spec,
                                   main_case=case)
    needs |= more
    # a crash or hang is watched in a process of its own, which makes the earlier calls itself
    before = "    earlier_calls()\n" if earlier and relation in ("crash", "hang") else ""
    check = render(check_of(relation, case, x, contract), why=why.replace('"', "'"), timeout=f"{timeout:g}", before=before,
                   **check_values, **_crash_values(failure, relation, why))
    if earlier and not before:
        check = "\nearlier_calls()\n" + check
    head = _head(title, rule_line, writer.needs)
    if relation in ("crash", "hang"):
        needs.add("subprocess")
    stdlib = "".join(f"import {name}\n" for name in sorted(needs & {"os", "subprocess"}) + ["sys"])
    head = head.replace("import sys\n", stdlib)
    if "ml_dtypes" in needs:
        head = head.replace("import numpy as np\n", "import ml_dtypes\nimport numpy as np\n")
    constants = 'nan, inf = float("nan"), float("inf")\n' if needs & {"nan", "inf"} else ""
    earlier = earlier.strip("\n") + "\n\n\n" if earlier else ""
    return head + runtime + "\n\n" + constants + earlier + "\n".join(data) + "\n" + check
