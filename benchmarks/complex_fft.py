"""torch.fft and complex arithmetic, torchnative beside upstream torch 2.13.0 (a benchmark, never a
test): each case's best-of-5 time per call, one intra-op thread, both interpreters alternating,
the median over the repetitions.

    .venv/bin/python benchmarks/complex_fft.py [--reps 3] [--json FILE]

Upstream's CPU transforms are MKL's; ours are rustfft/realfft (backends/cpu/src/fft.rs). Complex
arithmetic here is composed from real kernels on the real view (ops/complex/arithmetic.py), upstream's
runs complex kernels.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402

CASES = {
    "fft 1-d 4096 complex64": "torch.fft.fft(c4096)",
    "fft 1-d 1000 complex64 (2^3 5^3)": "torch.fft.fft(c1000)",
    "rfft 64x1024 float32": "torch.fft.rfft(r64x1024)",
    "irfft 64x513 complex64": "torch.fft.irfft(h64x513)",
    "fft2 128x128 complex64": "torch.fft.fft2(c128x128)",
    "rfft 1-d 2^20 float64": "torch.fft.rfft(r1m)",
    "fnet mixing 8x128x256": "torch.fft.fft(torch.fft.fft(x8x128x256, dim=-1), dim=-2).real",
    "complex mul 64x1024": "c64x1024 * d64x1024",
    "complex abs 64x1024": "c64x1024.abs()",
    "rope (view_as_complex * polar) 1x8x128x64": "torch.view_as_real(torch.view_as_complex(q.reshape(1, 8, 128, 32, 2)) * freqs).flatten(3)",
}

RUNNER = r"""
import json, sys, time, torch
torch.manual_seed(0)
c = lambda *s: torch.randn(*s, dtype=torch.complex64)
c4096, c1000, c128x128 = c(4096), c(1000), c(128, 128)
r64x1024, h64x513, r1m = torch.randn(64, 1024), c(64, 513), torch.randn(2 ** 20, dtype=torch.float64)
x8x128x256 = torch.randn(8, 128, 256)
c64x1024, d64x1024 = c(64, 1024), c(64, 1024)
q = torch.randn(1, 8, 128, 64)
freqs = torch.polar(torch.ones(128, 32), torch.randn(128, 32))
stmt = compile(sys.argv[1], "<case>", "eval")
eval(stmt)
n = 1
while True:
    t = time.perf_counter()
    for _ in range(n): eval(stmt)
    if time.perf_counter() - t > 0.05: break
    n *= 2
best = 1e9
for _ in range(5):
    t = time.perf_counter()
    for _ in range(n): eval(stmt)
    best = min(best, (time.perf_counter() - t) / n)
print(json.dumps(best * 1e6))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    rows = []
    print(f"{'case':44} {'ours':>11} {'upstream':>11} {'ratio':>7}")
    for name, stmt in CASES.items():
        o, u = SB.alternate(RUNNER, (stmt,), reps=a.reps)
        mo, mu = SB.median(o), SB.median(u)
        print(f"{name:44} {mo:8.1f} us {mu:8.1f} us {mo / mu:6.2f}x")
        rows.append(SB.row(name, "us", mo, mu))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
