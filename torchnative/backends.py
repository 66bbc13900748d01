"""`torchnative backends list` and `torchnative backends show NAME`.

Both import torch (which runs backend discovery) and read what it recorded: the plugin records of
`torchnative_core.plugins` and the core's registry of kernels. First-party plugins that are not
installed come from plugins.toml, with the pip extra that installs them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def first_party_plugins() -> list[dict]:
    """torchnative/plugins.toml, the table of first-party plugins (package data of the wheel)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # tomllib is 3.11's; tomli is the same parser, a dependency on 3.10 only
        import tomli as tomllib

    return tomllib.loads(Path(__file__).with_name("plugins.toml").read_text())["plugin"]


def _registered() -> dict:
    """{plugin: {device key: [operator, ...]}} of the kernels now registered."""
    import torch

    return torch._C._tn_registered_kernels()


STATUS_STYLE = {"ok": "green", "unavailable": "yellow", "error": "red", "blocked": "magenta", "not installed": "dim"}


def backend_rows() -> list[dict]:
    # Plugins may add costly details to their descriptor's `extra` (npu: its ONNX Runtime execution
    # providers) when this is set; `import torch` alone does not pay for them.
    os.environ.setdefault("TORCHNATIVE_BACKENDS_DETAIL", "1")
    kernels = _registered()  # imports torch first: that runs discovery, which fills RECORDS
    from torchnative_core.plugins import RECORDS

    rows = []
    for name, rec in sorted(RECORDS.items()):
        n = sum(len(v) for v in kernels.get(name, {}).values())
        rows.append({"name": name, "distribution": rec.distribution, "version": rec.version,
                     "device_keys": list(rec.device_keys), "status": rec.status, "priority": rec.priority,
                     "kernels": n, "reason": rec.reason, "extra": dict(rec.extra)})
    here = this_platform()
    for p in first_party_plugins():
        if p["name"] not in RECORDS:
            reason = (f"pip install torchnative[{p['extra']}]" if here in p["platforms"] else
                      f"not built for {here} (platforms: {', '.join(p['platforms'])})")
            rows.append({"name": p["name"], "distribution": p["distribution"], "version": None,
                         "device_keys": p["device_keys"], "status": "not installed", "priority": p["priority"],
                         "kernels": 0, "reason": reason, "extra": {}})
    return rows


def this_platform() -> str:
    """This machine in plugins.toml's platform names (linux, macos, windows, android, ios)."""
    import sys

    return {"darwin": "macos", "win32": "windows", "cygwin": "windows"}.get(sys.platform, sys.platform)


def backends_list(args) -> int:
    rows = backend_rows()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title="torchnative backends", box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True)
    for col in ("name", "device keys", "status", "priority", "kernels"):
        table.add_column(col, no_wrap=True, justify="right" if col in ("priority", "kernels") else "left")
    table.add_column("distribution", overflow="fold")
    for r in rows:
        dist = f"{r['distribution']} {r['version'] or ''}".strip() if r["distribution"] else ""
        table.add_row(r["name"], ", ".join(r["device_keys"]), Text(r["status"], style=STATUS_STYLE.get(r["status"], "")),
                      str(r["priority"]), str(r["kernels"]), dist)
    console = Console()
    console.print(table)
    # Reasons can be long (an exception's message): one line each below the table, never folded into a cell.
    for r in rows:
        if r["reason"]:
            console.print(Text.assemble((r["name"], "bold"), ": ", r["reason"]))
        if r.get("extra"):
            details = ", ".join(f"{k} {', '.join(v) if isinstance(v, list) else v}" for k, v in r["extra"].items())
            console.print(Text.assemble((r["name"], "bold"), ": ", details))
    return 0


def backend_detail(name: str) -> dict | None:
    """The list row of plugin `name` plus `operators`: {device key: sorted operator overloads}."""
    row = next((r for r in backend_rows() if r["name"] == name), None)
    if row is not None:
        per_key = _registered().get(name, {})
        row["operators"] = {key: sorted(per_key.get(key, [])) for key in dict.fromkeys([*row["device_keys"], *per_key])}
    return row


def backends_show(args) -> int:
    row = backend_detail(args.name)
    if row is None:
        known = ", ".join(r["name"] for r in backend_rows())
        print(f"torchnative: no backend named '{args.name}' (known: {known})")
        return 1
    if args.json:
        print(json.dumps(row, indent=1))
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    dist = f"{row['distribution']} {row['version'] or ''}".strip() if row["distribution"] else "no distribution"
    console.print(Text.assemble((row["name"], "bold"), f" ({dist}): ", (row["status"], STATUS_STYLE.get(row["status"], "")),
                                f" - {row['reason']}" if row["reason"] else ""))
    keys = list(row["operators"])
    ops = sorted({op for names in row["operators"].values() for op in names})
    if not ops:
        console.print("no operators registered")
        return 0
    table = Table(title=f"operators of {row['name']}: {len(ops)}")
    table.add_column("operator")
    for key in keys:
        table.add_column(key, justify="center")
    for op in ops:
        table.add_row(op, *("yes" if op in row["operators"][key] else "" for key in keys))
    console.print(table)
    return 0
