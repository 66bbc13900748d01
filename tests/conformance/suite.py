"""Orchestration of the conformance suite (never imports torch): the upstream oracle (one
process for all cases, cached on disk by the cases' source), one batch per device under our
runtime, and the verdict of one case: agree, refused (by name) or disagree."""
import hashlib
import json
import math
import os
import pathlib
import re
import subprocess
import tempfile
import tomllib

from golden import compare, harness

from . import tolerances
from .cases import CASES

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
RUNNER = HERE / "runner.py"
CACHE = REPO / "build" / "conformance"


def device_keys():
    """Every device key of a first-party plugin (torchnative/plugins.toml): cpu, vulkan, mps,
    npu. Those not installed skip, saying so."""
    table = tomllib.loads((REPO / "torchnative" / "plugins.toml").read_text())["plugin"]
    return [k for p in table for k in p["device_keys"]]


def _oracle_key(python):
    h = hashlib.sha256()
    for f in (HERE / "cases.py", RUNNER, REPO / "tests" / "golden" / "runner.py"):
        h.update(f.read_bytes())
    h.update(os.path.realpath(python).encode())
    return h.hexdigest()[:16]


def oracle():
    """Upstream torch 2.13.0's results for every case on cpu: {case id: encoded result}. Cached in
    build/conformance/oracle-<hash of cases.py, the runners and the interpreter>.json."""
    python = harness.ref_python()
    path = CACHE / f"oracle-{_oracle_key(python)}.json"
    if path.exists():
        return json.loads(path.read_text())
    batch = harness.run_batch(python, list(CASES), modules=["cpu"], runner=RUNNER)
    harness.check_reference(batch)
    bad = {k: r for k, r in batch.results.items() if r["kind"] == "harness_error"}
    if bad:
        raise harness.SetupError(f"upstream could not run conformance cases: {sorted(bad)}")
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(batch.results))
    tmp.replace(path)
    return batch.results


def plugin_rows(python=None):
    """`torchnative backends list --json` of our runtime (one process for every device)."""
    with tempfile.TemporaryDirectory() as tmp:  # cwd: nothing in the repo root shadows a package
        r = subprocess.run([python or harness.ours_python(), "-m", "torchnative", "backends", "list",
                            "--json"], capture_output=True, text=True, timeout=300, cwd=tmp)
    return json.loads(r.stdout) if r.returncode == 0 else None


def run_device(device, python=None, ids=None):
    """Our runtime's results on `device`: a golden Batch whose header says whether the device's
    plugin is usable (header["torchnative"]["status"] == "ok")."""
    return harness.run_batch(python or harness.ours_python(), list(ids or CASES),
                             modules=[device], runner=RUNNER)


def unusable(batch, device):
    """None when the device ran the cases, else the reason it could not (for pytest.skip)."""
    h = batch.header
    if h is None:
        first = next(iter(batch.results.values()), {})
        return f"our runtime could not start: {first.get('error')}"
    st = h.get("torchnative")  # None under upstream torch (no plugins: every device is its own)
    if st is not None and st.get("status") != "ok":
        return f"device '{device}': plugin {st.get('name', '')} {st.get('status')}: {st.get('reason')}"
    return None


def refusal_pattern(device):
    """A refusal by name: the core's for an operator the device has no kernel for
    (`aten.exp.default has no kernel for device 'vulkan' (...)`), or a kernel's own for a dtype it
    does not handle, naming operator and device (`"exp" not implemented for 'Double' on device
    'vulkan'`)."""
    d = re.escape(device)
    return re.compile(rf"aten\.[\w.]+ has no kernel for device '{d}'|\"[\w.]+\" not implemented for '\w+' on device '{d}'")


def verdict(ref, ours, device, case):
    """("agree" | "refused" | "disagree", detail). A NotImplementedError is a refusal only when
    it names an aten operator and the device; any other difference is a disagreement."""
    if ours["kind"] == "raised" and ref["kind"] != "raised" \
            and ours["type"] == "builtins.NotImplementedError":
        if refusal_pattern(device).search(ours["message"]):
            return "refused", ours["message"].splitlines()[0]
        return "disagree", f"NotImplementedError that does not name an operator and '{device}': " \
                           f"{ours['message'][:300]}"
    mismatch = compare.compare(ref, ours, tolerances.options(device, case.family))
    return ("agree", "") if mismatch is None else ("disagree", str(mismatch))


def float_errors(ref, ours):
    """(atol, rtol) this pair needs, measured as tests/golden/measure_tolerances.py does: the largest
    |ours - ref| where |ref| < 1, and the largest |ours - ref| / |ref| where |ref| >= 1, over the
    finite float leaves both results hold."""
    worst = [0.0, 0.0]

    def leaves(r):
        if r["kind"] == "tensor":
            return r["data"] if r["dtype"] in compare.FLOAT_DTYPES else []
        return [r["value"]] if r["kind"] == "scalar" and isinstance(r["value"], float) else []

    def walk(r, o):
        if r.get("kind") != o.get("kind"):
            return
        if r["kind"] in ("seq", "dict"):
            for a, b in zip(r["items"], o["items"]):
                walk(*((a[1], b[1]) if r["kind"] == "dict" else (a, b)))
            return
        for a, b in zip(leaves(r), leaves(o)):
            if isinstance(b, (int, float)) and math.isfinite(a) and math.isfinite(b):
                if abs(a) < 1:
                    worst[0] = max(worst[0], abs(b - a))
                else:
                    worst[1] = max(worst[1], abs(b - a) / abs(a))
    walk(ref, ours)
    return tuple(worst)
