"""all_reduce bandwidth (1 KB - 64 MB) and small-message latency at worlds 2 and 4, torchnative's
process group side by side with upstream gloo (build/ref-python), in one run.

    .venv/bin/python benchmarks/distributed.py [--worlds 2,4] [--max-mb 64] [--json out.json]

Each (torch, world) runs in its own set of processes on loopback; rank 0 reports the median
over repetitions of the time per all_reduce (after a warm-up), bus bandwidth as NCCL-tests
define it for allreduce (2 (n-1)/n x bytes / time), and the latency of an all_reduce of one
float32 and of a barrier. Ratios are ours / upstream: > 1 bandwidth, < 1 latency are wins."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "distributed"))
from launcher import free_port, ours_python, ref_python  # noqa: E402

WORKER = r'''
import json, statistics, sys, time
from datetime import timedelta
import torch, torch.distributed as dist
rank, world, port, out, max_mb = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                        timeout=timedelta(seconds=300))
def timed(fn, reps):
    fn(); fn()
    samples = []
    for _ in range(reps):
        dist.barrier()
        t = time.perf_counter(); fn(); samples.append(time.perf_counter() - t)
    # every rank must agree on the figure: take the slowest rank's median
    m = torch.tensor([statistics.median(samples)], dtype=torch.float64)
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    return m.item()
res = {"bandwidth": [], "latency": {}}
size = 1024
while size <= max_mb * 2**20:
    t = torch.ones(size // 4)
    reps = max(5, min(200, int(2e8 / (size * world * 4))))
    sec = timed(lambda: dist.all_reduce(t), reps)
    res["bandwidth"].append({"bytes": size, "seconds": sec, "busbw_GBps": 2 * (world - 1) / world * size / sec / 1e9})
    size *= 4
one = torch.ones(1)
res["latency"]["all_reduce_1_float_us"] = timed(lambda: dist.all_reduce(one), 300) * 1e6
res["latency"]["barrier_us"] = timed(dist.barrier, 300) * 1e6
if rank == 0:
    json.dump(res, open(out, "w"))
dist.destroy_process_group()
'''


def run(python, world, max_mb):
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "worker.py"
        script.write_text(WORKER)
        out = Path(tmp) / "out.json"
        port = free_port()
        procs = [subprocess.Popen([python, str(script), str(r), str(world), str(port), str(out), str(max_mb)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for r in range(world)]
        try:
            errs = [p.communicate(timeout=900)[1] for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        if any(p.returncode for p in procs):
            raise RuntimeError("\n".join(e[-2000:] for e in errs))
        return json.loads(out.read_text())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worlds", default="2,4")
    ap.add_argument("--max-mb", type=float, default=64)
    ap.add_argument("--json")
    args = ap.parse_args()
    ref = ref_python()
    if ref is None:
        sys.exit("no reference torch: python3 tools/build.py --ref")
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    report = {"cpu": cpu, "cores": os.cpu_count(), "runs": []}
    print(f"CPU: {cpu} ({os.cpu_count()} cores); loopback TCP")
    for world in [int(w) for w in args.worlds.split(",")]:
        up, ours = run(ref, world, args.max_mb), run(ours_python(), world, args.max_mb)
        report["runs"].append({"world": world, "upstream": up, "ours": ours})
        print(f"\nworld {world}: all_reduce float32, bus bandwidth GB/s (ours/upstream)")
        print(f"{'bytes':>10} {'upstream':>9} {'ours':>9} {'ratio':>6}")
        for u, o in zip(up["bandwidth"], ours["bandwidth"]):
            print(f"{u['bytes']:>10} {u['busbw_GBps']:>9.3f} {o['busbw_GBps']:>9.3f} {o['busbw_GBps'] / u['busbw_GBps']:>6.2f}")
        for key in up["latency"]:
            u, o = up["latency"][key], ours["latency"][key]
            print(f"{key:>24}: upstream {u:8.1f} us, ours {o:8.1f} us, ratio {o / u:5.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
