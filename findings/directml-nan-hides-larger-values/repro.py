"""Runs case.json beside this file through DirectML.dll itself, with the C harness in
topkspec's DirectML worker (topkspec/directml/worker/worker.c, the part headed "corpus
cases"): it fills a DML_TOP_K1_OPERATOR_DESC from the case, runs it on the device, and checks
what holds whatever DirectML does with NaN (indices in range and distinct, values the input's
elements at them, the non-NaN values returned the largest non-NaN inputs in order).

Exits 1 while the bug is there, 0 once it is fixed, 2 when DirectML cannot run here
(`pip install topkspec && topkspec directml setup` first; Windows, or Linux under Wine).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.exit(subprocess.call([sys.executable, "-m", "topkspec", "directml", "replay", "--native", HERE]))
