"""torch._C._distributed_c10d: the c10d objects torchnative supplies to upstream's
torch.distributed (stores, process groups, the DDP reducer).

Each module below defines `EXPORTS` (name -> object set on torch._C._distributed_c10d) and may
define `C_EXPORTS` (names set on torch._C itself, e.g. the Dist* exception classes). Names not
exported here stay stub placeholders (surface/placeholders.py fills them in afterwards and never
overwrites a real name).
"""

from __future__ import annotations

import importlib

# Stores and DDP (store, ddp); process group, backends and collectives add their modules here.
MODULES = ["errors", "store", "future", "process_group", "gloo", "ddp"]


def install(mod, C=None) -> None:
    for name in MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        for attr, value in getattr(module, "EXPORTS", {}).items():
            setattr(mod, attr, value)
        if C is not None:
            for attr, value in getattr(module, "C_EXPORTS", {}).items():
                setattr(C, attr, value)
