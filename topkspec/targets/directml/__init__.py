"""DirectML itself: the `directml` target, its worker and its setup (see target.py)."""
