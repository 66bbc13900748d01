"""Resident memory across 1,000 training steps: prints the RSS (bytes) after each 100 steps.
The graph must be freed after every backward, so the figures stay flat.

    python train_memory.py [keep]

`keep` holds on to every step's output (and so its graph): the leak the test must detect."""
import json
import os
import sys

import torch
from torch import nn


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.LayerNorm(128), nn.Linear(128, 10))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(32, 64)
y = torch.randint(0, 10, (32,))
keep = sys.argv[1:] == ["keep"]
kept = []
marks = []
for step in range(1, 1001):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward(retain_graph=keep)
    opt.step()
    if keep:
        kept.append(loss)
    if step % 100 == 0:
        marks.append(rss())
print(json.dumps({"rss": marks}))
