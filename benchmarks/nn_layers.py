"""The pooling, CTC and antialiased-resize operators of the nn layer work, torchnative against
upstream torch 2.13.0 in one run (a benchmark, never a test): each case alternates between the
two interpreters, one thread each, median of --reps runs, ratio ours/upstream.

    .venv/bin/python benchmarks/nn_layers.py [--reps 3] [--only NAME]
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402

CASES = {
    "max_pool3d 4x16x16x32x32 k3s2p1": "F.max_pool3d(v, 3, 2, 1, return_indices=True)",
    "max_pool3d fwd+bwd": "torch.autograd.grad(F.max_pool3d(vg, 3, 2, 1).sum(), vg)",
    "fractional_max_pool2d 8x16x64x64 k3": "F.fractional_max_pool2d(img, 3, output_size=(32, 32), _random_samples=s2)",
    "fractional_max_pool2d fwd+bwd": "torch.autograd.grad(F.fractional_max_pool2d(imgg, 3, output_size=(32, 32), "
                                     "_random_samples=s2).sum(), imgg)",
    "fractional_max_pool3d 2x8x16x16x16 k2": "F.fractional_max_pool3d(v[:2, :8], 2, output_size=(8, 8, 8), "
                                            "_random_samples=s3)",
    "ctc_loss T50 N16 C20 S10": "F.ctc_loss(lp, tg, il, tl)",
    "upsample bilinear AA 4x3x64x64 -> 32x32": "F.interpolate(img[:4, :3], (32, 32), mode='bilinear', antialias=True)",
    "upsample bicubic AA 4x3x64x64 -> 32x32": "F.interpolate(img[:4, :3], (32, 32), mode='bicubic', antialias=True)",
}
RUNNER = r"""
import json, sys, time, torch
import torch.nn.functional as F
g = torch.Generator().manual_seed(0)
v = torch.randn(4, 16, 16, 32, 32, generator=g)
vg = v.clone().requires_grad_()
img = torch.randn(8, 16, 64, 64, generator=g)
imgg = img.clone().requires_grad_()
s2 = torch.rand(8, 16, 2, generator=g)
s3 = torch.rand(2, 8, 3, generator=g)
lp = torch.randn(50, 16, 20, generator=g).log_softmax(2)
tg = torch.randint(1, 20, (16, 10), generator=g)
il = torch.full((16,), 50, dtype=torch.long)
tl = torch.randint(5, 11, (16,), generator=g)
stmt = compile(sys.argv[1], "<case>", "eval")
eval(stmt)
n, t0 = 0, time.perf_counter()
while n < 3 or time.perf_counter() - t0 < 0.5:
    eval(stmt)
    n += 1
print(json.dumps((time.perf_counter() - t0) / n * 1e3))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    print(f"{'case':42} {'torchnative ms':>15} {'upstream ms':>12} {'ratio':>7}")
    for name, stmt in CASES.items():
        if a.only not in name:
            continue
        o, u = SB.alternate(RUNNER, (stmt,), reps=a.reps)
        mo, mu = SB.median(o), SB.median(u)
        print(f"{name:42} {mo:15.2f} {mu:12.2f} {mo / mu:7.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
