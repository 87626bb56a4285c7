"""jax.lax.top_k ranks -0.0 below +0.0, against its own tie rule and jax's sorts.

lax.top_k's docstring: "If two elements are equal, the lower-index element appears first."
-0.0 == +0.0, and jnp.sort / jnp.argsort treat them as equal since jax PR 9178; yet
lax.top_k([-0.0, 0.0], 1) returns index 1. Prints `observed: ...` and exits 1 while it does,
0 once index 0 comes first, 2 without jax.
"""
import sys

try:
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError:
    sys.exit(2)  # jax is not installed: nothing to say

x = jnp.array([-0.0, 0.0], jnp.float32)
values, indices = lax.top_k(x, 1)
print("jax", jax.__version__, "| jnp.argsort(x, descending=True):", jnp.argsort(x, descending=True).tolist(),
      "(the equal zeros in index order)")
if indices.tolist() == [0]:
    sys.exit(print("fixed: lax.top_k([-0.0, 0.0], 1) gives index 0"))
print(f"observed: lax.top_k([-0.0, 0.0], 1) gives values {values.tolist()} indices {indices.tolist()} "
      "(expected index 0: equal elements come lower index first)")
sys.exit(1)
