"""The operators of the suite's tiny Llama (hidden 256, MLP 688, 8 heads of 32, 4 key/value heads,
vocabulary 4096) one at a time, ours and upstream side by side, at one and two intra-op threads
(`torch.set_num_threads`): the products of a decode step (one token) and of a 128-token prefill,
with the weight transposed as `F.linear` takes it, and the small operators between them. Each case
is timed as a loop of calls (wall clock, median of 5 loops); the ratio is ours / upstream. It
names the operators that make prefill or decode slower than upstream's, which the whole-model
figures of `llama_threads.py` cannot. A benchmark, never a test.

    .venv/bin/python benchmarks/llama_ops.py [--reps 2] [--only linear,small] [--json F]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402
import suite  # noqa: E402

PROGRAM = r"""
import json, statistics, sys, time, torch
import torch.nn.functional as F
groups, nthreads = sys.argv[1].split(","), int(sys.argv[2])
torch.set_num_threads(nthreads)
torch.manual_seed(0)
H, I, HD, NH, KV, V = 256, 688, 32, 8, 4, 4096
cases = []
if "linear" in groups:
    for m in (1, 128):
        tag = "decode" if m == 1 else "prefill"
        for name, (n, k) in [("q/o", (H, H)), ("k/v", (KV * HD, H)), ("gate/up", (I, H)), ("down", (H, I)), ("lm_head", (V, H))]:
            x, w = torch.randn(m, k), torch.randn(n, k)
            cases.append((f"linear {tag} {name} {m}x{k}x{n}", lambda x=x, w=w: F.linear(x, w)))
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    o = torch.empty(64, 64)
    cases.append(("mm 64", lambda: torch.mm(a, b)))
    cases.append(("mm 64 out=", lambda: torch.mm(a, b, out=o)))
if "small" in groups:
    for m in (1, 128):
        tag = "decode" if m == 1 else "prefill"
        h, g = torch.randn(1, m, H), torch.randn(1, m, I)
        qkv = torch.randn(1, m, NH, HD)
        cases.append((f"silu {tag} {m}x{I}", lambda g=g: F.silu(g)))
        cases.append((f"mul {tag} {m}x{I}", lambda g=g: g * g))
        cases.append((f"rmsnorm pow+mean {tag} {m}x{H}", lambda h=h: h.pow(2).mean(-1, keepdim=True)))
        cases.append((f"rsqrt+mul {tag} {m}x{H}", lambda h=h: h * torch.rsqrt(h.abs() + 1e-6)))
        cases.append((f"slice last dim {tag}", lambda q=qkv: q[..., : HD // 2]))
        cases.append((f"rotate_half {tag}", lambda q=qkv: torch.cat((-q[..., HD // 2:], q[..., : HD // 2]), dim=-1)))
        cases.append((f"sum.dim {tag} {m}x{H}", lambda h=h: h.sum(-1)))
        cases.append((f"transpose+reshape {tag}", lambda q=qkv, m=m: q.transpose(1, 2).reshape(1, NH, m, HD)))
    for L in (16, 128):
        q = torch.randn(1, NH, 1 if L == 16 else 128, HD)
        k, v = torch.randn(1, NH, L, HD), torch.randn(1, NH, L, HD)
        cases.append((f"sdpa q{q.shape[2]} kv{L}", lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v, is_causal=q.shape[2] > 1)))
if "train" in groups:
    # the training benchmark's tiny Llama (benchmarks/training_step.py: batch 4, 32 tokens, 4 heads of
    # 16, MLP 128, vocabulary 96): its attention kernels and the backward kernels of silu and the
    # embedding, called as autograd calls them
    q, k, v = (torch.randn(4, 4, 32, 16) for _ in range(3))
    o, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, True)
    go = torch.randn_like(o)
    cases.append(("train sdpa forward 4x4x32x16", lambda: torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, True)))
    cases.append(("train sdpa backward 4x4x32x16", lambda: torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(go, q, k, v, o, lse, 0.0, True)))
    xs, gs = torch.randn(4, 32, 128), torch.randn(4, 32, 128)
    cases.append(("train silu_backward 4x32x128", lambda: torch.ops.aten.silu_backward(gs, xs)))
    rows, ids = torch.randn(128, 64), torch.randint(0, 96, (128,))
    cases.append(("train embedding backward 128 rows of 64", lambda: torch.zeros(96, 64).index_add_(0, ids, rows)))
out = {}
with torch.no_grad():
    for name, f in cases:
        for _ in range(50):
            f()
        t = time.perf_counter()
        f()
        once = time.perf_counter() - t
        n = max(20, min(2000, int(0.02 / max(once, 1e-7))))
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n):
                f()
            ts.append((time.perf_counter() - t) / n * 1e6)
        out[name] = statistics.median(ts)
print(json.dumps(out))
"""

GROUPS = ("linear", "small", "train")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2, help="alternating runs per side (medians are reported)")
    ap.add_argument("--only", default=",".join(GROUPS), help="comma-separated groups: " + ", ".join(GROUPS))
    ap.add_argument("--threads", default="1,2", help="comma-separated intra-op thread counts")
    ap.add_argument("--json", default="", help="also write the rows here")
    args = ap.parse_args(argv)
    rows = []
    for th in args.threads.split(","):
        o, u = SB.alternate(PROGRAM, (args.only, th), reps=args.reps, threads=th)
        for case in o[0]:
            row = SB.row(case, "us", SB.median([r[case] for r in o]), SB.median([r[case] for r in u]), threads=int(th))
            rows.append(row)
            print(f"{th} thread(s)  {case:42s} ours {row['ours']:9.2f} us  upstream {row['upstream']:9.2f} us  "
                  f"{row['ratio']:.2f}x", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": suite.cpu_info(), "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
