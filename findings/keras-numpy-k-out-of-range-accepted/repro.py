"""keras.ops.top_k on Keras's numpy backend (Keras 3.15.1, numpy 2.4) gives two answers to one k:
`sorted` decides how many elements come back.

x = [1.0, 3.0, 2.0], k = 0:
- call 1, sorted=True: empty outputs (as the jax, tensorflow and torch backends give);
- call 2, sorted=False: the whole axis, three elements (np.argpartition(x, -0)[..., -0:] is
  [..., 0:]).
`sorted` orders the output; it does not choose how many elements there are. Keras documents no
range for k, so either answer alone could stand; both for one k cannot. Prints both calls, then
`observed: ...`, and exits 1 while they differ, 0 once they agree, 2 without Keras. (k above the
axis size, which this backend clamps and the others refuse, is shown as `also: ...`: Keras's
documents do not say which, so it is a difference between backends, not counted here.)
"""
import os
import sys

os.environ["KERAS_BACKEND"] = "numpy"
try:
    import keras
except ImportError:
    sys.exit(2)  # Keras is not installed: nothing to say
import numpy as np

x = np.array([1.0, 3.0, 2.0], np.float32)
print("keras", keras.__version__, "backend", keras.backend.backend())


def top_k(k, sorted_):
    try:
        values, indices = keras.ops.top_k(x, k, sorted=sorted_)
    except Exception as exc:
        return f"refused ({type(exc).__name__})"
    return f"{len(values)} elements, values {values.tolist()} indices {indices.tolist()}"


first, second = top_k(0, True), top_k(0, False)
print("call 1: top_k([1, 3, 2], k=0, sorted=True):", first)
print("call 2: top_k([1, 3, 2], k=0, sorted=False):", second)
print("also: top_k([1, 3, 2], k=4, sorted=True):", top_k(4, True))
if first == second:
    sys.exit(print("fixed: k = 0 gives", first, "whatever sorted says"))
print(f"observed: k = 0 gives {first!r} sorted and {second!r} unsorted")
sys.exit(1)
