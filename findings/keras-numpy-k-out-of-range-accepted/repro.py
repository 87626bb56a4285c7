"""keras.ops.top_k on Keras's numpy backend (Keras 3.15.1, numpy 2.4) returns another number of
elements than k asks for, where Keras's other backends give k elements or refuse.

k = 0, sorted=False: the whole axis (np.argpartition(x, -0)[..., -0:] is [..., 0:]), where
sorted=True and the jax, tensorflow and torch backends give empty outputs.
k above the axis size, sorted=True: the whole axis (np.argsort(...)[..., ::-1][..., :k]), where
the other backends refuse it. Prints `observed: ...` for each and exits 1 while either is
there, 0 once both are gone, 2 without Keras.
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
wrong = False
for k, sorted_ in ((0, False), (4, True)):
    try:
        values, indices = keras.ops.top_k(x, k, sorted=sorted_)
    except Exception as exc:
        print(f"fixed: k={k} sorted={sorted_}: refused ({type(exc).__name__}: {exc})")
        continue
    if len(values) == k:
        print(f"fixed: k={k} sorted={sorted_}: {len(values)} elements")
        continue
    wrong = True
    print(f"observed: k={k} sorted={sorted_}: {len(values)} elements, values {values.tolist()} "
          f"indices {indices.tolist()}")
sys.exit(1 if wrong else 0)
