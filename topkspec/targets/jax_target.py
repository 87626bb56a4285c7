"""The `jax` target: jax.lax.top_k on the CPU backend.

lax.top_k only selects the largest. The smallest K is the largest K of an
order-reversing key, with the values then gathered from the input by index, so they are
the input's own bits. Negating is not such a key: it overflows the minimum of a signed
type, wraps unsigned types, and turns the tie -0.0 == +0.0 into two different keys. So:
- integers: bitwise not (~x == -x - 1 for signed, max - x for unsigned) reverses the
  order exactly, in the same type;
- floats: the bits as a signed integer of the same width, made monotonic in the value
  (negative numbers have their magnitude bits flipped), with both zeros mapped to 0 (they
  stay tied) and every NaN to the integer maximum, then bitwise not. All integer work: XLA
  on the CPU treats subnormals as zero in float arithmetic and comparisons, so a float
  key would tie a subnormal with zero.
So NaN comes last in the smallest form, as the reference has it.
64-bit types run with jax's x64 mode enabled for the call only.
"""
from __future__ import annotations

import numpy as np

from topkspec.spec import dtypes
from topkspec.targets.base import Rejected, Target, selects_largest


def smallest_key(x):
    """A key whose largest entries are the smallest entries of `x` (see the module text)."""
    import jax
    import jax.numpy as jnp

    if jnp.issubdtype(x.dtype, jnp.integer):
        return ~x
    width = jnp.dtype(x.dtype).itemsize * 8
    signed = jnp.dtype(f"int{width}")
    top = jnp.array(jnp.iinfo(signed).max, dtype=signed)
    as_int = jax.lax.bitcast_convert_type(x, signed)
    magnitude = as_int & top
    exponent_all_ones = jax.lax.bitcast_convert_type(jnp.array(jnp.inf, dtype=x.dtype), signed)
    monotonic = jnp.where(as_int < 0, as_int ^ top, as_int)
    monotonic = jnp.where(magnitude == 0, jnp.zeros_like(monotonic), monotonic)  # -0.0 ties +0.0
    monotonic = jnp.where(magnitude > exponent_all_ones, top, monotonic)  # every NaN on top
    return ~monotonic


def _topk(x, *, k: int, axis: int, largest: bool):
    import jax
    import jax.numpy as jnp

    moved = jnp.moveaxis(x, axis, -1)
    if largest:
        values, indices = jax.lax.top_k(moved, k)
    else:
        _, indices = jax.lax.top_k(smallest_key(moved), k)
        values = jnp.take_along_axis(moved, indices, axis=-1)
    return jnp.moveaxis(values, -1, axis), jnp.moveaxis(indices, -1, axis)


_jitted = None


def jax_topk(x, *, k: int, axis: int, largest: bool):
    """The jitted top-K (compiled per shape and static arguments). jax is imported on the
    first call, not when this module loads, so the target can be listed without jax."""
    global _jitted
    if _jitted is None:
        import jax

        _jitted = jax.jit(_topk, static_argnames=("k", "axis", "largest"))
    return _jitted(x, k=k, axis=axis, largest=largest)


class JaxTarget(Target):
    name = "jax"
    default_profile = "dml:5.0"  # one sorted form with a direction, like TOP_K1
    index_dtype = "int64"
    native = True
    validates = True  # refuses K above the size and an out-of-range axis (accepts K=0)

    def version(self) -> str:
        try:
            import jax
            import jaxlib
        except ImportError:
            return "not installed"
        return f"jax {jax.__version__} (jaxlib {jaxlib.__version__}, {jax.default_backend()})"

    def available(self):
        try:
            import jax  # noqa: F401
        except ImportError as exc:
            return False, f"the jax package (pip install 'jax[cpu]'): {exc}"
        return True, ""

    def run(self, case, x):
        import jax

        x = np.asarray(x)
        wide = dtypes.itemsize(dtypes.name_of(x.dtype)) == 8
        try:
            with jax.enable_x64(wide):
                values, indices = jax_topk(x, k=int(case.k), axis=int(case.axis),
                                           largest=selects_largest(case))
                values, indices = np.asarray(values), np.asarray(indices)
        except Exception as exc:
            raise Rejected(f"jax: {type(exc).__name__}: {exc}") from exc
        return values, indices.astype(np.int64)
