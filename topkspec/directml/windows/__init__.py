"""The Windows stack on Linux: which DirectML.dll, Wine, vkd3d and Mesa are there and what is
missing (environment.py), the virtual display Wine needs (display.py), and the stack a portable
bundle carries (bundle_stack.py). Imports directml.cache and directml.worker, nothing above."""
