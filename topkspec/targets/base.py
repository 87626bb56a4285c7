"""The Target interface every runtime adapter and user plug-in implements."""
from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from typing import Callable

from topkspec.spec.case import selects_largest  # what every adapter reads of a case's direction


class Rejected(Exception):
    """The target refused an input with an error of its own (not a crash of the suite).

    Adapters raise it, chained to the runtime's exception, whenever the runtime reports an
    error for a call; the runner judges it: a rejection of an invalid descriptor is right,
    of a valid one is the failure class "rejects a valid descriptor".
    """


class AdapterError(Exception):
    """The adapter broke: its own code failed, so the call says nothing about the runtime.

    Reported as the failure class "adapter error", never as a refusal (which would pass an
    invalid case) nor as a fault of the runtime. A Target refuses with `Rejected` only: any
    other exception from `run` or `supports` is an adapter error. For plain functions see
    CallableTarget."""


def describe_error(exc: BaseException) -> str:
    """'TypeError: message (file.py:12, in function)': the exception and where it was raised."""
    import traceback

    text = f"{type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        text += f" ({last.filename}:{last.lineno}, in {last.name})"
    return text


def first_line(exc: BaseException, empty: str | None = None) -> str:
    """The first line of an exception's message (runtimes' messages run to pages of compiler
    output or stack traces); when it has none, `empty`, else its type's name."""
    text = str(exc).strip()
    if text:
        return text.splitlines()[0]
    return type(exc).__name__ if empty is None else empty


class Target:
    """A TopK implementation the suite drives.

    `run(case, x)` returns `(values, indices)` as numpy arrays, or raises `Rejected` to
    refuse the input. Everything else describes the target so a run can plan around it.
    """

    name: str = "target"
    #: profile the target is judged by when the user gives none ("onnx:11", "dml:5.0").
    default_profile: str = "dml:5.0"
    #: True when the runtime's contract (its own documentation, or ONNX's text where it
    #: implements ONNX) refuses invalid input (K above the axis size, an axis out of range),
    #: so rejection checks apply to it. It declares the promise, not the behaviour: what the
    #: runtime accepts or crashes on instead goes in its known list (K = 0, which several
    #: contracts take, included).
    validates: bool = False
    #: The spec families ("dml", "onnx") whose tables the target enforces: it also refuses
    #: a value type, index type or rank the profile leaves out. A target that does not know
    #: the profile (a plain function, a runtime with a type list of its own) is held only to
    #: refusing input no TopK can compute: K or the axis out of range.
    validates_tables: tuple = ()
    #: True when the target runs native code that may crash or hang (run it isolated).
    native: bool = False
    #: True when the target runs its runtime in a worker process of its own (the DirectML
    #: targets' native worker): a run then does not wrap it in another, native or not.
    isolates_itself: bool = False
    #: The kind of repro.py its bug reports get (repro.writers.register_repro_writer), when its
    #: class alone does not say: None takes the first registered class in its MRO, else the
    #: adapter's writer.
    repro_kind: str | None = None
    #: The least time limit per call, in seconds, the target needs (a compiler's first build of
    #: a shape): a run's --timeout below it is raised to it, so compiling is not called a hang.
    min_timeout: float = 0.0
    #: The index type the target returns: None means `case.index_dtype`; "int64" means
    #: the target always returns int64 indices (ONNX-backed runtimes, rule lower.indices),
    #: and the runner judges it on `case.with_(index_dtype="int64")`.
    index_dtype: str | None = None

    #: The Case fields `supports()` depends on, or None when it may depend on anything. A
    #: target in a worker process is then asked once per distinct value of these fields, which
    #: saves a round trip per example.
    support_fields: tuple | None = None

    #: False for a target that only judges descriptors (a validator): it has no `run`, and a
    #: run checks only that it accepts valid descriptors and refuses broken ones, all through
    #: `check_descriptor`.
    computes: bool = True
    #: The ids of the descriptor rules whose broken descriptors the target can be handed as
    #: written through `check_descriptor`, including those no Case can carry (outputs of the
    #: wrong sizes, a missing tensor field). Empty: broken descriptors reach it only as Cases,
    #: through `run`.
    descriptor_rules: frozenset = frozenset()
    #: True when the runtime selects only the largest K and the adapter answers the smallest K
    #: through an exact order-reversing key (targets.order_key): its contract says the smallest
    #: are not offered, yet those cases still run. False: a contract that offers no smallest K
    #: is never asked for it.
    smallest_by_key: bool = False
    #: How the runtime's own logging is kept out of a run's output: a callable returning a
    #: context manager (a `quiet(self)` method, or a targets.quiet.Quieting) that the run enters
    #: around each call, in the worker where the target runs in one. None: nothing to quiet.
    quiet = None
    #: The ways the adapter can pass K to the runtime, its own way first: "input" (given at run
    #: time, a graph input) and "constant" (compiled into the model, an initializer). A call
    #: asks for another by `case.k_form`; with two, the property self_k_input compares them.
    #: Empty: the adapter has one way and `case.k_form` is never set.
    k_forms: tuple = ()
    #: True when the adapter builds ONNX models and runs a case's TopK inside its graph context
    #: (Case.context, spec.graphs): valid ONNX cases then draw contexts. False: never set.
    graph_contexts: bool = False

    @property
    def contract(self):
        """What the runtime promises, point by point with sources (topkspec.spec.contracts): a
        framework declares its own documentation's (`own_contract`), an ONNX importer
        `onnx_contract`, a DirectML layer `dml_contract`. A target that declares none is held to
        the text of its default profile's family, ONNX's or DirectML's. Declare it as a class
        attribute (`contract = own_contract(...)`) or override this property."""
        from topkspec.spec.contracts import profile_contract

        return profile_contract(self.name, self.default_profile)

    def version(self) -> str:
        """The runtime's version string."""
        return "unknown"

    def available(self) -> tuple[bool, str]:
        """(True, "") when it can run here, else (False, what it needs)."""
        return True, ""

    def supports(self, case) -> str | None:
        """None when the target implements this case, else the reason it does not
        (reported as `unsupported`, never as a failure)."""
        return None

    def run(self, case, x):
        raise NotImplementedError

    def check_descriptor(self, descriptor: dict) -> dict | None:
        """The target's own verdict on a descriptor exactly as written, in the JSON form
        `spec.validate` reads (DirectML `{"Type", "FeatureLevel", "Desc"}` or an ONNX node
        `{"op_type", "opset", "X", "k", "attributes"}`, valid or broken):
        `{"accepted": bool, "detail": str}`, detail saying why in the target's words (an
        HRESULT name, an exception); more keys may follow. None when the target cannot be
        handed this descriptor at all (no struct of its API can hold it): not a verdict.

        Asked for broken descriptors that break a rule in `descriptor_rules` and, for a
        target that does not compute (`computes` False), for valid ones too. Raises nothing
        for a refusal; any exception means the adapter broke. The base class has no verdict."""
        return None

    def submit(self, case, x):
        """A function that returns `run(case, x)` (or raises what it raises). A target in
        another process starts the call here and the function waits for it, so the run can
        work in the meantime; this one makes the call when the function is called."""
        return lambda: self.run(case, x)

    def close(self) -> None:
        """Release sessions and devices."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


# Signals whose handlers the run relies on: a worker's death (SIGCHLD) is read from its exit
# status, Ctrl-C (SIGINT) and SIGTERM stop a run and keep what it found.
_KEPT_SIGNALS = tuple(getattr(signal, name) for name in ("SIGCHLD", "SIGINT", "SIGTERM") if hasattr(signal, name))


@contextmanager
def signals_kept():
    """Run the block (loading a target, asking its availability or version: what runs in the
    run's own process) and put back the handlers of SIGCHLD, SIGINT and SIGTERM as they were.
    A runtime may install its own on import: one that exits when any child dies would end the
    whole run, with no summary and no reports, the first time a worker crashed."""
    import threading

    if threading.current_thread() is not threading.main_thread():  # handlers belong to the main thread
        yield
        return
    before = {number: signal.getsignal(number) for number in _KEPT_SIGNALS}
    try:
        yield
    finally:
        for number, handler in before.items():
            if handler is not None and signal.getsignal(number) is not handler:
                signal.signal(number, handler)


def availability(target) -> tuple[bool, str]:
    """target.available(), with a runtime that fails to load for any reason (not only an
    ImportError: a native library that does not load raises OSError) counted as unavailable;
    the signal handlers the run relies on are kept (signals_kept)."""
    try:
        with signals_kept():
            return target.available()
    except Exception as exc:
        return False, f"importing its runtime failed: {type(exc).__name__}: {exc}"


def version_text(target) -> str:
    """target.version(), or why it cannot be read; signal handlers kept (signals_kept)."""
    try:
        with signals_kept():
            return target.version()
    except Exception as exc:
        return f"unknown ({type(exc).__name__}: {exc})"


def as_index_type(indices, index_dtype: str):
    """`indices` converted to `index_dtype` when every value fits exactly, else unchanged
    (so an out-of-range or negative index still shows up as what it is)."""
    import numpy as np

    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu" or indices.dtype == np.dtype(index_dtype):
        return indices
    info = np.iinfo(index_dtype)
    if indices.size and (indices.min() < info.min or indices.max() > info.max):
        return indices
    return indices.astype(index_dtype)


# Exceptions that mean a plain function is broken, not that it refuses the input, when its
# own code raises them (see CallableTarget).
PROGRAMMING_ERRORS = (NameError, AttributeError, TypeError)


def _defining_file(fn) -> str | None:
    """The source file of a function (or of a callable object's class)."""
    import inspect

    for obj in (fn, getattr(fn, "func", None), type(fn)):
        try:
            return os.path.abspath(inspect.getfile(obj))
        except (TypeError, OSError):
            continue
    return None


def user_error(fn, name: str, exc: Exception, *, caller: str) -> Exception:
    """What an exception from calling a user's plain function `fn` means, as the exception to
    raise: AdapterError for NameError, AttributeError and TypeError raised by the function's
    own code or by the call itself (the innermost frame of the traceback lies in the file
    that defines `fn`, or in `caller`, the file making the call: a signature that does not
    fit), which are bugs in the function; else the function refusing its input, `Rejected`
    (`exc` itself when it is one). The same errors raised inside a library the function
    calls are that library refusing the input."""
    import traceback

    if isinstance(exc, Rejected):
        return exc
    if isinstance(exc, PROGRAMMING_ERRORS):
        frames = traceback.extract_tb(exc.__traceback__)
        innermost = os.path.abspath(frames[-1].filename) if frames else None
        if innermost == os.path.abspath(caller) and isinstance(exc, TypeError):  # the call itself
            return AdapterError(f"{name} is broken: {_signature_mismatch(fn, name, exc)}")
        if innermost is None or innermost in (os.path.abspath(caller), _defining_file(fn)):
            return AdapterError(f"{name} is broken: {describe_error(exc)}")
    return Rejected(f"{name} raised {type(exc).__name__}: {exc}")


def function_origin(fn, origin: str | None = None) -> str:
    """Where a user's function comes from, as the user names it: the import string given
    (`./my_topk.py:topk`), else `module.qualname`, or `file.py:qualname` for a module topkspec
    loaded from a file (whose module name is its own, not the user's)."""
    if origin:
        return origin
    module = getattr(fn, "__module__", None) or "?"
    qualname = getattr(fn, "__qualname__", "?")
    if module.startswith("topkspec_plugin_"):
        path = _defining_file(fn)
        return f"{os.path.basename(path) if path else module}:{qualname}"
    return f"{module}.{qualname}"


def _signature_mismatch(fn, name: str, exc: Exception) -> str:
    """A TypeError from calling `fn` with arguments its signature does not take, located in the
    user's code: the function's definition, with the signature it has."""
    import inspect

    try:
        signature = str(inspect.signature(fn))
        line = inspect.getsourcelines(fn)[1]
    except (TypeError, ValueError, OSError):
        signature, line = "(...)", None
    where = _defining_file(fn)
    at = f" ({where}:{line}, in {getattr(fn, '__name__', name)})" if where and line else ""
    return f"{type(exc).__name__}: {exc}: the call does not fit its definition, " \
           f"{getattr(fn, '__name__', name)}{signature}{at}"


class CallableTarget(Target):
    """Wraps a plain `topk(x, *, axis, k, largest) -> (values, indices)` function.

    The function has DirectML semantics (sorted output, `axis` in 0..rank-1: a valid negative
    ONNX axis is counted from the back first, as lowering to DirectML does) and gets an invalid
    axis or K unchanged, as drawn, for it to refuse. It refuses an input by raising:
    `Rejected`, ValueError, IndexError, RuntimeError, the runtime's own error, anything.
    Except that NameError, AttributeError and TypeError raised by the function's own code
    (the innermost frame of the traceback lies in the file that defines it) or by calling it
    (a signature that does not take x, axis, k, largest) are bugs in the function: they raise
    AdapterError, as does a return value that is not a pair (values, indices) nor, where its
    contract returns no indices, an array of values (or a pair (values, None)). The same
    errors raised inside a library the function calls are the library's: an internal error
    (targets.refusal) where the case is valid, a refusal where it is not.
    Integer indices are returned as the case's index type when they fit it exactly.

    `contract` (spec.contracts) says what the function promises where it is not DirectML's
    text (a run's --contract FILE says it too, and replaces it): a function whose contract
    returns no indices returns the values alone (an array, not a pair), one that offers no
    smallest K is never asked for them, and one that never sorts is judged as a set.
    `version` is the runtime's version as reports name it: a string, or a function returning
    one (called when asked, so it may import the runtime).

    `quiet` (targets.quiet): a callable returning a context manager, such as a `Quieting`, that
    the run enters around each call to keep the runtime's own logging out of its output.
    """

    validates = True  # by raising; it cannot know the profile's tables
    native = True  # it may wrap native code that crashes: `auto` isolation runs it in a worker

    def __init__(self, fn: Callable, name: str | None = None, default_profile: str = "dml:5.0",
                 origin: str | None = None, contract=None, version=None, quiet=None):
        if not callable(fn):
            raise TypeError(f"CallableTarget needs a callable, got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or repr(fn)
        self.default_profile = default_profile
        self.origin = origin  # the import string that named it: how its version and messages show it
        self._contract = contract  # a Contract, or None for DirectML's text (sorted, both directions)
        self._version = version  # the runtime's version: a string, a function returning one, or None
        if quiet is not None:  # how its runtime is quieted: entered around each call (targets.quiet)
            self.quiet = quiet

    @property
    def contract(self):
        return self._contract if self._contract is not None else super().contract

    def version(self) -> str:
        if self._version is not None:
            return str(self._version() if callable(self._version) else self._version)
        return f"callable {function_origin(self.fn, self.origin)}"

    def run(self, case, x):
        import numpy as np

        try:
            # DirectML semantics: a valid ONNX axis lowered to 0..rank-1; an invalid axis or K
            # reaches the function unchanged for it to refuse (normalising it would blame the function).
            result = self.fn(x, axis=case.lowered_axis, k=case.k, largest=selects_largest(case))
        except Exception as exc:  # a refusal, or a bug of the function (user_error)
            judged = user_error(self.fn, self.name, exc, caller=__file__)
            if judged is exc:
                raise
            raise judged from exc
        if isinstance(result, np.ndarray):  # values only: the run judges them by the contract it
            return result, None                # holds the function to (its own, or --contract FILE)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise AdapterError(f"{self.name} returned {type(result).__name__}"
                               f"{f' of length {len(result)}' if isinstance(result, (tuple, list)) else ''}, "
                               f"not a pair (values, indices) nor an array of values")
        values, indices = result
        return np.asarray(values), None if indices is None else as_index_type(indices, case.index_dtype)
