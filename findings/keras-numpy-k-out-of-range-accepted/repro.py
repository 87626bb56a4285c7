"""keras.ops.top_k on Keras's numpy backend accepts K outside 1..axis size (Keras 3.15.1, numpy 2.4).

K above the axis size: sorted=True returns the whole axis (np.argsort(...)[..., ::-1][..., :k]),
sorted=False raises (np.argpartition). K = 0: sorted=True returns empty outputs, sorted=False
returns the whole axis (np.argpartition(x, -0)[..., -0:] is [..., 0:]). Exits 1 while any is accepted, 0 once all are refused, 2 without Keras.
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
accepted = []
for k, sorted_ in ((4, True), (4, False), (0, True), (0, False)):
    try:
        values, indices = keras.ops.top_k(x, k, sorted=sorted_)
        accepted.append(f"k={k} sorted={sorted_}: values {values.tolist()} indices {indices.tolist()}")
    except Exception as exc:
        print(f"k={k} sorted={sorted_}: refused ({type(exc).__name__}: {exc})")
for line in accepted:
    print("accepted", line)
print("keras", keras.__version__, "backend", keras.backend.backend())
sys.exit(1 if accepted else 0)
