"""Runs a program of tests/programs/ that writes JSON (on the reference interpreter or ours) and
returns what it wrote; shared by the tests that compare such outputs side by side. Also the
same for inline programs that exchange numpy arrays (npz files)."""

import json
import subprocess
from pathlib import Path


def run_json(python, program, out, *extra, key="results", timeout=600):
    p = subprocess.run([python, str(program), str(out), *extra], capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads(out.read_text())
    return data if key is None else data[key]


def run_json_side_by_side(program, tmp, timeout=600):
    """`program` (writes JSON to argv[1]) run on ours and on the reference: (ours, ref)."""
    repo = Path(__file__).resolve().parents[1]
    ours = run_json(str(repo / ".venv/bin/python"), program, tmp / "ours.json", key=None, timeout=timeout)
    ref = run_json((repo / "build/ref-python").read_text().strip(), program, tmp / "ref.json", key=None, timeout=timeout)
    return ours, ref


def run_npz_side_by_side(source, inputs, tmp, timeout=600):
    """Runs `source` (reads the npz of argv[1], writes an npz to argv[2]) on ours and on the
    reference with the same `inputs`; returns (ours, ref) as dicts of arrays."""
    import numpy as np

    repo = Path(__file__).resolve().parents[1]
    inp = tmp / "in.npz"
    np.savez(inp, **inputs)
    outs = []
    for tag, python in (("ours", str(repo / ".venv/bin/python")), ("ref", (repo / "build/ref-python").read_text().strip())):
        out = tmp / f"{tag}.npz"
        p = subprocess.run([python, "-c", source, str(inp), str(out)], capture_output=True, text=True, timeout=timeout)
        assert p.returncode == 0, p.stderr[-3000:]
        outs.append(dict(np.load(out)))
    return tuple(outs)


def array_disagreements(ours, ref):
    """Every array of `ref` (upstream's) against `ours`: integers and booleans equal, others within
    1e-5 of the largest magnitude (at least 1), shapes and dtypes equal, no key on one side only."""
    import numpy as np

    bad = []
    for k, y in ref.items():
        x = ours.get(k)
        if x is None:
            bad.append(f"{k}: missing")
        elif x.shape != y.shape or x.dtype != y.dtype:
            bad.append(f"{k}: {x.shape} {x.dtype} vs upstream {y.shape} {y.dtype}")
        elif x.dtype.kind in "biu":
            if not np.array_equal(x, y):
                bad.append(f"{k}: values differ")
        elif x.size:
            d = float(np.abs(x.astype(np.float64) - y).max())
            if not d <= 1e-5 * max(1.0, float(np.abs(y).max())):
                bad.append(f"{k}: differs by {d:.3g}")
    return bad + [f"{k}: not on upstream's side" for k in ours if k not in ref]


def described_disagreements(ours, ref, tol):
    """Cases of `ref` that `ours` does not reproduce, for programs writing per case either
    {"dtype", "shape", "values"} (values within `tol[dtype]`, absolute), a list of those, another
    JSON value, or {"error", "message"} (compared exactly)."""
    import numpy as np

    def differs(a, b):
        if isinstance(b, list):
            return not isinstance(a, list) or len(a) != len(b) or any(differs(x, y) for x, y in zip(a, b))
        if not isinstance(b, dict) or "values" not in b or not isinstance(a, dict) or "values" not in a:
            return a != b
        if (a["dtype"], a["shape"]) != (b["dtype"], b["shape"]):
            return True
        x, y = np.array(a["values"]), np.array(b["values"])
        return not np.allclose(x, y, rtol=0, atol=tol.get(b["dtype"], 0), equal_nan=True)

    return [f"{k}: ours {json.dumps(ours.get(k))[:160]}, upstream {json.dumps(v)[:160]}"
            for k, v in ref.items() if differs(ours.get(k), v)]
