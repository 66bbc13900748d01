"""Backend discovery at `import torch`: the `torchnative.backends` entry-point group.

A plugin object offers a cheap descriptor (`name`, `device_keys`, `priority`, `abi_version`,
`is_available()`) and `register(registrar_capsule) -> int`. A plugin that fails to load, fails
its handshake or is unavailable is recorded and skipped, so `import torch` still works; under
`TORCHNATIVE_STRICT=1`, or when named in `TORCHNATIVE_BACKENDS` (an allow-list), it fails loudly.
`TORCHNATIVE_BLOCK` lists plugins never to load.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import metadata

GROUP = "torchnative.backends"


@dataclass
class PluginRecord:
    name: str
    distribution: str | None = None
    version: str | None = None
    device_keys: tuple = ()
    priority: int = 0
    abi_version: int | None = None
    status: str = "not loaded"  # ok | unavailable | error | blocked
    reason: str | None = None
    kernels: int = 0
    extra: dict = field(default_factory=dict)


RECORDS: dict[str, PluginRecord] = {}


def _env_list(name):
    v = os.environ.get(name, "")
    return {x.strip() for x in v.split(",") if x.strip()}


def load_backends(C) -> None:
    strict = os.environ.get("TORCHNATIVE_STRICT", "") not in ("", "0")
    allow = _env_list("TORCHNATIVE_BACKENDS")
    block = _env_list("TORCHNATIVE_BLOCK")
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        rec = PluginRecord(name=ep.name, distribution=dist.name if dist else None, version=dist.version if dist else None)
        RECORDS[ep.name] = rec
        asked = ep.name in allow
        if ep.name in block or (allow and not asked):
            rec.status, rec.reason = "blocked", "blocked by TORCHNATIVE_BLOCK" if ep.name in block else "not in TORCHNATIVE_BACKENDS"
            continue
        try:
            plugin = ep.load()
            rec.device_keys = tuple(plugin.device_keys)
            rec.priority = int(getattr(plugin, "priority", 0))
            rec.abi_version = int(plugin.abi_version)
            if rec.abi_version >> 16 != C._tn_abi_version() >> 16:
                raise ImportError(
                    f"built for torchnative ABI {rec.abi_version >> 16}.{rec.abi_version & 0xFFFF}, "
                    f"core speaks {C._tn_abi_version() >> 16}.{C._tn_abi_version() & 0xFFFF}"
                )
            ok, why = plugin.is_available()
            if not ok:
                rec.status, rec.reason = "unavailable", why
                continue
            rec.kernels = int(plugin.register(C._tn_make_registrar(ep.name)))
            rec.status = "ok"
        except Exception as e:  # noqa: BLE001 - a broken plugin must not break import torch
            rec.status, rec.reason = "error", f"{type(e).__name__}: {e}"
            if strict or asked:
                raise ImportError(f"torchnative backend '{ep.name}' failed to load: {rec.reason}") from e
