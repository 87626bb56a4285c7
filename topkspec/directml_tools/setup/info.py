"""`topkspec directml info`: the stack `topkspec directml setup` chose (DirectML.dll, the
worker, the adapter and feature level, and under Wine the layers beneath), and whether it runs."""
from __future__ import annotations

import json

from topkspec.targets.runtimes.directml import DirectMLTarget


def cmd_info(args) -> int:
    """`topkspec directml info`: the stack setup chose, and whether it runs."""
    target = DirectMLTarget()
    try:
        ok, why = target.available()
        data = target.report_stack()
        data.update(available=ok, reason=why, device=target.device if ok else None)
    finally:
        target.close()
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(f"directml  [{'available' if ok else 'unavailable'}]  {data['summary']}")
        if not ok:
            print(f"    needs: {why}")
        for key in ("dll", "directml_file_version", "dll_chosen_by", "worker", "adapter", "feature_level",
                    "wine", "vkd3d", "mesa"):
            if data.get(key):
                print(f"    {key}: {data[key]}")
    return 0 if ok else 1
