"""all-MiniLM-L6-v2 on npu against the cpu backend: embeddings per second and the graph figures.

    .venv/bin/python backends/npu/tools/minilm.py [--runs 5]

Loads the checkpoint of tests/test_minilm.py (6 sentences, padded to 19 tokens), runs the forward
and the mean pooling on cpu and then on npu (the model moved with .to("npu")), `--runs` times each
after one warm-up, and prints one JSON object: the median seconds per forward on each device,
sentence embeddings per second, the largest difference between the two devices' embeddings,
and npu's counters for the timed runs (graphs flushed, ONNX nodes run, sessions created and
cache hits, operators that fell back). docs/npu.md quotes it.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))

import torch  # noqa: E402

import torchnative  # noqa: E402
import torchnative_npu as npu  # noqa: E402
from test_minilm import PROGRAM  # noqa: E402

_setup: dict = {}
exec(PROGRAM[:PROGRAM.index("with torch.no_grad():")], _setup)  # tokenizer, model, enc, sentences
model, enc = _setup["model"], _setup["enc"]


def embed(model, enc):
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1).cpu()


def timed(model, enc, runs):
    first_t = time.perf_counter()
    out = embed(model, enc)
    first = time.perf_counter() - first_t
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        embed(model, enc)
        times.append(time.perf_counter() - t)
    return out, first, statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    n = enc["input_ids"].shape[0]
    cpu, cpu_first, cpu_s = timed(model, enc, args.runs)
    model.to("npu")
    nenc = {k: v.to("npu") for k, v in enc.items()}
    npu.reset_stats()
    t = time.perf_counter()
    ours = embed(model, nenc)
    npu_first = time.perf_counter() - t
    first_stats = npu.stats()
    npu.reset_stats()
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        embed(model, nenc)
        times.append(time.perf_counter() - t)
    st = npu.stats()
    npu_s = statistics.median(times)
    print(json.dumps({
        "sentences": n, "tokens": list(enc["input_ids"].shape), "runs": args.runs,
        "cpu_seconds": round(cpu_s, 4), "npu_seconds": round(npu_s, 4),
        "cpu_first_seconds": round(cpu_first, 4), "npu_first_seconds": round(npu_first, 4),
        "cpu_embeddings_per_s": round(n / cpu_s, 1), "npu_embeddings_per_s": round(n / npu_s, 1),
        "max_abs_diff": float((ours - cpu).abs().max()), "provider": npu.provider(),
        "first_forward": {k: first_stats[k] for k in ("flushes", "nodes_run", "kernels", "sessions_created")},
        "timed_forwards": {k: st[k] for k in ("flushes", "nodes_run", "kernels", "sessions_created", "session_hits")},
        "session_hit_rate": round(st["session_hits"] / max(st["flushes"], 1), 3),
        "fallbacks": torchnative.fallback_report()}, indent=1))


if __name__ == "__main__":
    main()
