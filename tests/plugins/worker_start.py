"""A plain TopK function whose module does not load in a worker process, as
$TOPKSPEC_TEST_WORKER_START says: "raise" (an import error) or "exit" (the process ends)."""
import multiprocessing
import os

from sibling_topk import numpy_topk as topk  # noqa: F401 (the target)

if multiprocessing.parent_process() is not None:
    if os.environ.get("TOPKSPEC_TEST_WORKER_START") == "exit":
        os._exit(3)
    raise ImportError("this module does not load in a worker process")
