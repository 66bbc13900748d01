"""Training-step time, torchnative against upstream torch 2.13.0, in one run (a benchmark, never
a test): forward + backward + AdamW step of small models. One process per side, taking turns
batch by batch (`sidebyside.lockstep`: each batch is `--steps` steps, garbage collection
included), ratio ours/upstream as the median of the per-batch ratios. Both sides run with one
intra-op thread (OMP_NUM_THREADS=1 for upstream, RAYON_NUM_THREADS=1 for the cpu backend;
benchmarks/sidebyside.py), so the ratio compares work, not thread counts.

BENCH_THREADS=2 gives both sides two threads. Lockstep pins its two processes to one CPU, so it
cannot measure that; and with both processes alive the waiting side's idle pool threads spin on
the other core (upstream's CNN step took 10 ms instead of 1.1). So with more than one thread the
sides run alone in turn instead (`sidebyside.alternate`: a fresh process per side and repetition,
`--batches` split into repetitions of 5 batches), and the ratio is the median of the
repetitions' ratios of median batch times.

    .venv/bin/python benchmarks/training_step.py [--batches 30] [--steps 30] [--json docs/bench-training.json]
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402
# The benchmark's models and optimizer (benchmarks/training_profile.py splits the same step).
SETUP = r"""
import json, sys, time, torch, transformers
from torch import nn
torch.manual_seed(0)
case = sys.argv[1]
if case == "mlp":
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))
    loss_fn = lambda: nn.functional.cross_entropy(m(x), y)
elif case == "cnn":
    m = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(8 * 4 * 4, 10))
    x, y = torch.randn(64, 1, 8, 8), torch.randint(0, 10, (64,))
    loss_fn = lambda: nn.functional.cross_entropy(m(x), y)
else:
    cfg = transformers.LlamaConfig(vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2)
    m = transformers.LlamaForCausalLM(cfg)
    ids = torch.randint(0, 96, (4, 32))
    loss_fn = lambda: m(input_ids=ids, labels=ids).loss
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
"""
RUNNER = SETUP + r"""
def step():
    opt.zero_grad(); loss_fn().backward(); opt.step()
for _ in range(5): step()
steps = int(sys.argv[2])
print("ready", flush=True)
for line in sys.stdin:
    t = time.perf_counter()
    for _ in range(steps): step()
    print((time.perf_counter() - t) / steps * 1e3, flush=True)
"""


# The same step run alone: `steps` steps per batch, `batches` batches, their times printed at the end.
ALONE = SETUP + r"""
def step():
    opt.zero_grad(); loss_fn().backward(); opt.step()
for _ in range(5): step()
steps, batches = int(sys.argv[2]), int(sys.argv[3])
out = []
for _ in range(batches):
    t = time.perf_counter()
    for _ in range(steps): step()
    out.append((time.perf_counter() - t) / steps * 1e3)
print(json.dumps(out))
"""


def measure(case, steps, batches, threads):
    """(ours ms, upstream ms, ratio) of one case."""
    if threads == "1":
        o, r = SB.lockstep(RUNNER, (case, steps), batches=batches, threads=threads)
        return SB.median(o), SB.median(r), SB.median([a / b for a, b in zip(o, r)])
    o, r = SB.alternate(ALONE, (case, steps, 5), reps=max(3, batches // 5), threads=threads)
    o, r = [SB.median(x) for x in o], [SB.median(x) for x in r]
    return SB.median(o), SB.median(r), SB.median([a / b for a, b in zip(o, r)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="")
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--steps", type=int, default=30, help="training steps per batch")
    ap.add_argument("--cases", default="mlp,cnn,llama-tiny")
    args = ap.parse_args()
    threads = os.environ.get("BENCH_THREADS", "1")
    rows = []
    for case in args.cases.split(","):
        mo, mr, ratio = measure(case, args.steps, args.batches, threads)
        rows.append({"case": case, "ours_ms": round(mo, 3), "upstream_ms": round(mr, 3), "ratio": round(ratio, 2)})
        print(f"{case:12s} ours {mo:8.3f} ms   upstream {mr:8.3f} ms   ratio {ratio:5.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"threads": threads, "batches": args.batches, "steps": args.steps,
                                               "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
