"""What a runtime promises about TopK, point by point, each promise with the sentence it stands on.

A runtime that imports ONNX models promises ONNX TopK at the opsets it claims; a DirectML layer
promises DirectML at its feature level; a framework with an API of its own promises what its own
documentation says, and nothing more. A `Contract` records that as data: for each point of
`POINTS` one `Promise` (a value of `VALUES[point]`, the quoted sentence, its title and URL, and
whether the text states it, "documented", or we read it so, "interpretation").

A point whose value is "unspecified" fails no target either way. Standard library only.

    contract = own_contract("myfw.topk", url="https://myfw.dev/topk", title="myfw.topk",
                            sorted=("never", "The output is not sorted."),
                            smallest="not_offered", indices="not_returned")
    contract.promise("sorted").value   # "never"
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from topkspec.errors import UsageError, read_toml
from topkspec.spec.offered import Offered, offered_from

POINTS = ("k_zero", "k_above_axis", "axis_out_of_range", "sorted", "smallest", "indices", "ties", "nan",
          "signed_zeros")

#: The values each point may take; the first is the weakest promise where one is "unspecified".
VALUES = {
    "k_zero": ("unspecified", "refused", "empty"),
    "k_above_axis": ("unspecified", "refused", "clamped"),
    "axis_out_of_range": ("unspecified", "refused", "wrapped"),
    "sorted": ("always", "optional", "never"),
    "smallest": ("offered", "not_offered"),
    "indices": ("returned", "not_returned"),
    "ties": ("unspecified", "index_order"),
    "nan": ("unspecified", "largest", "totalorder", "smallest", "last"),
    "signed_zeros": ("unspecified", "tied", "ordered"),
}

#: What each point asks, in words (`topkspec targets --contract`, docs/runtimes.md).
QUESTIONS = {
    "k_zero": "K = 0", "k_above_axis": "K above the axis size", "axis_out_of_range": "axis out of range",
    "sorted": "sorted output", "smallest": "the smallest K", "indices": "indices", "ties": "ties",
    "nan": "NaN order", "signed_zeros": "signed zeros",
}

IMPLEMENTS = ("onnx", "dml", "own")
DOCUMENTED = "documented"
INTERPRETATION = "interpretation"


class ContractError(UsageError):
    """A contract that names an unknown point or value, or a file that holds no contract."""


@dataclass(frozen=True)
class Promise:
    """One point of a contract: its value, and the sentence (`quote`) of the document (`title`,
    `url`) it stands on. status: "documented" (the text says so) or "interpretation" (the text
    implies it or is silent, and `reason` says how we read it)."""

    point: str
    value: str
    quote: str
    url: str
    title: str
    status: str = DOCUMENTED
    reason: str = ""

    def __post_init__(self):
        if self.point not in VALUES:
            raise ContractError(f"unknown contract point {self.point!r} (expected one of {', '.join(POINTS)})")
        if self.value not in VALUES[self.point]:
            raise ContractError(f"{self.point} = {self.value!r} is no value of that point "
                                f"(expected one of {', '.join(VALUES[self.point])})")
        if self.status not in (DOCUMENTED, INTERPRETATION):
            raise ContractError(f"{self.point}: status {self.status!r} is neither documented nor interpretation")

    @property
    def specified(self) -> bool:
        """False where the runtime promises nothing (the point then fails no target)."""
        return self.value != "unspecified"

    @property
    def label(self) -> str:
        """"documents" or "our reading": who decides a failure of this promise."""
        return "documents" if self.status == DOCUMENTED else "our reading"


@dataclass(frozen=True)
class Contract:
    """What one runtime promises: `implements` "onnx" (ONNX TopK at `profiles`, "onnx:11", ...),
    "dml" (DirectML at `profiles`, "dml:5.0", ...) or "own" (its own API, `promises` from its own
    documentation); one Promise per point of POINTS."""

    name: str
    implements: str
    promises: tuple
    profiles: tuple = ()
    notes: str = field(default="", compare=False)
    value_types: Offered | None = None  # the types offered, with the text behind it; None: all (spec.offered)

    def __post_init__(self):
        if self.implements not in IMPLEMENTS:
            raise ContractError(f"contract {self.name!r}: implements {self.implements!r} is not one of "
                                f"{', '.join(IMPLEMENTS)}")
        points = [p.point for p in self.promises]
        missing = [p for p in POINTS if p not in points]
        if missing or len(points) != len(set(points)):
            raise ContractError(f"contract {self.name!r} needs one promise per point: "
                                f"missing {', '.join(missing) or 'none'}, twice "
                                f"{', '.join(sorted({p for p in points if points.count(p) > 1})) or 'none'}")
        object.__setattr__(self, "promises", tuple(sorted(self.promises, key=lambda p: POINTS.index(p.point))))

    def promise(self, point: str) -> Promise:
        for promise in self.promises:
            if promise.point == point:
                return promise
        raise ContractError(f"unknown contract point {point!r}")

    def value(self, point: str) -> str:
        return self.promise(point).value

    def replaced(self, **points) -> "Contract":
        """This contract with some promises replaced (each a Promise, a value, or (value, quote))."""
        base = {p.point: p for p in self.promises}
        template = self.promises[0]
        for point, given in points.items():
            base[point] = _promise(point, given, url=base[point].url or template.url,
                                   title=base[point].title or template.title)
        return replace(self, promises=tuple(base.values()))

    def to_dict(self) -> dict:
        """JSON-ready: what `topkspec targets --contract NAME --json` prints and a worker sends."""
        return {"name": self.name, "implements": self.implements, "profiles": list(self.profiles),
                "notes": self.notes, "promises": {p.point: {k: v for k, v in asdict(p).items() if k != "point"}
                                                  for p in self.promises},
                **({"value_types": self.value_types.to_dict()} if self.value_types else {})}

    @classmethod
    def from_dict(cls, data: dict) -> "Contract":
        promises = tuple(Promise(point=point, **fields) for point, fields in data["promises"].items())
        return cls(data["name"], data["implements"], promises, tuple(data.get("profiles", ())), data.get("notes", ""),
                   offered_from(data.get("value_types")))


def _promise(point: str, given, *, url: str, title: str) -> Promise:
    """A Promise from what a user writes: a Promise, a value ("never"), (value, quote), or a dict
    with value and optionally quote, url, title, status, reason."""
    if isinstance(given, Promise):
        return replace(given, point=point)
    if isinstance(given, str):
        given = {"value": given}
    elif isinstance(given, (tuple, list)):
        if not 1 <= len(given) <= 2:
            raise ContractError(f"{point}: expected a value or (value, quote), got {given!r}")
        given = {"value": given[0], "quote": given[1] if len(given) > 1 else ""}
    if not isinstance(given, dict) or "value" not in given:
        raise ContractError(f"{point}: expected a value, (value, quote) or a table with `value`, got {given!r}")
    unknown = set(given) - {"value", "quote", "url", "title", "status", "reason"}
    if unknown:
        raise ContractError(f"{point}: unknown keys {', '.join(sorted(unknown))}")
    quote = given.get("quote", "")
    status = given.get("status", DOCUMENTED if quote else INTERPRETATION)
    return Promise(point, given["value"], quote, given.get("url", url), given.get("title", title), status,
                   given.get("reason", "" if quote else "declared without a quoted sentence"))


def own_contract(name: str, *, url: str, title: str, notes: str = "", value_types=None, **points) -> Contract:
    """A framework's contract in a few lines: `url` and `title` name its documentation page,
    and each keyword a point of POINTS: a value ("never"), (value, quote) or a Promise. A point
    left out is "unspecified"; sorted, smallest and indices have no such value and must be given.
    `value_types`: (types, quote) or a table, the types it offers (spec.offered)."""
    unknown = set(points) - set(POINTS)
    if unknown:
        raise ContractError(f"unknown contract points {', '.join(sorted(unknown))} "
                            f"(expected some of {', '.join(POINTS)})")
    needed = [p for p in POINTS if p not in points and "unspecified" not in VALUES[p]]
    if needed:
        raise ContractError(f"contract {name!r} must say {', '.join(needed)} (no default for them)")
    promises = tuple(_promise(p, points.get(p, {"value": "unspecified", "reason": "not declared"}),
                              url=url, title=title) for p in POINTS)
    return Contract(name, "own", promises, notes=notes,
                    value_types=offered_from(value_types, url=url, title=title, error=ContractError))


# ---- ONNX and DirectML, from the quotes the spec's rules stand on ------------------------------

def _cited(point: str, value: str, cited: dict, status: str = DOCUMENTED, reason: str = "") -> Promise:
    from topkspec.spec.tables import DOCUMENTS

    doc = DOCUMENTS[cited["doc"]]
    return Promise(point, value, cited["quote"], doc["url"], doc["title"], status, reason)


def onnx_contract(name: str, opsets=(24,)) -> Contract:
    """ONNX TopK's own text at the newest of `opsets` (ints or "onnx:N"), quoted from the sentences
    the spec's onnx.* and out.* rules cite. Where the text is silent (NaN) or only implies a bound
    (K above the axis size), the promise is our reading, as the rule it mirrors."""
    from topkspec.spec.citations import ONNX

    numbers = sorted(int(str(o).split(":")[-1]) for o in opsets)
    top = numbers[-1]
    from_11 = top >= 11
    promises = (
        _cited("k_zero", "refused", ONNX.K) if top >= 10 else
        _cited("k_zero", "refused", ONNX.K_ATTRIBUTE, INTERPRETATION,
               "TopK-1 bounds k nowhere; held to TopK-10's 'single positive value' (onnx.k.positive)."),
        _cited("k_above_axis", "refused", ONNX.VALUES, INTERPRETATION,
               "The output has k elements along the axis, so k cannot exceed its size (onnx.k.max)."),
        _cited("axis_out_of_range", "refused", ONNX.AXIS_11) if from_11 else
        _cited("axis_out_of_range", "refused", ONNX.AXIS_1, INTERPRETATION,
               "TopK-1 and TopK-10 state no range; held to TopK-11's (onnx.axis.range)."),
        _cited("sorted", "optional", ONNX.UNSORTED) if from_11 else
        _cited("sorted", "always", ONNX.TIES, INTERPRETATION,
               "TopK-1 and TopK-10 have no sorted attribute; held to sorted output (out.order)."),
        _cited("smallest", "offered", ONNX.LARGEST) if from_11 else
        _cited("smallest", "not_offered", ONNX.SUMMARY_1),
        _cited("indices", "returned", ONNX.INDICES),
        _cited("ties", "index_order", ONNX.TIES),
        _cited("nan", "unspecified", ONNX.SUMMARY_11 if from_11 else ONNX.SUMMARY_1, INTERPRETATION,
               "The text never says how NaN orders (out.nan.unspecified)."),
        _cited("signed_zeros", "tied", ONNX.TIES, INTERPRETATION,
               "'Two equivalent values': -0.0 and +0.0 compare equal under IEEE (out.ties.signed_zero)."),
    )
    return Contract(name, "onnx", promises, tuple(f"onnx:{n}" for n in numbers))


def dml_contract(name: str, levels=("5.0",)) -> Contract:
    """DirectML's DML_TOP_K1_OPERATOR_DESC text at `levels` (feature levels, "5.0" or "dml:5.0"),
    quoted from the sentences the spec's dml.* and out.* rules cite."""
    from topkspec.spec.citations import K1

    promises = (
        _cited("k_zero", "refused", K1.K),
        _cited("k_above_axis", "refused", K1.K, INTERPRETATION,
               "The text says 'less than' the axis size; K equal to it is accepted by DirectML and "
               "used by Microsoft's code, so only K above it must be refused (dml.k.max)."),
        _cited("axis_out_of_range", "refused", K1.AXIS),
        _cited("sorted", "always", K1.ORDER),
        _cited("smallest", "offered", K1.DIRECTION),
        _cited("indices", "returned", K1.SUMMARY),
        _cited("ties", "index_order", K1.TIES),
        _cited("nan", "unspecified", K1.ORDER, INTERPRETATION,
               "The text never says how NaN orders (out.nan.unspecified)."),
        _cited("signed_zeros", "tied", K1.TIES, INTERPRETATION,
               "'The same value': -0.0 and +0.0 compare equal under IEEE (out.ties.signed_zero)."),
    )
    return Contract(name, "dml", promises, tuple(f"dml:{str(v).split(':')[-1]}" for v in levels))


def profile_contract(name: str, profile: str) -> Contract:
    """ONNX's contract at an onnx:N profile, DirectML's at a dml:X.Y one: what a target that
    declares no contract is held to (its default profile's text, as before contracts existed)."""
    family, _, version = str(profile).partition(":")
    if family == "onnx":
        return onnx_contract(name, (version or 24,))
    return dml_contract(name, (version or "5.0",))


# ---- --contract FILE ---------------------------------------------------------------------

def load_contract(path: str) -> Contract:
    """A contract from a TOML file (`--contract FILE`):

        name = "myfw.topk"
        implements = "own"            # or "onnx" / "dml" with profiles = ["onnx:11"]
        url = "https://myfw.dev/topk"  # the page each promise quotes unless it names its own
        title = "myfw.topk"
        [promises]
        sorted = { value = "never", quote = "The output is in no particular order." }
        smallest = "not_offered"
        indices = "not_returned"
        [value_types]                 # optional: the types it offers, and the text that lists them
        types = ["float32", "int64"]
        quote = "Supported types: float32, int64."

    For implements = "onnx" or "dml", `[promises]` may replace single points of that text."""
    data = read_toml(path, ContractError, f"--contract {path}")
    try:
        return contract_from_toml(data, default_name=path)
    except ContractError as exc:
        raise ContractError(f"--contract {path}: {exc}") from None


def contract_from_toml(data: dict, default_name: str = "contract") -> Contract:
    unknown = set(data) - {"name", "implements", "profiles", "url", "title", "notes", "promises", "value_types"}
    if unknown:
        raise ContractError(f"unknown keys {', '.join(sorted(unknown))}")
    name = str(data.get("name", default_name))
    implements = data.get("implements", "own")
    promises = data.get("promises", {})
    if not isinstance(promises, dict):
        raise ContractError("`promises` must be a table of point = value")
    if implements == "own":
        if "url" not in data or "title" not in data:
            raise ContractError("an own contract needs `url` and `title` (the documentation it quotes)")
        return own_contract(name, url=data["url"], title=data["title"], notes=data.get("notes", ""),
                            value_types=data.get("value_types"), **promises)
    if implements == "onnx":
        base = onnx_contract(name, data.get("profiles", ["onnx:24"]))
    elif implements == "dml":
        base = dml_contract(name, data.get("profiles", ["dml:5.0"]))
    else:
        raise ContractError(f"implements {implements!r} is not one of {', '.join(IMPLEMENTS)}")
    unknown = set(promises) - set(POINTS)
    if unknown:
        raise ContractError(f"unknown contract points {', '.join(sorted(unknown))}")
    offered = offered_from(data.get("value_types"), url=data.get("url", ""), title=data.get("title", ""),
                           error=ContractError)
    return replace(base.replaced(**promises) if promises else base, value_types=offered)


# ---- which rules a contract puts in force ---------------------------------------------------

#: The point of a contract that decides each rule; rules not named here are plain correctness
#: (the right shape, the K largest or smallest values, each an element of the input), which
#: every contract keeps.
RULE_POINTS = {
    "dml.k.positive": "k_zero", "onnx.k.positive": "k_zero",
    "dml.k.max": "k_above_axis", "dml.k.max_strict": "k_above_axis", "onnx.k.max": "k_above_axis",
    "dml.axis.range": "axis_out_of_range", "onnx.axis.range": "axis_out_of_range",
    "out.order": "sorted", "out.unsorted.set": "sorted",
    "out.ties.index_order": "ties", "out.ties.kth_place": "ties", "out.exact": "ties",
    "out.prefix": "ties", "out.axis_moves": "ties", "out.deterministic": "ties",
    "out.ties.signed_zero": "signed_zeros",
    "out.nan.unspecified": "nan", "out.nan.order": "nan",
    "out.dtype.indices": "indices", "out.indices.range_distinct": "indices", "out.indices.base": "indices",
}

# Values that promise no refusal. "empty", "clamped" and "wrapped" promise an answer instead,
# which no check holds a runtime to yet: until one does, they fail no target, as unspecified.
_NOT_REFUSED = ("unspecified", "empty", "clamped", "wrapped")


def unpromised_rules(contract: Contract) -> dict:
    """{rule id: the Promise that leaves it open} for the rules `contract` does not promise: they
    fail no target either way. A runtime that returns no indices promises nothing about them
    nor, therefore, about ties; one whose ties or signed zeros are open promises no exact
    index-for-index result, nor relations that compare indices (prefix, axis moves)."""
    open_points = {p.point: p for p in contract.promises
                   if p.value in _NOT_REFUSED or (p.point == "signed_zeros" and p.value != "tied")}
    indices = contract.promise("indices")
    if indices.value == "not_returned":
        open_points.update(indices=indices, ties=open_points.get("ties", indices))
    out = {rule: open_points[point] for rule, point in RULE_POINTS.items()
           if point in open_points and point != "signed_zeros"}
    if "ties" in open_points:  # an exact index-for-index answer stands on the tie rule
        out.update({r: open_points["ties"] for r in ("out.ties.signed_zero", "out.unsorted.set")})
    if "signed_zeros" in open_points:
        out.update({r: open_points["signed_zeros"] for r in ("out.ties.signed_zero", "out.exact")})
    if contract.value("sorted") == "never":  # no order to check: compared as a set
        out["out.order"] = contract.promise("sorted")
    out.pop("out.nan.unspecified", None)  # its policy-free part holds whatever the NaN order
    return out


def promise_for_rule(contract: Contract, rule_id: str) -> Promise | None:
    """The promise that decides `rule_id` under the contract, or None (plain correctness)."""
    point = RULE_POINTS.get(rule_id)
    return contract.promise(point) if point else None


def speaks_for(contract: Contract | None, rule_id: str) -> Promise | None:
    """The promise a report on `rule_id` quotes instead of the ONNX or DirectML text: for a
    framework (`own`), the promise of the rule's point; for a runtime that implements ONNX or
    DirectML, only a promise that differs from that text (a --contract or --nan-order change)."""
    if contract is None:
        return None
    promise = promise_for_rule(contract, rule_id)
    if promise is None or contract.implements == "own":
        return promise
    base = (onnx_contract if contract.implements == "onnx" else dml_contract)(
        contract.name, *([contract.profiles] if contract.profiles else []))
    return None if base.promise(promise.point) == promise else promise


#: The NaN orders `--nan-order` names, in words.
NAN_ORDERS = {
    "largest": "every NaN above every number, whatever its sign (numpy's and torch's sort order)",
    "totalorder": "IEEE 754 totalOrder: +NaN above every number, -NaN below every number",
    "smallest": "every NaN below every number, whatever its sign",
    "last": "every NaN after every number in both directions (below them for the largest K, above them for "
            "the smallest K; pyarrow's documented order)",
}


def with_nan_order(contract: Contract, order: str) -> Contract:
    """`contract` promising the NaN order `order` (NAN_ORDERS), as the run's --nan-order says."""
    if order not in NAN_ORDERS:
        raise ContractError(f"--nan-order {order!r}: expected one of {', '.join(NAN_ORDERS)}")
    return contract.replaced(nan=Promise("nan", order, f"NaN order {order}: {NAN_ORDERS[order]}.", "",
                                         "the run's --nan-order", DOCUMENTED))


def held_to(own: Contract, given=None, nan_order: str | None = None) -> Contract:
    """The contract a run holds its target to: `given` (a Contract, or a TOML file as
    `--contract FILE` names it) else the target's `own`, promising `nan_order` when given."""
    contract = own if given is None else given if isinstance(given, Contract) else load_contract(str(given))
    return with_nan_order(contract, nan_order) if nan_order else contract
