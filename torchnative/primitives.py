"""`torchnative backends primitives`: the primitive set (the kernels the core launches, what a
backend must implement for every other operator to compose on its device) and, per device key of
every loaded backend, which of them it implements.

The set is data shipped with the core (torchnative_core/data/primitives.json), generated from the
core's code by tools/primitives.py and checked against it by tests/test_primitives.py.
"""

from __future__ import annotations

import json
from importlib import resources


def primitive_set() -> dict:
    """{"count", "required", "optional", "primitives": [{"name", "required", "found_by"}]}."""
    return json.loads(resources.files("torchnative_core.data").joinpath("primitives.json").read_text())


def coverage(data: dict | None = None) -> dict:
    """{device key: {"plugin", "implemented", "required_missing", "optional_missing"}} over the
    kernels registered now (imports torch, which loads the backends)."""
    import torch

    data = data or primitive_set()
    out = {}
    for plugin, per_key in sorted(torch._C._tn_registered_kernels().items()):
        for key, ops in sorted(per_key.items()):
            have = {o.removeprefix("aten::") for o in ops}
            rows = data["primitives"]
            out[key] = {"plugin": plugin,
                        "implemented": sum(r["name"] in have for r in rows),
                        "required_missing": [r["name"] for r in rows if r["required"] and r["name"] not in have],
                        "optional_missing": [r["name"] for r in rows if not r["required"] and r["name"] not in have]}
    return out


def backends_primitives(args) -> int:
    data = primitive_set()
    cov = coverage(data)
    if args.json:
        print(json.dumps({**data, "coverage": cov}, indent=1))
        return 0
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"{data['count']} primitives: {data['required']} required, {data['optional']} optional "
                  "(the core composes the operator when a device lacks an optional one)")
    if args.all:
        keys = list(cov)
        table = Table(box=box.SIMPLE_HEAD, show_edge=False)
        for col in ("primitive", "required", *keys):
            table.add_column(col, no_wrap=True)
        for r in data["primitives"]:
            table.add_row(r["name"], "yes" if r["required"] else "optional",
                          *("" if r["name"] in cov[k]["required_missing"] + cov[k]["optional_missing"] else "yes"
                            for k in keys))
        console.print(table)
    table = Table(title="coverage per device key", box=box.SIMPLE_HEAD, show_edge=False)
    for col in ("device key", "plugin", "implemented", "required missing", "optional missing"):
        table.add_column(col, justify="right" if col in ("implemented", "required missing", "optional missing")
                         else "left", no_wrap=True)
    for key, c in cov.items():
        table.add_row(key, c["plugin"], f"{c['implemented']}/{data['count']}", str(len(c["required_missing"])),
                      str(len(c["optional_missing"])))
    console.print(table)
    for key, c in cov.items():
        if c["required_missing"]:
            console.print(f"{key} lacks: {', '.join(c['required_missing'])}", soft_wrap=True)
    return 0


def add_parser(backends_sub) -> None:
    """`primitives` under `torchnative backends`."""
    p = backends_sub.add_parser("primitives", help="the primitive set (kernels the core launches) and which of "
                                "them each installed backend implements")
    p.add_argument("--json", action="store_true", help="the set and the coverage per device key as JSON")
    p.add_argument("--all", action="store_true", help="also one row per primitive, a column per device key")
    p.set_defaults(fn=backends_primitives)
