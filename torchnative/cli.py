"""The `torchnative` command.

`torchnative demo` runs one small torch program twice, in separate processes: on torchnative's
runtime (this interpreter) and on upstream torch 2.13.0 (the reference interpreter named in
build/ref-python), and prints both results side by side. Exit code 0 only if ours ran and agreed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

DEMO_PROGRAM = r"""
import json, torch
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16), torch.nn.Linear(16, 4), torch.nn.Softmax(dim=-1)
).eval()
x = torch.linspace(-2, 2, 24).reshape(3, 8)
with torch.no_grad():
    y = model(x)
print(json.dumps({"torch": torch.__version__, "from": torch.__file__, "y": y.tolist(),
                  "argmax": y.argmax(-1).tolist()}))
"""

# float32 agreement bound for this program, from the golden harness's measured tolerances
# (docs/golden.md: float32 atol 7e-6, rtol 6e-6).
ATOL, RTOL = 7e-6, 6e-6


def _ref_python() -> str | None:
    env = os.environ.get("TORCHNATIVE_REF_PYTHON")
    if env:
        return env
    marker = Path(__file__).resolve().parents[1] / "build" / "ref-python"
    return marker.read_text().strip() if marker.exists() else None


def _run(python: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-c", DEMO_PROGRAM], capture_output=True, text=True, timeout=600)


def _flat(x):
    return [v for row in x for v in row]


def demo(_args) -> int:
    import json

    from rich.console import Console
    from rich.table import Table

    console = Console()
    ref_py = _ref_python()
    with console.status("running the program on torchnative and on upstream torch 2.13.0 ..."):
        ours = _run(sys.executable)
        ref = _run(ref_py) if ref_py else None
    if ours.returncode != 0:
        last = ours.stderr.strip().splitlines()[-1] if ours.stderr.strip() else "no output"
        console.print(f"[red]torchnative failed[/red]: {last}")
        return 1
    o = json.loads(ours.stdout)
    console.print(f"torchnative: torch {o['torch']} from {o['from']}")
    if ref is None or ref.returncode != 0:
        # The main job ran; without upstream there is nothing to compare with.
        console.print("our output:", o["y"])
        console.print("no reference interpreter to compare with (`python3 tools/build.py --ref` makes one)")
        return 0
    r = json.loads(ref.stdout)
    console.print(f"upstream:    torch {r['torch']} from {r['from']}")
    table = Table(title="A seeded Linear-GELU-LayerNorm-Linear-Softmax model, row by row")
    table.add_column("row")
    table.add_column("torchnative")
    table.add_column("upstream")
    for i, (a, b) in enumerate(zip(o["y"], r["y"])):
        table.add_row(str(i), " ".join(f"{v:.6f}" for v in a), " ".join(f"{v:.6f}" for v in b))
    console.print(table)
    diffs = [abs(a - b) for a, b in zip(_flat(o["y"]), _flat(r["y"]))]
    ok = all(d <= ATOL + RTOL * abs(b) for d, b in zip(diffs, _flat(r["y"]))) and o["argmax"] == r["argmax"]
    console.print(f"largest difference: {max(diffs):.3g}  (float32 bound: atol {ATOL:g} + rtol {RTOL:g})")
    console.print("[green]agrees with upstream[/green]" if ok else "[red]differs from upstream[/red]")
    return 0 if ok else 1


def _backends():
    from . import backends

    return backends


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="torchnative")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run a torch program on torchnative and on upstream, side by side").set_defaults(fn=demo)
    backends = sub.add_parser("backends", help="backend plugins").add_subparsers(dest="sub", required=True)
    lst = backends.add_parser("list", help="every discovered and first-party plugin, with its status")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(fn=lambda a: _backends().backends_list(a))
    show = backends.add_parser("show", help="one plugin: its status and the operators it implements per device key")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")
    show.set_defaults(fn=lambda a: _backends().backends_show(a))
    args = parser.parse_args(argv)
    return args.fn(args)
