"""`torch.set_num_threads` as upstream checks it (same exception type and message, compared
with the oracle in its own process) and as the cpu backend follows it: the
`torchnative_set_num_threads` hook limits the kernels' splits (`torchnative_cpu._native.num_threads()`),
bounded by the pool's size. tests/test_activation_agreement.py shows the values following it."""

import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROGRAM = r"""
import json, torch
out = []
for v in (0, -1, 2.5, "3", True, 1, 2):
    try:
        torch.set_num_threads(v)
        out.append(["ok", torch.get_num_threads()])
    except Exception as e:
        out.append([type(e).__name__, str(e)])
print(json.dumps(out))
"""


def _run(python, code, env=None):
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, **(env or {})})
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


def test_set_num_threads_checks_like_upstream():
    ours = json.loads(_run(str(REPO / ".venv/bin/python"), PROGRAM))
    ref = json.loads(_run((REPO / "build/ref-python").read_text().strip(), PROGRAM))
    assert ours == ref


def test_cpu_backend_follows_set_num_threads():
    code = r"""
import torch, torchnative_cpu._native as n
seen = [n.num_threads()]
torch.set_num_threads(1); seen.append(n.num_threads())
torch.set_num_threads(3); seen.append(n.num_threads())  # bounded by the pool of 2
torch.set_num_threads(2); seen.append(n.num_threads())
print(seen)
"""
    assert _run(str(REPO / ".venv/bin/python"), code, {"RAYON_NUM_THREADS": "2"}) == "[2, 1, 2, 2]"
