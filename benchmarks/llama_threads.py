"""The suite's tiny Llama (build/bench/llama-h256-l4) at one and two intra-op threads
(`torch.set_num_threads`), ours and upstream alternating: prefill of 128 tokens and decode steps
with the cache, each timed by the wall clock and by the process's CPU time (on a shared machine
the wall clock also counts the wait for a core; the CPU time shows the work a thread count adds).
A benchmark, never a test.

    .venv/bin/python benchmarks/llama_threads.py [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402
import suite  # noqa: E402

PROGRAM = r"""
import json, statistics, sys, time, torch, transformers
from transformers.utils import logging
logging.set_verbosity_error()
path, nthreads = sys.argv[1], int(sys.argv[2])
torch.set_num_threads(nthreads)
m = transformers.LlamaForCausalLM.from_pretrained(path).eval()
V = m.config.vocab_size
ids = torch.tensor([[(i * 7919 + 13) % V for i in range(512)]])
out = {}
with torch.no_grad():
    m(ids[:, :128], use_cache=True)
    w, c = [], []
    for _ in range(3):
        t, p = time.perf_counter(), time.process_time(); m(ids[:, :128], use_cache=True)
        w.append(time.perf_counter() - t); c.append(time.process_time() - p)
    out["prefill128_wall_ms"] = statistics.median(w) * 1e3; out["prefill128_cpu_ms"] = statistics.median(c) * 1e3
    def decode(steps=32):
        o = m(ids[:, :16], use_cache=True)
        past, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        t, p = time.perf_counter(), time.process_time()
        for _ in range(steps):
            o = m(nxt, past_key_values=past, use_cache=True)
            past, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        return (time.perf_counter() - t) / steps * 1e3, (time.process_time() - p) / steps * 1e3
    decode()
    r = [decode() for _ in range(3)]
    out["decode_wall_ms"] = statistics.median(x[0] for x in r); out["decode_cpu_ms"] = statistics.median(x[1] for x in r)
print(json.dumps({k: round(v, 3) for k, v in out.items()}))
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    ck = suite.llama_checkpoint()
    for rep in range(args.reps):
        for n in (1, 2):
            for side, py in (("ours", SB.ours_python()), ("upstream", SB.ref_python())):
                r = subprocess.run([py, "-c", PROGRAM, str(ck), str(n)], capture_output=True, text=True,
                                   env=dict(os.environ), timeout=900)
                if r.returncode:
                    sys.exit(r.stderr[-2000:])
                print(json.dumps({"rep": rep, "side": side, "threads": n, "load": os.getloadavg()[0],
                                  **json.loads(r.stdout.strip().splitlines()[-1])}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
