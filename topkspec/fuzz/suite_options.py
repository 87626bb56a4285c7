"""What a pytest-suite session runs (SuiteOptions): from the --topk-* options in the pytest
plugin, or from TOPKSPEC_* variables in the suite's HypoFuzz form, which
`topkspec fuzz --engine hypofuzz` sets with `environment()`. Standard library only: the
plugin imports it whenever pytest starts."""
from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class SuiteOptions:
    target: str = "onnxruntime"
    spec: str | None = None  # None: the target's own profile
    timeout: float | None = None  # None: the isolation's default
    report_dir: str | None = None
    strict_doc: bool = False
    known: str | None = None  # a file; "": the target's shipped list; None: none
    report_known: bool = False
    documents_only: bool = False
    max_axis_size: int | None = None
    max_elements: int | None = None
    contract: str | None = None  # a TOML file of what the runtime promises; None: the target's own
    nan_order: str | None = None  # largest, totalorder or smallest: the NaN order checked
    fail_on: str | None = None  # the kinds whose failures fail a group's test, "a,b" (None: every bug kind)
    # What a test does once it checked its share of the budget (fuzz.suite_share): "end" its
    # search, or "draw" on checking nothing more (for Hypothesis's statistics to count every
    # example); None: it has no share (HypoFuzz runs a test for as long as it is let run)
    at_share: str | None = None

    @classmethod
    def from_pytest(cls, getoption) -> "SuiteOptions":
        """The options of a pytest run's --topk-* options, each named after its field
        (`getoption`: its config's)."""
        options = {f.name: getoption("--topk-" + f.name.replace("_", "-"))
                   for f in fields(cls) if f.name != "at_share"}
        options["target"] = options["target"] or "onnxruntime"
        return cls(**options, at_share="draw" if getoption("hypothesis_show_statistics", False) else "end")

    @classmethod
    def from_environment(cls, environ) -> "SuiteOptions":
        """The options ENVIRONMENT's variables in `environ` give; ValueError names a variable
        that does not parse."""
        options = {}
        for variable, (option, kind, _what) in ENVIRONMENT.items():
            if variable not in environ:
                continue
            text = environ[variable]
            if kind is bool:
                if text not in ("", "0", "1"):
                    raise ValueError(f"{variable} must be 0 or 1, got {text!r}")
                options[option] = text == "1"
                continue
            try:
                options[option] = kind(text)
            except ValueError:
                raise ValueError(f"{variable} must be a number, got {text!r}") from None
        return cls(**options)

    def environment(self) -> dict:
        """The ENVIRONMENT variables that give these options back (from_environment's inverse);
        an option at its default is left out."""
        defaults = {f.name: f.default for f in fields(self)}
        env = {}
        for variable, (option, kind, _what) in ENVIRONMENT.items():
            value = getattr(self, option)
            if value != defaults[option] or option == "target":
                env[variable] = "1" if kind is bool else str(value)
        return env


def check_options(getoption) -> list:
    """The report folders made to check they can be written; ValueError names a bad option (a
    target, profile, database, contract, list of known deviations or folder that cannot be used)."""
    name, profile = getoption("--topk-target"), getoption("--topk-spec")
    report_dir = getoption("--topk-report-dir")
    if name is not None:
        from topkspec.targets.registry import get_target
        get_target(name).close()
    if profile is not None:
        from topkspec import spec
        spec.parse_profile(profile)
    if getoption("--topk-database"):  # a database that cannot be opened stops the run here
        from topkspec.fuzz.database import open_database
        open_database(getoption("--topk-database"), named=True)
    for option in ("--topk-max-axis-size", "--topk-max-elements", "--topk-max-examples", "--topk-shards"):
        if getoption(option) is not None and getoption(option) < 1:
            raise ValueError(f"{option} must be at least 1, got {getoption(option)}")
    if getoption("--topk-contract"):  # so does a contract that cannot be read
        from topkspec.spec.contracts import load_contract
        load_contract(getoption("--topk-contract"))
    from topkspec.spec.kinds import parse_fail_on
    parse_fail_on(getoption("--topk-fail-on"))
    known = getoption("--topk-known")
    if known:  # a bad file of known deviations stops the run before it starts
        from topkspec.known import load_known
        load_known(known, name or "onnxruntime")
    if report_dir:
        from topkspec.errors import writable_folder
        return writable_folder(report_dir, "cannot write reports to")
    return []


# variable -> (option, its type, what it holds): what the HypoFuzz form can be given
ENVIRONMENT = {
    "TOPKSPEC_TARGET": ("target", str, "the target (default onnxruntime)"),
    "TOPKSPEC_SPEC": ("spec", str, "the spec profile (default: the target's own)"),
    "TOPKSPEC_TIMEOUT": ("timeout", float, "seconds a call may take before it counts as a hang"),
    "TOPKSPEC_KNOWN": ("known", str, "a file of known deviations; empty: the target's shipped list"),
    "TOPKSPEC_STRICT_DOC": ("strict_doc", bool, "1: the literal DirectML text (K less than the axis size)"),
    "TOPKSPEC_DOCUMENTS_ONLY": ("documents_only", bool, "1: judge by the documents alone"),
    "TOPKSPEC_MAX_AXIS_SIZE": ("max_axis_size", int, "the longest axis an input has"),
    "TOPKSPEC_MAX_ELEMENTS": ("max_elements", int, "the most elements an input has"),
    "TOPKSPEC_CONTRACT": ("contract", str, "a TOML file of what the runtime promises (default: the target's own)"),
    "TOPKSPEC_NAN_ORDER": ("nan_order", str, "the NaN order checked: largest, totalorder or smallest"),
}
