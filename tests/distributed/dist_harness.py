"""Running the same distributed program under torchnative (.venv) and upstream torch
(build/ref-python), each rank its own process with a timeout, every process killed at the end."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OURS = str(REPO / ".venv" / "bin" / "python")


def ref_python() -> str:
    marker = REPO / "build" / "ref-python"
    if not marker.exists():
        pytest.fail("no reference environment: run `python3 tools/build.py --ref`")
    return marker.read_text().strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(python, args, env=None, cwd=None):
    full = dict(os.environ)
    if python != OURS:
        full.pop("PYTHONPATH", None)  # ours may be pointed at a source tree; upstream never
    full.update(env or {})
    return subprocess.Popen([python, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=full, cwd=str(cwd or REPO), start_new_session=True)


def finish(procs, timeout):
    """Each process's (returncode, stdout, stderr); whatever still runs at the deadline is killed
    (its whole session: a launcher's workers too) and reported with returncode None."""
    deadline = time.monotonic() + timeout
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(deadline - time.monotonic(), 0.1))
            results.append((p.returncode, out, err))
        except subprocess.TimeoutExpired:
            kill(p)
            out, err = p.communicate()
            results.append((None, out, err + "\n[killed at the test's deadline]"))
    return results


def kill(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, 9)
        except ProcessLookupError:
            pass


def last_json(stdout: str):
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    assert lines, f"no JSON result in output:\n{stdout[-2000:]}"
    return json.loads(lines[-1])


def differences(ref: dict, ours: dict) -> list[str]:
    return [f"{k}: upstream {ref.get(k)!r}, ours {ours.get(k)!r}" for k in sorted(set(ref) | set(ours))
            if ref.get(k) != ours.get(k)]


def run_pair(args, timeout):
    """One process under each interpreter with the same arguments; (upstream's, ours) JSON."""
    procs = [start(py, args) for py in (ref_python(), OURS)]
    results = []
    for side, (rc, out, err) in zip(("upstream", "ours"), finish(procs, timeout)):
        assert rc == 0, f"{side} exited {rc}:\n{err[-3000:]}"
        results.append(last_json(out))
    return tuple(results)


def run_both(args_for, world, timeout, env_for=None):
    """Run `world` ranks under each interpreter at once; per side, every rank's JSON result."""
    sides = {}
    procs = {}
    for side, python in (("ref", ref_python()), ("ours", OURS)):
        args = args_for(side)
        procs[side] = [start(python, args[r], env=(env_for(side, r) if env_for else None)) for r in range(world)]
    for side, ps in procs.items():
        res = finish(ps, timeout)
        for r, (rc, out, err) in enumerate(res):
            assert rc == 0, f"{side} rank {r} exited {rc}:\n{err[-3000:]}"
        sides[side] = [last_json(out) for _, out, _ in res]
    return sides["ref"], sides["ours"]

