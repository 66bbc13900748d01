"""Per-call overhead, torchnative against upstream torch 2.13.0, in one run (a benchmark, never a
test). Each case runs in both interpreters, alternating, median of several repetitions.

    .venv/bin/python benchmarks/overhead.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402

CASES = {
    "x + y (1 element)": "x + y",
    "x.view(1)": "x.view(1)",
    "x[0]": "x[0]",
    "F.linear 4x4": "F.linear(a, w)",
}
RUNNER = r"""
import json, sys, time, torch
import torch.nn.functional as F
x = torch.ones(1); y = torch.ones(1); a = torch.ones(4, 4); w = torch.ones(4, 4)
stmt = compile(sys.argv[1], "<case>", "eval")
for _ in range(300): eval(stmt)
n = 3000
t = time.perf_counter()
for _ in range(n): eval(stmt)
print(json.dumps((time.perf_counter() - t) / n * 1e6))
"""


def main():
    print(f"{'case':24} {'torchnative us':>15} {'upstream us':>12} {'ratio':>7}")
    for name, stmt in CASES.items():
        o, u = SB.alternate(RUNNER, (stmt,), reps=3)
        mo, mu = SB.median(o), SB.median(u)
        print(f"{name:24} {mo:15.2f} {mu:12.2f} {mo / mu:7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
