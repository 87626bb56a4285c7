"""The `jax` and `jax-gpu` targets: jax.lax.top_k on jax's default device, and on its first
GPU (CUDA or ROCm). Each names the device it runs on (`device_label`: CPU, or GPU with the
device's kind), in its version and in its reports.

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
from topkspec.targets.base import Rejected, Target, first_line, selects_largest
from topkspec.targets.order_key import adapter_step
from topkspec.repro.writers import ReproWriter, RuntimeStack, register_repro_writer, versions
from topkspec.targets.runtimes import contracts as runtime_contracts


def jax_smallest_key(x):
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


def _top_k_last(x, *, k: int):
    """lax.top_k on the last axis: the runtime's own call, apart from the adapter's key."""
    import jax

    return jax.lax.top_k(x, k)


_jitted: dict = {}


def _jit(fn, **options):
    """fn jitted once (compiled per shape and static arguments). jax is imported on the first
    call, not when this module loads, so the target can be listed without jax."""
    if fn not in _jitted:
        import jax

        _jitted[fn] = jax.jit(fn, **options)
    return _jitted[fn]


def jax_topk(x, *, k: int, axis: int, largest: bool):
    """(values, indices) of the K largest (or smallest) along `axis`, as numpy arrays. jax's
    own calls (moving the axis, lax.top_k) raise Rejected when jax refuses; the smallest-K
    key and the gather are the adapter's, and their failure is an AdapterError."""
    import jax.numpy as jnp

    try:
        moved = jnp.moveaxis(x, axis, -1)  # jax checks the axis
    except Exception as exc:
        raise Rejected(f"jax: {type(exc).__name__}: {exc}") from exc
    key = moved if largest else _adapter_step(lambda: _jit(jax_smallest_key)(moved), "the smallest-K key")
    try:
        values, indices = _jit(_top_k_last, static_argnames=("k",))(key, k=k)
        values, indices = np.asarray(values), np.asarray(indices)
    except Exception as exc:  # jax refused the call (K above the size, say)
        raise Rejected(f"jax: {type(exc).__name__}: {exc}") from exc
    if not largest:  # the input's own elements at the indices, not the key's
        values = _adapter_step(lambda: np.take_along_axis(np.asarray(moved), indices.astype(np.int64), axis=-1),
                               "gathering the smallest values")
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


def _adapter_step(step, what: str):
    return adapter_step(step, f"jax adapter, {what}")


class JaxTarget(Target):
    contract = runtime_contracts.JAX
    smallest_by_key = True  # lax.top_k selects the largest only: the adapter keys the smallest (module text)
    name = "jax"
    default_profile = "dml:5.0"  # one sorted form with a direction, like TOP_K1
    index_dtype = "int64"
    native = True
    validates = True  # refuses K above the size and an out-of-range axis (accepts K=0)

    def __init__(self, name: str = "jax", platform: str | None = None):
        self.name = name
        self.platform = platform  # None: jax's default device; "gpu": its first GPU

    def device(self):
        """The jax device the target runs on."""
        import jax

        return jax.devices(self.platform)[0] if self.platform else jax.devices()[0]

    def device_label(self) -> str:
        """'CPU', or 'GPU (<device kind>)' (say 'GPU (NVIDIA H200)'): what jax picked."""
        device = self.device()
        label = device.platform.upper().replace("CUDA", "GPU").replace("ROCM", "GPU")
        kind = getattr(device, "device_kind", "")
        return label if label == "CPU" or not kind else f"{label} ({kind})"

    def version(self) -> str:
        try:
            import jax
            import jaxlib
        except ImportError:
            return "not installed"
        try:
            where = self.device_label()
        except RuntimeError as exc:  # no device of the platform
            where = f"no {self.platform} device: {first_line(exc)}"
        return f"jax {jax.__version__} (jaxlib {jaxlib.__version__}, {where})"

    def available(self):
        try:
            import jax
        except ImportError as exc:
            return False, f"the jax package (pip install 'jax[cpu]'): {exc}"
        if self.platform == "gpu":
            try:
                jax.devices("gpu")
            except RuntimeError as exc:
                return False, (f"jax with a CUDA or ROCm backend (pip install 'jax[cuda12]') and a GPU: "
                               f"jax.devices('gpu') found none ({first_line(exc)})")
        return True, ""

    def run(self, case, x):
        import jax

        x = np.asarray(x)
        wide = dtypes.itemsize(dtypes.name_of(x.dtype)) == 8
        with jax.enable_x64(wide), jax.default_device(self.device()):
            values, indices = jax_topk(x, k=int(case.k), axis=int(case.axis), largest=selects_largest(case))
        return values, indices.astype(np.int64)


def _repro_fill(target, case, _spec) -> dict:
    wide = dtypes.itemsize(case.dtype) == 8
    integer = dtypes.numpy_dtype(case.dtype).kind in "iu"
    return {"integer_key": "    return ~x  # integers: bitwise not reverses the order\n" if integer else "",
            "x64": '\njax.config.update("jax_enable_x64", True)  # 64-bit types, as the adapter runs them\n'
                   if wide else ""}


def _repro_template(case) -> str:
    return "jax.tmpl" if selects_largest(case) else "jax_smallest.tmpl"


def _repro_stack(target, case, _spec=None) -> RuntimeStack:
    how = ("jax.lax.top_k on the input" if selects_largest(case) else
           "jax.lax.top_k on an order-reversing integer key, values gathered by index")
    device = target.device_label() if isinstance(target, JaxTarget) else "the default jax device"
    return RuntimeStack("JAX", "jax.lax.top_k", device, versions("jax", "jaxlib"), (how + ", jitted",))


def gpu() -> JaxTarget:
    return JaxTarget("jax-gpu", "gpu")


register_repro_writer("jax", ReproWriter(_repro_template, "numpy and jax", _repro_fill, _repro_stack),
                      target_class=JaxTarget)
