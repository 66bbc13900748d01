"""all-MiniLM-L6-v2 on the npu device: the model loaded on CPU, moved with .to("npu"), the same
sentences as tests/test_minilm.py. Its sentence embeddings agree with upstream torch 2.13.0's
within 1e-5; the forward pass ran through ONNX Runtime as few graphs (flushes), the second forward
re-used the first one's sessions, and no operator fell back to the cpu backend.
Skips, saying why, where torchnative-npu is not installed."""

import json
import subprocess
from pathlib import Path

import pytest

from test_minilm import PROGRAM as MINILM_PROGRAM
from test_minilm import _max_diff

pytestmark = pytest.mark.runtime

REPO = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-5
MINILM_SETUP = MINILM_PROGRAM[:MINILM_PROGRAM.index("with torch.no_grad():")]
EMBED = r"""
def embed(model, enc):
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)
"""
REFERENCE = MINILM_SETUP + EMBED + r"""
print(json.dumps({"auto": embed(model, enc).tolist()}))
"""
PROGRAM = r"""
import json, sys, time, torch
from torchnative_core.plugins import RECORDS
rec = RECORDS.get("npu")
if rec is None or rec.status != "ok":
    print(json.dumps({"skip": f"npu: {rec.status}: {rec.reason}" if rec else "npu: not installed"}))
    sys.exit(0)
import torchnative, torchnative_npu as npu
""" + MINILM_SETUP + EMBED + r"""
model.to("npu")
nenc = {k: v.to("npu") for k, v in enc.items()}
runs = []
for i in range(2):
    npu.reset_stats()
    t0 = time.perf_counter()
    emb = embed(model, nenc)
    host = emb.cpu()
    runs.append({"seconds": time.perf_counter() - t0, "stats": npu.stats()})
print(json.dumps({"devices": sorted({str(p.device) for p in model.parameters()}), "emb_device": str(emb.device),
                  "npu": host.tolist(), "runs": runs, "provider": npu.provider(),
                  "fallbacks": torchnative.fallback_report()}))
"""


@pytest.fixture(scope="module")
def result():
    r = subprocess.run([str(REPO / ".venv/bin/python"), "-c", PROGRAM], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    ref = (REPO / "build/ref-python").read_text().strip()
    u = subprocess.run([ref, "-c", REFERENCE], capture_output=True, text=True, timeout=900)
    assert u.returncode == 0, u.stderr[-3000:]
    out["upstream"] = json.loads(u.stdout.strip().splitlines()[-1])["auto"]
    return out


def test_minilm_on_npu_agrees_with_upstream(result):
    assert result["devices"] == ["npu:0"] and result["emb_device"] == "npu:0"
    assert len(result["npu"]) == 6 and len(result["npu"][0]) == 384
    assert _max_diff(result["npu"], result["upstream"]) <= TOLERANCE


def test_minilm_ran_as_captured_graphs_through_onnx_runtime(result):
    first, second = (r["stats"] for r in result["runs"])
    assert result["fallbacks"] == {} and first["rejected"] == {}  # nothing ran on the cpu backend
    assert first["kernels"] > 100 and first["nodes_run"] > 300  # the operators were captured ...
    assert 1 <= first["flushes"] <= 3  # ... into a few graphs per forward, not one per operator
    assert first["sessions_created"] == first["flushes"]
    # the same forward again: the same graphs, every session from the cache
    assert second["flushes"] == first["flushes"] and second["sessions_created"] == 0
    assert second["session_hits"] == second["flushes"]
    assert result["provider"].endswith("ExecutionProvider")


def test_agreement_check_rejects_an_embedding_off_by_more_than_the_tolerance():
    ref = [[0.03324, -0.13870, 0.10113], [0.5, -0.25, 0.125]]
    bad = [row[:] for row in ref]
    bad[0][1] += 2e-5
    assert _max_diff(ref, ref) == 0.0 and _max_diff(bad, ref) > TOLERANCE
