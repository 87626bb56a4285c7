"""What the runtime targets' tests share: a result held to the reference bit for bit, and a
recorded failure's report with its standalone repro.py."""
import os
import re

import numpy as np

from topkspec import reference_topk


def bits(a) -> np.ndarray:
    """An array's bits as unsigned integers of its width (so -0.0 and NaN payloads compare)."""
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}")


def assert_exact(target, case, x):
    """target.run(case, x) returns the reference's values (bit for bit, in x's type) and
    indices (in the target's own index type, else the case's); returns them."""
    index_dtype = getattr(target, "index_dtype", None) or case.index_dtype
    values, indices = target.run(case, x)
    want_values, want_indices = reference_topk(x, axis=case.norm_axis, k=case.k, largest=case.largest)
    where = f"{case.describe()} on {np.asarray(x).tolist()}"
    assert indices.dtype == np.dtype(index_dtype), f"{where}: indices are {indices.dtype}, expected {index_dtype}"
    assert np.array_equal(indices, want_indices), \
        f"{where}: indices expected {want_indices.tolist()}, got {indices.tolist()}"
    assert values.dtype == x.dtype, f"{where}: values are {values.dtype}, expected {x.dtype}"
    assert np.array_equal(bits(values), bits(want_values)), \
        f"{where}: values expected {want_values.tolist()}, got {values.tolist()}"
    return values, indices


def recorded_report(tmp_path, target: str, case, x, *, rule="out.exact", failure_class=None, calls=None,
                    outputs=None, name="r") -> str:
    """The report folder of a failure recorded by hand (no run): `rule` broken by `target` on
    `case`, `x` (or on `calls`), as `topkspec fuzz --report-dir` would write it."""
    from topkspec.fuzz import Failure, RunResult
    from topkspec.properties import failures
    from topkspec.properties.failures import Violation
    from topkspec.report import write_report

    violation = Violation(rule, f"{rule}: recorded", failure_class=failure_class or failures.WRONG_RESULT,
                          expected="e", actual="a")
    failure = Failure(target=target, group="valid", violation=violation, case=case, x=x,
                      calls=calls or [(case, x)], outputs=outputs or [None] * len(calls or [1]))
    result = RunResult(target=target, version="test", profile=case.profile, settings="ci", seed=0,
                       max_examples=10)
    return write_report(failure, result, str(tmp_path / name), target_spec=target)


def standalone_repro(folder: str) -> str:
    """The source of a report's repro.py, held to being standalone: no topkspec, under 60 lines
    (75 for a crash or hang, whose call runs in a child process: docs/fuzzing.md)."""
    with open(os.path.join(folder, "repro.py")) as handle:
        source = handle.read()
    assert not re.search(r"^\s*(import|from) topkspec", source, re.MULTILINE), source
    limit = 75 if "subprocess" in source else 60
    assert len(source.splitlines()) < limit, f"repro.py has {len(source.splitlines())} lines"
    return source
