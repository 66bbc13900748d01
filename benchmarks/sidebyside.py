"""Shared machinery of the side-by-side benchmarks (overhead.py, training_step.py, suite.py):
the two interpreters, the thread setting, running a measuring program in a fresh process of
either and reading the JSON it prints last, and alternating repetitions.

Ours is `.venv/bin/python` (a PYTHONPATH in the environment reaches ours only, so a working
tree's Python half can be measured without reinstalling); upstream is the reference
environment named by `build/ref-python` (else `~/.cache/torchnative/ref-2.13.0/bin/python`).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def ours_python() -> str:
    return str(REPO / ".venv/bin/python")


def ref_python() -> str:
    f = REPO / "build/ref-python"
    if f.exists():
        return f.read_text().strip()
    return str(Path.home() / ".cache/torchnative/ref-2.13.0/bin/python")


def thread_env(threads: str | None, ours: bool) -> dict:
    """The environment of one measuring process. `threads` is the intra-op thread count for both
    sides (OMP_NUM_THREADS for upstream's OpenMP pool, RAYON_NUM_THREADS for the cpu backend's
    rayon pool), or None for each side's default."""
    env = dict(os.environ)
    if not ours:
        env.pop("PYTHONPATH", None)
    for k in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(k, None)
    if threads is not None:
        env["OMP_NUM_THREADS"] = env["RAYON_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    env["TOKENIZERS_PARALLELISM"] = "false"
    return env


def run_json(python: str, program: str, args=(), *, ours: bool, threads: str | None = "1", timeout: float = 1800):
    """Runs `program` (a `python -c` string) in a fresh interpreter and returns the JSON value of
    its last output line; a failure raises with the program's stderr tail."""
    r = subprocess.run([python, "-c", program, *map(str, args)], capture_output=True, text=True,
                       env=thread_env(threads, ours), timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{python} failed ({r.returncode}):\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def alternate(program: str, args=(), *, reps: int, threads: str | None = "1", timeout: float = 1800):
    """`reps` runs of `program` on each side, alternating ours and upstream so that a change of
    load on the shared machine hits both alike. Returns (ours results, upstream results)."""
    o, u = [], []
    for _ in range(reps):
        o.append(run_json(ours_python(), program, args, ours=True, threads=threads, timeout=timeout))
        u.append(run_json(ref_python(), program, args, ours=False, threads=threads, timeout=timeout))
    return o, u


def lockstep(program: str, args=(), *, batches: int, threads: str | None = "1", timeout: float = 1800):
    """One long-lived process per side running `program`, which prints "ready" once set up, then
    for each line `n` read from stdin does `n` units of work and prints their mean time. The two
    sides take turns batch by batch, so a change of the shared machine's speed (which moved
    upstream's own figures by 30% within minutes on the 2-core KVM machines) hits both alike
    within a batch. Both processes are pinned to the same CPU (they never run at once), so a
    difference between the machine's CPUs does not fall on one side. Returns (ours per batch,
    upstream per batch); the median of the per-batch ratios is the figure to read."""
    cpu = max(os.sched_getaffinity(0))
    procs = []
    for python, ours in ((ours_python(), True), (ref_python(), False)):
        p = subprocess.Popen([python, "-c", program, *map(str, args)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=thread_env(threads, ours),
                             preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{python} did not start the benchmark program")
        procs.append(p)
    results = ([], [])
    try:
        for _ in range(batches):
            for p, out in zip(procs, results):
                p.stdin.write("1\n")
                p.stdin.flush()
                out.append(float(p.stdout.readline()))
    finally:
        for p in procs:
            p.stdin.close()
            p.wait(timeout=timeout)
    return results


def median(xs):
    return statistics.median(xs)


def row(case: str, unit: str, ours: float, upstream: float, **extra) -> dict:
    """One result: medians and the ratio ours/upstream."""
    return {"case": case, "unit": unit, "ours": ours, "upstream": upstream,
            "ratio": ours / upstream if upstream else None, **extra}
