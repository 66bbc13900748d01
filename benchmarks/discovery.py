"""What backend discovery adds to `import torch` (docs/bench/2026-11-29-backend-discovery.md records a run).

Fresh interpreters, alternating two ways of importing torch:

* with discovery: as shipped; `load_backends` (entry-point scan, describe and register of every
  plugin, the cpu backend's native module and its kernel registrations included) is also timed
  from the inside;
* without: `torchnative_core.plugins` replaced by a module whose `load_backends` does nothing, so
  neither pluggy nor the hookspecs nor the scan run (torch then has no kernels).

The difference of the medians is what discovery adds; importlib.metadata is imported by upstream
torch anyway (its own `torch.backends` entry-point scan), so it is not counted against us.

    .venv/bin/python benchmarks/discovery.py [repetitions]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

PROBE = r"""
import json, sys, time, types
t0 = time.perf_counter()
spent = {"load": 0.0}
if sys.argv[1] == "with":
    import torchnative_core.plugins as P
    orig = P.load_backends
    def timed(C):
        t = time.perf_counter()
        orig(C)
        spent["load"] = time.perf_counter() - t
    P.load_backends = timed
else:
    sys.modules["torchnative_core.plugins"] = types.SimpleNamespace(load_backends=lambda C: None)
import torch
print(json.dumps({"import": time.perf_counter() - t0, "load": spent["load"], "pluggy": "pluggy" in sys.modules}))
"""


def main(reps: int) -> None:
    runs = {"with": [], "without": []}
    for _ in range(reps):
        for mode in runs:
            r = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
            runs[mode].append(json.loads(r.stdout))
    assert all(r["pluggy"] for r in runs["with"]) and not any(r["pluggy"] for r in runs["without"])
    med = {mode: statistics.median(r["import"] for r in rs) * 1e3 for mode, rs in runs.items()}
    load = statistics.median(r["load"] for r in runs["with"]) * 1e3
    print(f"median of {reps} fresh interpreters each, alternating")
    print(f"  import torch with discovery      {med['with']:7.1f} ms   (load_backends inside: {load:.1f} ms)")
    print(f"  import torch without discovery   {med['without']:7.1f} ms")
    print(f"  discovery adds                   {med['with'] - med['without']:7.1f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
