"""torch.func on torchnative beside upstream torch 2.13.0 (a benchmark, never a test): per-sample
gradients of an MLP and a CNN (`vmap(grad(loss))`, the differential-privacy path), a Jacobian
(`jacrev`), forward mode (`jacfwd`) and a plain `vmap` of a small function; both sides in fresh
processes, alternating, one intra-op thread; milliseconds per call, medians, ratio ours/upstream.

    .venv/bin/python benchmarks/functorch.py [--reps 3] [--json docs/bench/functorch.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402

PROGRAM = r"""
import json, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
from torch.func import functional_call, grad, jacfwd, jacrev, vmap
torch.manual_seed(0)
torch.set_num_threads(1)
mlp = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
mp = {k: v.detach() for k, v in mlp.named_parameters()}
x, y = torch.randn(64, 32), torch.randint(0, 10, (64,))
cnn = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 13 * 13, 10))
cp = {k: v.detach() for k, v in cnn.named_parameters()}
xi, yi = torch.randn(32, 1, 28, 28), torch.randint(0, 10, (32,))
def mlp_loss(p, a, b):
    return F.cross_entropy(functional_call(mlp, p, (a.unsqueeze(0),)), b.unsqueeze(0))
def cnn_loss(p, a, b):
    return F.cross_entropy(functional_call(cnn, p, (a.unsqueeze(0),)), b.unsqueeze(0))
f = lambda a: (a.sin() @ a.T).tanh().sum(0)
cases = {
    "per-sample gradients, MLP 32-64-10, batch 64": lambda: vmap(grad(mlp_loss), in_dims=(None, 0, 0))(mp, x, y),
    "per-sample gradients, CNN (conv 8x3x3, 28x28), batch 32": lambda: vmap(grad(cnn_loss), in_dims=(None, 0, 0))(cp, xi, yi),
    "jacrev, 16x16 -> 16": lambda: jacrev(f)(x[:16, :16]),
    "jacfwd, 16x16 -> 16": lambda: jacfwd(f)(x[:16, :16]),
    "vmap of a 5-op function, batch 64": lambda: vmap(lambda a: (a * 2).sin().sum() + a.mean())(x),
}
out = {}
for name, fn in cases.items():
    fn(); fn()
    n, t0 = 0, time.perf_counter()
    while n < 3 or time.perf_counter() - t0 < 1.0:
        fn(); n += 1
    out[name] = (time.perf_counter() - t0) / n * 1e3
print(json.dumps(out))
"""


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--json", default="")
    a = p.parse_args(argv)
    ours, ref = SB.alternate(PROGRAM, reps=a.reps)
    rows = [SB.row(case, "ms", SB.median([o[case] for o in ours]), SB.median([r[case] for r in ref]))
            for case in ref[0]]
    for r in rows:
        print(f"{r['case']:58s} ours {r['ours']:9.2f} ms  upstream {r['upstream']:9.2f} ms  ratio {r['ratio']:.2f}x")
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "reps": a.reps, "threads": 1}, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
