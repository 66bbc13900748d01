"""Start a federated run as separate processes on 127.0.0.1 and always stop them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("worker.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_for() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["GLOO_SOCKET_IFNAME"] = "lo"  # gloo's pairs bind on loopback only
    env["OMP_NUM_THREADS"] = "1"
    return env


def start(python: str, cfg: dict, outdir: Path) -> list[subprocess.Popen]:
    cfg = {**cfg, "outdir": str(outdir), "port": free_port()}
    path = outdir / "config.json"
    path.write_text(json.dumps(cfg))
    return [subprocess.Popen([python, str(WORKER), str(path), str(r)], env=env_for(), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT) for r in range(cfg["world"])]


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def wait(procs: list[subprocess.Popen], timeout: float, on_tick=None) -> None:
    """Wait for every process (bounded); on_tick() runs while waiting (to inject faults)."""
    end = time.monotonic() + timeout
    try:
        while any(p.poll() is None for p in procs):
            if time.monotonic() > end:
                raise TimeoutError(f"federated run did not finish in {timeout} s: "
                                   + "; ".join(f"rank {r}: {_tail(p)}" for r, p in enumerate(procs) if p.poll() is None))
            if on_tick:
                on_tick()
            time.sleep(0.05)
    finally:
        stop(procs)


def _tail(p) -> str:
    return "still running"


def run(python: str, cfg: dict, outdir: Path, timeout: float = 90, on_tick=None) -> dict:
    """Run every rank to the end; returns {rank: result json} (absent for a rank that died)."""
    outdir.mkdir(parents=True, exist_ok=True)
    procs = start(python, cfg, outdir)
    wait(procs, timeout, on_tick=on_tick and (lambda: on_tick(procs)))
    out = {}
    for r in range(cfg["world"]):
        f = outdir / f"{r}.json"
        if f.exists():
            out[r] = json.loads(f.read_text())
    logs = {r: (p.stdout.read().decode(errors="replace") if p.stdout else "") for r, p in enumerate(procs)}
    out["logs"] = logs
    return out


def sequential(python: str, cfg: dict, outdir: Path, timeout: float = 90) -> dict:
    outdir.mkdir(parents=True, exist_ok=True)
    cfg = {**cfg, "outdir": str(outdir)}
    path = outdir / "config.json"
    path.write_text(json.dumps(cfg))
    proc = subprocess.run([python, str(WORKER), str(path), "seq"], env=env_for(), capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode:
        raise RuntimeError(f"sequential recomputation failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads((outdir / "seq.json").read_text())


def weights(outdir: Path, name) -> dict:
    import numpy as np

    with np.load(outdir / f"{name}.npz") as z:
        return {k: z[k] for k in z.files}
