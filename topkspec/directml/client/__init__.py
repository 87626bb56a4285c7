"""The worker processes the targets call: starting one under Wine or natively, framed calls,
crash and hang handling (worker_process.py), one DirectML TopK call and one CreateOperator
(topk_call.py), ONNX Runtime sessions in topk_ort_worker.exe
(ep_worker.py), and the owner mix-in that starts and restarts a worker (worker_owner.py).
Imports the rooms below it (worker, windows), the spec and errors; never the targets."""
