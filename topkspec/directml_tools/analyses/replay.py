"""`topkspec directml replay FOLDER`: the conformance corpus's DirectML cases run on DirectML,
through the `directml` target (corpus.replay) or read by the worker itself (--native)."""
from __future__ import annotations

from topkspec.corpus.replay import case_files, replay
from topkspec.directml.client.worker_process import run_replay
from topkspec.errors import UsageError
from topkspec.targets.runtimes.directml import DirectMLTarget


def cmd_replay(args) -> int:
    """`topkspec directml replay FOLDER`: the corpus's cases on DirectML, through the target or
    (--native) the worker's own reader."""
    case_files(args.folder)  # a bad folder is bad usage before DirectML starts
    target = DirectMLTarget(adapter=args.adapter)
    try:
        ok, why = target.available()
        if not ok:
            raise UsageError(f"the directml target cannot run here: {why}")
        if args.native:
            code, output = run_replay(target.stack, args.folder, adapter=args.adapter or "auto")
            print(f"topkspec directml replay --native: {target.version()}")
            print(output, end="")
            return code
        result = replay(target, args.folder)
        print(f"topkspec directml replay: {target.version()}")
    finally:
        target.close()
    for line in result.lines():
        print(line)
    return result.exit_code
