"""Where a training step's time goes, torchnative beside upstream torch 2.13.0 (a benchmark, never a
test): the step of benchmarks/training_step.py split into its phases (forward with graph
recording, backward, optimizer step, each timed on its own over the same steps), both sides
alternating, one intra-op thread; then, for ours, a cProfile of the whole step grouped by what
the time is spent in (the recording at the door, the engine, the derivative formulas, the meta
steps, the native door and kernels, the optimizer's and the modules' own Python), and the number
of door calls per step.

    .venv/bin/python benchmarks/training_profile.py [--reps 3] [--json docs/bench/training-profile.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402
from training_step import SETUP  # noqa: E402

PHASES = SETUP + r"""
def step(t):
    a = time.perf_counter(); opt.zero_grad(); loss = loss_fn()
    b = time.perf_counter(); loss.backward()
    c = time.perf_counter(); opt.step()
    d = time.perf_counter()
    if t is not None:
        t[0] += b - a; t[1] += c - b; t[2] += d - c
for _ in range(3): step(None)
# the first full collection after import (the whole heap: 0.2 s for ours, sooner than upstream's
# since a recorded graph leaves more objects behind) would otherwise fall on one phase of these 30
# steps; benchmarks/training_step.py's long run counts collections as they come
import gc; gc.collect()
n, t = 30, [0.0, 0.0, 0.0]
for _ in range(n): step(t)
print(json.dumps([v / n * 1e3 for v in t]))
"""

PROFILE = SETUP + r"""
import cProfile, pstats
def step():
    opt.zero_grad(); loss_fn().backward(); opt.step()
for _ in range(3): step()
import gc; gc.collect()  # as in PHASES
torch._C._tn_count_ops(True)
step()
calls = sum(torch._C._tn_op_counts().values())
torch._C._tn_count_ops(False)
pr = cProfile.Profile(); pr.enable()
for _ in range(10): step()
pr.disable()
groups = {}
def group(file, fn):
    if file == "~" and ("_tn_record" in fn or "_tn_execute" in fn):
        return "recording and engine loop, native (graph.rs, engine.rs)"
    if "autograd/record.py" in file or "autograd/graph.py" in file:
        return "recording (record.py, graph.py)"
    if "autograd/engine.py" in file:
        return "engine (engine.py)"
    if "autograd/formula" in file:
        return "derivative formulas"
    if "torchnative_core" in file:
        return "meta steps and bindings (ops/, binding/, surface/)"
    if file == "~":
        return "native door and kernels (built-ins of _C)" if "torch._C" in fn else "other built-ins"
    if "torch/optim" in file:
        return "optimizer Python (torch/optim)"
    if "torch/autograd" in file:
        return "upstream autograd Python (torch/autograd)"
    if "torch/nn" in file or "transformers" in file:
        return "module Python (torch/nn, transformers)"
    return "other Python"
st = pstats.Stats(pr)
total = 0.0
for (file, line, fn), (cc, nc, tt, ct, callers) in st.stats.items():
    g = group(file, fn)
    groups[g] = groups.get(g, 0.0) + tt
    total += tt
print(json.dumps({"door_calls": calls, "total_s": total, "groups": {k: v / total for k, v in groups.items()}}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", default="")
    ap.add_argument("--cases", default="mlp,cnn,llama-tiny")
    args = ap.parse_args()
    out = []
    for case in args.cases.split(","):
        o, u = SB.alternate(PHASES, (case,), reps=args.reps, threads="1")
        po = [SB.median([r[i] for r in o]) for i in range(3)]
        pu = [SB.median([r[i] for r in u]) for i in range(3)]
        prof = SB.run_json(SB.ours_python(), PROFILE, (case,), ours=True, threads="1")
        rec = {"case": case, "phases_ms": {"ours": po, "upstream": pu}, "door_calls_per_step": prof["door_calls"],
               "ours_profile_shares": prof["groups"]}
        out.append(rec)
        print(f"\n{case}: phase      ours ms   upstream ms   ratio")
        for name, a, b in zip(("forward", "backward", "optimizer"), po, pu):
            print(f"  {name:10s} {a:9.2f}   {b:11.2f}   {a / b:5.2f}")
        print(f"  {'step':10s} {sum(po):9.2f}   {sum(pu):11.2f}   {sum(po) / sum(pu):5.2f}")
        print(f"  door calls per step (ours): {prof['door_calls']}")
        print("  ours, cProfile of 10 steps (own time, shares):")
        for g, share in sorted(prof["groups"].items(), key=lambda kv: -kv[1]):
            print(f"    {share * 100:5.1f}%  {g}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
        print(f"\nrecord: {args.json}")


if __name__ == "__main__":
    main()
