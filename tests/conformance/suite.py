"""The repository's side of the conformance suite (torchnative/conformance is the shipped part):
the upstream oracle (one process for all cases, cached on disk by the cases' source and the
interpreter), our runtime from .venv, and the first-party device keys. Never imports torch."""
import hashlib
import json
import os
import pathlib
import tomllib

from golden import harness
from torchnative import conformance
from torchnative.conformance import suite as shipped
from torchnative.conformance.cases import CASES
from torchnative.conformance.suite import (  # noqa: F401
    CPU_DIFFERS, float_errors, refusal_pattern, unusable, unusable_batch, verdict)

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACKAGE = pathlib.Path(conformance.__file__).resolve().parent
RUNNER = shipped.RUNNER
CACHE = REPO / "build" / "conformance"


def device_keys():
    """Every device key of a first-party plugin (torchnative/plugins.toml): cpu, vulkan, mps,
    npu. Those not installed skip, saying so."""
    table = tomllib.loads((REPO / "torchnative" / "plugins.toml").read_text())["plugin"]
    return [k for p in table for k in p["device_keys"]]


def _oracle_key(python):
    h = hashlib.sha256()
    for f in (PACKAGE / "cases.py", RUNNER, PACKAGE / "wire.py", REPO / "tests" / "golden" / "runner.py"):
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
    return shipped.plugin_rows(python or harness.ours_python())


def run_device(device, python=None, ids=None):
    """Our runtime's results on `device` (.venv unless TORCHNATIVE_GOLDEN_OURS says otherwise)."""
    return shipped.run_device(device, python or harness.ours_python(), ids)
