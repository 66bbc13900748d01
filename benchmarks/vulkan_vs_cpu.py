"""Vulkan against CPU: matmul and elementwise, with the host<->device transfers timed separately.

    .venv/bin/python benchmarks/vulkan_vs_cpu.py [--quick] [--json docs/bench/vulkan-vs-cpu-DATE.json]

Not a test. For each case, the median of repetitions (each repetition one call, after a warm-up;
as many as fit in --budget seconds, at least --min-reps) of:

  upstream cpu   upstream torch 2.13.0 on cpu (the reference interpreter, a subprocess, one thread)
  ours cpu       torchnative's cpu backend
  upload         x.to("vulkan") of the operands (host -> device)
  vulkan op+dl   the operator on vulkan followed by .cpu() of the result (the read-back is what
                 waits for the GPU: a launch alone may return before the work is done)
  download       .cpu() of a result that is already computed
  vulkan op      op+dl minus download: the operator itself (an estimate)

Where the only Vulkan adapter is Mesa's lavapipe (llvmpipe), "vulkan" is a CPU emulating a GPU:
the figures say what the Vulkan path costs on this machine, not what a GPU would do. The JSON
records the adapter's name so that a reader can tell.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

MM = (256, 512, 1024)
ELEMENTWISE = (("add", 1_000), ("add", 1_000_000), ("mul", 1_000_000), ("exp", 1_000), ("exp", 1_000_000))


def cases(quick):
    out = [("mm", n) for n in (MM[:2] if quick else MM)]
    return out + [c for c in ELEMENTWISE if not quick or c[1] <= 1_000_000]


def operands(torch, op, n):
    g = torch.Generator().manual_seed(0)
    if op == "mm":
        return torch.rand(n, n, generator=g) - 0.5, torch.rand(n, n, generator=g) - 0.5
    if op == "exp":
        return (torch.rand(n, generator=g) - 0.5,)
    return torch.rand(n, generator=g), torch.rand(n, generator=g)


def apply(torch, op, xs):
    if op == "mm":
        return torch.mm(*xs)
    if op == "exp":
        return xs[0].exp()
    return xs[0] + xs[1] if op == "add" else xs[0] * xs[1]


def median_time(fn, budget, min_reps):
    fn()  # warm-up (shader compilation, allocator caches)
    times, start = [], time.perf_counter()
    while len(times) < min_reps or (time.perf_counter() - start < budget and len(times) < 200):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, len(times)


def measure_cpu(torch, todo, budget, min_reps):
    rows = {}
    for op, n in todo:
        xs = operands(torch, op, n)
        rows[f"{op} {n}"] = median_time(lambda: apply(torch, op, xs), budget, min_reps)
    return rows


def measure_vulkan(torch, todo, budget, min_reps):
    rows = {}
    for op, n in todo:
        xs = operands(torch, op, n)
        key = f"{op} {n}"
        try:
            upload = median_time(lambda: [x.to("vulkan") for x in xs], budget, min_reps)
            dx = [x.to("vulkan") for x in xs]
            y = apply(torch, op, dx)
            y.cpu()
            download = median_time(lambda: y.cpu(), budget, min_reps)
            op_dl = median_time(lambda: apply(torch, op, dx).cpu(), budget, min_reps)
        except NotImplementedError as e:
            rows[key] = {"refused": str(e).splitlines()[0]}
            continue
        rows[key] = {"upload_ms": upload[0], "op_dl_ms": op_dl[0], "download_ms": download[0],
                     "op_ms": max(op_dl[0] - download[0], 0.0), "reps": op_dl[1]}
    return rows


def worker(args):
    """Runs under either torch; prints {"cpu": ..., "vulkan": ...} as JSON."""
    import torch
    torch.set_num_threads(1)
    todo = cases(args.quick)
    out = {"torch": torch.__version__, "cpu": measure_cpu(torch, todo, args.budget, args.min_reps)}
    if args.vulkan:
        from torchnative_core.plugins import RECORDS
        rec = RECORDS.get("vulkan")
        out["vulkan_status"] = [rec.status, rec.reason] if rec else ["not installed", ""]
        if rec is not None and rec.status == "ok":
            import torchnative_vulkan
            out["adapter"] = torchnative_vulkan.plugin.adapter()
            out["vulkan"] = measure_vulkan(torch, todo, args.budget, args.min_reps)
    print(json.dumps(out))


def run_worker(python, args, vulkan):
    cmd = [python, str(Path(__file__).resolve()), "--worker", "--budget", str(args.budget), "--min-reps", str(args.min_reps)]
    cmd += ["--quick"] * args.quick + ["--vulkan"] * vulkan
    r = subprocess.run(cmd, capture_output=True, text=True, cwd="/", timeout=3600)
    if r.returncode != 0:
        sys.exit(f"{python} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="mm 256/512 only")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per measurement (default 1)")
    ap.add_argument("--min-reps", type=int, default=5)
    ap.add_argument("--json", type=Path, help="write the record here (e.g. docs/bench/...json)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--vulkan", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    ref_python = (REPO / "build" / "ref-python").read_text().strip()
    load_before = os.getloadavg()
    ours = run_worker(str(REPO / ".venv" / "bin" / "python"), args, vulkan=True)
    ref = run_worker(ref_python, args, vulkan=False)
    record = {"date": time.strftime("%Y-%m-%d"), "command": " ".join(["benchmarks/vulkan_vs_cpu.py", *sys.argv[1:]]),
              "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                          "load_average_before_after": [load_before[0], os.getloadavg()[0]]},
              "adapter": ours.get("adapter"), "vulkan_status": ours.get("vulkan_status"),
              "note": "lavapipe (llvmpipe) is Mesa's CPU implementation of Vulkan: a CPU emulating a GPU",
              "threads": "cpu sides with torch.set_num_threads(1); lavapipe uses its own worker threads",
              "upstream_cpu": ref["cpu"], "ours_cpu": ours["cpu"], "vulkan": ours.get("vulkan", {})}
    print(f"adapter: {record['adapter'] or record['vulkan_status']}; load average "
          f"{record['machine']['load_average_before_after']} on {os.cpu_count()} cpus")
    print("| case | upstream cpu ms | ours cpu ms | vulkan op ms | upload ms | download ms | vulkan op+download ms "
          "| vulkan op ÷ ours cpu (>1: vulkan slower) |")
    print("|---|---|---|---|---|---|---|---|")
    for key, (cpu_ms, _) in ours["cpu"].items():
        v = record["vulkan"].get(key, {})
        up = ref["cpu"][key][0]
        if "op_ms" in v:
            print(f"| {key} | {up:.3f} | {cpu_ms:.3f} | {v['op_ms']:.3f} | {v['upload_ms']:.3f} | "
                  f"{v['download_ms']:.3f} | {v['op_dl_ms']:.3f} | {v['op_ms'] / cpu_ms:.2f}× |")
        else:
            print(f"| {key} | {up:.3f} | {cpu_ms:.3f} | {v.get('refused', 'not run')} | | | | |")
    if args.json:
        args.json.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
