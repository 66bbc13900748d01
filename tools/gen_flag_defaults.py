"""Record the default of every `torch._C._get_X()` flag that has a `_set_X` setter, as upstream
torch 2.13.0 reports them at import (cudnn_enabled, mkldnn_enabled, sdp switches, ...).

    $(cat build/ref-python) tools/gen_flag_defaults.py core/python/torchnative_core/data/flag_defaults.json
Values are whatever upstream returns before any setter runs; torchnative keeps them as plain
state behind the same getter/setter pair."""

import json
import sys

import torch

C = torch._C
out = {}
for name in sorted(dir(C)):
    if not name.startswith("_get_") or not hasattr(C, "_set_" + name[5:]):
        continue
    try:
        v = getattr(C, name)()
    except Exception:  # noqa: BLE001 - getters needing arguments or hardware are skipped
        continue
    if isinstance(v, (bool, int, float, str)) or v is None:
        out[name[5:]] = v
with open(sys.argv[1], "w") as f:
    json.dump({"torch": torch.__version__, "flags": out}, f, indent=1, sort_keys=True)
print(len(out), "flags")
