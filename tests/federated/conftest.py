"""Both sides for the federated tests: upstream torch 2.13.0 with gloo, and ours (.venv).

Ours is probed once: a two-process gloo group with isend/irecv and new_group. Until
torch.distributed works on our runtime the `ours` cases skip with the probe's error, which names
what is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import harness  # noqa: E402

REPO = harness.REPO
PROBE = r"""
import datetime, sys, torch, torch.distributed as dist
rank, port = int(sys.argv[1]), sys.argv[2]
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=20))
g = dist.new_group([0, 1])
t = torch.arange(4, dtype=torch.uint8) if rank == 1 else torch.zeros(4, dtype=torch.uint8)
w = dist.isend(t, 0, group=g) if rank == 1 else dist.irecv(t, 1, group=g)
w.wait()
assert t.tolist() == [0, 1, 2, 3], t.tolist()
"""
_probe_result = {}


def _ref_python() -> str | None:
    f = REPO / "build" / "ref-python"
    return f.read_text().strip() if f.exists() else None


def probe(python: str) -> str | None:
    """None when this interpreter's torch.distributed carries the engine's messages, else why not."""
    if python in _probe_result:
        return _probe_result[python]
    port = harness.free_port()
    procs = [subprocess.Popen([python, "-c", PROBE, str(r), str(port)], env=harness.env_for(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for r in (0, 1)]
    why = None
    try:
        for p in procs:
            out, _ = p.communicate(timeout=60)
            if p.returncode:
                lines = [ln for ln in out.decode(errors="replace").splitlines() if ln.strip()]
                why = why or (lines[-1] if lines else f"exit {p.returncode}")
    except subprocess.TimeoutExpired:
        why = "the probe did not finish in 60 s"
    finally:
        harness.stop(procs)
    _probe_result[python] = why
    return why


@pytest.fixture(params=["upstream", "ours"])
def side(request):
    """The interpreter a federated run uses."""
    if request.param == "upstream":
        python = _ref_python()
        if python is None:
            pytest.skip("no reference interpreter (python3 tools/build.py --ref makes build/ref-python)")
    else:
        python = str(REPO / ".venv" / "bin" / "python")
    why = probe(python)
    if why:
        pytest.skip(f"torch.distributed on {request.param} cannot run the engine yet: {why}")
    return python
