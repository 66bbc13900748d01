"""What autograd recording adds to one call, torchnative beside upstream torch 2.13.0 (a benchmark,
never a test): each operator of a training step's forward, on a 2x16x64 float32 tensor that
requires grad, recorded and under `torch.no_grad()`, one intra-op thread, both interpreters
alternating, the median of the runs' best-of-7 per-call times.

    .venv/bin/python benchmarks/recorded_calls.py [--reps 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402

CASES = {
    "x * x": "x * x",
    "x + x": "x + x",
    "x * 2.0": "x * 2.0",
    "x.view(32, 64)": "x.view(32, 64)",
    "x.reshape(32, 64)": "x.reshape(32, 64)",
    "x.transpose(1, 2)": "x.transpose(1, 2)",
    "x.unsqueeze(1)": "x.unsqueeze(1)",
    "x[..., :32]": "x[..., :32]",
    "x.to(float32)": "x.to(torch.float32)",
    "x.to(float64)": "x.to(torch.float64)",
    "x.pow(2)": "x.pow(2)",
    "x.mean(-1, keepdim)": "x.mean(-1, keepdim=True)",
    "torch.rsqrt(x)": "torch.rsqrt(x)",
    "F.linear(x, w)": "F.linear(x, w)",
    "F.silu(x)": "F.silu(x)",
    "torch.log_softmax(x, -1)": "torch.log_softmax(x, -1)",
    "torch.cat([x, x], -1)": "torch.cat([x, x], -1)",
    "F.embedding(ids, e)": "F.embedding(ids, e)",
}

RUNNER = r"""
import json, sys, time, torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(2, 16, 64, requires_grad=True) * 1.0  # not a leaf, as inside a model
w = torch.randn(64, 64, requires_grad=True)
ids = torch.randint(0, 100, (2, 16))
e = torch.randn(100, 64, requires_grad=True)
stmt = compile(sys.argv[1], "<case>", "eval")

def best():
    for _ in range(300): eval(stmt)
    b = 1e9
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(2000): eval(stmt)
        b = min(b, (time.perf_counter() - t) / 2000)
    return b * 1e6

rec = best()
with torch.no_grad():
    plain = best()
print(json.dumps([rec, plain]))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    rows = []
    print(f"{'case':26} {'recorded: ours':>15} {'upstream':>9} {'ratio':>6}   {'no grad: ours':>14} {'upstream':>9}")
    for name, stmt in CASES.items():
        o, u = SB.alternate(RUNNER, (stmt,), reps=a.reps)
        ro, po = SB.median([r[0] for r in o]), SB.median([r[1] for r in o])
        ru, pu = SB.median([r[0] for r in u]), SB.median([r[1] for r in u])
        print(f"{name:26} {ro:12.2f} us {ru:6.2f} us {ro / ru:5.2f}x   {po:11.2f} us {pu:6.2f} us")
        rows.append(SB.row(name, "us", ro, ru, no_grad_ours=po, no_grad_upstream=pu))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
