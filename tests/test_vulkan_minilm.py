"""A real model on the vulkan device: all-MiniLM-L6-v2 loaded on CPU, moved with .to("vulkan"),
runs the same sentences as tests/test_minilm.py; its sentence embeddings agree with the CPU's
within 1e-4. The CPU fallback stays off, so an operator vulkan lacks fails this test by name.
Skips, saying why, where the vulkan backend is not installed or finds no Vulkan adapter."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from test_minilm import PROGRAM as MINILM_PROGRAM
from test_minilm import _max_diff

pytestmark = pytest.mark.runtime

REPO = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-4
REFUSAL = re.compile(r"NotImplementedError: (aten\.[\w.]+ has no kernel for device 'vulkan'|"
                     r"\"[\w.]+\" not implemented for '\w+' on device 'vulkan')")

# tests/test_minilm.py's program up to the forward pass: imports, the checkpoint, the same sentences,
# tokenizer, model (on CPU) and `enc`.
MINILM_SETUP = MINILM_PROGRAM[:MINILM_PROGRAM.index("with torch.no_grad():")]
PROGRAM = r"""
import json, sys, time, torch
from torchnative_core.plugins import RECORDS
rec = RECORDS.get("vulkan")
if rec is None or rec.status != "ok":
    print(json.dumps({"skip": f"vulkan: {rec.status}: {rec.reason}" if rec else "vulkan: not installed"}))
    sys.exit(0)
import torchnative
""" + MINILM_SETUP + r"""
def embed(model, enc):
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return hidden, torch.nn.functional.normalize(pooled, p=2, dim=1)

_, cpu = embed(model, enc)
model.to("vulkan")
venc = {k: v.to("vulkan") for k, v in enc.items()}
t0 = time.perf_counter()
hidden, emb = embed(model, venc)
seconds = time.perf_counter() - t0
print(json.dumps({"devices": sorted({str(p.device) for p in model.parameters()}),
                  "hidden_device": str(hidden.device), "emb_device": str(emb.device),
                  "cpu": cpu.tolist(), "vulkan": emb.cpu().tolist(), "seconds": seconds,
                  "fallbacks": torchnative.fallback_report()}))
"""


@pytest.fixture(scope="module")
def result():
    r = subprocess.run([str(REPO / ".venv/bin/python"), "-c", PROGRAM], capture_output=True, text=True,
                       timeout=900)
    last = (r.stderr.strip().splitlines() or [""])[-1]
    if r.returncode != 0 and REFUSAL.match(last):
        # An operator vulkan has no kernel for yet, refused by name (the fallback is off): the
        # model cannot run there yet. Recorded as an expected failure naming the operator; any
        # other failure, and any disagreement, fails.
        pytest.xfail(f"MiniLM on vulkan: {last}")
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    return out


def test_minilm_on_vulkan_agrees_with_cpu(result):
    assert result["devices"] == ["vulkan:0"]
    assert result["hidden_device"] == result["emb_device"] == "vulkan:0"
    assert result["fallbacks"] == {}  # off by default: nothing ran on the host
    assert len(result["vulkan"]) == 6 and len(result["vulkan"][0]) == 384
    assert _max_diff(result["vulkan"], result["cpu"]) <= TOLERANCE


def test_agreement_check_rejects_an_embedding_off_by_more_than_the_tolerance():
    ref = [[0.03324, -0.13870, 0.10113], [0.5, -0.25, 0.125]]
    bad = [row[:] for row in ref]
    bad[0][1] += 2e-4
    assert _max_diff(ref, ref) == 0.0 and _max_diff(bad, ref) > TOLERANCE

