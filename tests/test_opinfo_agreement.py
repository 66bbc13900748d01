"""Upstream's OpInfo samples replayed on torchnative (issue 4): recorded by the reference
interpreter, replayed by ours, compared in value, shape, dtype and exception type.

tests/data/opinfo_agree.txt lists the OpInfo entries that agree (394 of 692 recorded; most of
the rest refuse by name for an operator not implemented yet). Every listed entry must keep
agreeing; the only disagreements allowed are the tie orders listed in KNOWN_DISAGREEMENTS."""

import json
import subprocess
from pathlib import Path

import pytest
from test_training import OURS, _ref_python

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "tools" / "opinfo_agreement.py"

# Indices among equal values: upstream's sort kernels order ties differently (docs/STATUS.md).
KNOWN_DISAGREEMENTS = {"argsort", "sort", "topk", "kthvalue"}

pytestmark = pytest.mark.runtime


def _record(d, *extra):
    out = subprocess.run([_ref_python(), str(TOOL), "record", str(d), *extra], capture_output=True, text=True,
                         timeout=1800, cwd=str(d.parent))
    assert out.returncode == 0, out.stderr[-3000:]
    return d


def _replay_and_check(recorded, tmp_path, agree_file, known):
    """Replays on ours; every entry of `agree_file` must agree, and only `known` may disagree."""
    report = tmp_path / "replay.json"
    out = subprocess.run([OURS, str(TOOL), "replay", str(recorded), "--json", str(report)], capture_output=True,
                         text=True, timeout=1800, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(report.read_text())["results"]
    expected = [ln.strip() for ln in (REPO / "tests" / "data" / agree_file).read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]
    regressed = {e: results.get(e, {}).get("detail", "not replayed") for e in expected if results.get(e, {}).get("status") != "agree"}
    disagree = {k: v["detail"] for k, v in results.items() if v["status"] == "disagree" and k not in known}
    assert not regressed, f"no longer agreeing: {regressed}"
    assert not disagree, f"disagree with upstream: {disagree}"


def test_opinfo_samples_agree_with_upstream(tmp_path):
    recorded = _record(tmp_path / "rec")
    _replay_and_check(recorded, tmp_path, "opinfo_agree.txt", KNOWN_DISAGREEMENTS)


# bfloat16/float16 entries that still differ from upstream by more than torch.testing's tolerance
# for the dtype: rounding order inside kernels that upstream computes in float32 "opmath" with a
# formula of its own (batch norm's alpha/beta form, addbmm's per-batch addmm_, transposed
# convolution and upsampling kernels, the flash attention kernel), plus the tie orders above.
# The measured list, with each largest difference, is in docs/STATUS.md.
KNOWN_REDUCED_DISAGREEMENTS = KNOWN_DISAGREEMENTS | {
    "addbmm", "addr", "masked.normalize", "native_batch_norm", "nn.functional.adaptive_avg_pool3d",
    "nn.functional.batch_norm", "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
    "nn.functional.conv_transpose3d", "nn.functional.instance_norm", "nn.functional.interpolate.bicubic",
    "nn.functional.interpolate.linear", "nn.functional.interpolate.trilinear",
    "nn.functional.scaled_dot_product_attention",
}


def test_reduced_precision_samples_agree_with_upstream(tmp_path):
    """bfloat16 and float16 samples (issue 4 item 6): composites computed in float32 and rounded
    once where upstream's kernels do (torchnative_core/ops/opmath.py)."""
    recorded = _record(tmp_path / "rec", "--dtypes", "reduced")
    _replay_and_check(recorded, tmp_path, "opinfo_agree_reduced.txt", KNOWN_REDUCED_DISAGREEMENTS)


def test_comparison_catches_a_small_error():
    """The comparator (plain Python numbers) tells apart a 0.1% error, a dtype and a shape."""
    code = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
from opinfo_agreement import compare
ref = torch.linspace(-2, 3, 50)
assert compare(ref, ref.clone(), torch) is None
assert compare(ref, ref * 1.001, torch) is not None
assert compare(ref, ref.double(), torch) is not None
assert compare(ref, ref.reshape(5, 10), torch) is not None
assert compare((ref, torch.arange(3)), (ref, torch.tensor([0, 1, 3])), torch) is not None
assert compare(torch.tensor([float('nan')]), torch.tensor([float('nan')]), torch) is None
print("ok")
"""
    out = subprocess.run([OURS, "-c", code, str(REPO / "tools")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
