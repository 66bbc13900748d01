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
import torch
torch.manual_seed(0)
x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
w = torch.linspace(-1, 1, 8).reshape(4, 2)
y = torch.nn.functional.gelu(x @ w + 0.5)
print("torch", torch.__version__, "from", torch.__file__)
print("y =", y.tolist())
print("y.sum() =", y.sum().item())
"""


def _ref_python() -> str | None:
    env = os.environ.get("TORCHNATIVE_REF_PYTHON")
    if env:
        return env
    marker = Path(__file__).resolve().parents[1] / "build" / "ref-python"
    return marker.read_text().strip() if marker.exists() else None


def _run(python: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-c", DEMO_PROGRAM], capture_output=True, text=True, timeout=600)


def demo(_args) -> int:
    from rich.console import Console

    console = Console()
    ours = _run(sys.executable)
    ref_py = _ref_python()
    ref = _run(ref_py) if ref_py else None
    console.rule("upstream torch 2.13.0 (reference)")
    console.print(ref.stdout if ref else "no reference interpreter (run `python3 tools/build.py --ref`)")
    console.rule("torchnative")
    if ours.returncode != 0:
        last = ours.stderr.strip().splitlines()[-1] if ours.stderr.strip() else "no output"
        console.print(f"[red]failed[/red]: {last}")
        console.print("See docs/STATUS.md for how far `import torch` gets today.")
        return 1
    console.print(ours.stdout)
    same = ref is not None and ref.stdout.splitlines()[1:] == ours.stdout.splitlines()[1:]
    console.print("[green]results agree[/green]" if same else "[yellow]results differ from upstream[/yellow]")
    return 0 if same else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="torchnative")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run a torch program on torchnative and on upstream, side by side").set_defaults(fn=demo)
    args = parser.parse_args(argv)
    return args.fn(args)
