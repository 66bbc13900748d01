"""The transformers model sweep (issue 5 item 7, tools/model_sweep.py) end to end on a handful of
model types: upstream records shrunken models (text, vision, encoder-decoder, audio), ours replays
them, and the comparator classes them. The tolerance (4x upstream's own float32-vs-float64 error
per output) must reject upstream's own run with every activation scaled by 1.001."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TYPES = ["llama", "vit", "t5", "wav2vec2"]

pytestmark = pytest.mark.runtime

sys.path.insert(0, str(REPO / "tools"))
import model_sweep  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if not Path(model_sweep._ref_python()).exists():
        pytest.skip("no reference interpreter (python3 tools/build.py --ref)")
    tmp = tmp_path_factory.mktemp("sweep")
    out = subprocess.run([sys.executable, str(REPO / "tools" / "model_sweep.py"), "run", "--types", ",".join(TYPES),
                          "--cache", str(tmp / "cache"), "--perturb", "--json", str(tmp / "report.json")],
                         capture_output=True, text=True, timeout=600, cwd=str(REPO))
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return json.loads((tmp / "report.json").read_text())["results"]


@pytest.mark.parametrize("model_type", TYPES)
def test_model_type_agrees_with_upstream(report, model_type):
    r = report[model_type]
    assert r["status"] == "agrees", r
    assert r["float64"], "upstream's float64 run gives the tolerance"
    assert r["ratio"] <= 1.0


@pytest.mark.parametrize("model_type", TYPES)
def test_comparator_rejects_a_0_1_percent_activation_fault(report, model_type):
    r = report[model_type]
    assert r["fault_caught"] is True, r
    assert r["fault_ratio"] > 1.0


def test_inputs_cover_the_modalities(report):
    inputs = {mt: set(r["inputs"]) for mt, r in report.items()}
    assert "input_ids" in inputs["llama"]
    assert "pixel_values" in inputs["vit"]
    assert "decoder_input_ids" in inputs["t5"]
    assert "input_values" in inputs["wav2vec2"]


def test_classification():
    """The comparator in plain numbers: within tolerance agrees, a 0.1% scaled output does not,
    a refusal names the missing operator."""
    import math

    ref32 = [0.5, -1.25, 2.0, 0.75]
    ref64 = [0.5 + 1e-7, -1.25 - 2e-7, 2.0 + 1e-7, 0.75 + 0.1]  # the last: a padding row upstream computes loosely
    base, per = model_sweep.tolerance(ref32, ref64)
    assert math.isclose(base, 4 * 2e-7 + model_sweep.FLOOR * 2.0)  # the loose element does not widen the bound
    assert model_sweep._ratio(ref32, [x + 3e-7 for x in ref32], base, per)[0] <= 1
    assert model_sweep._ratio(ref32, [x * 1.001 for x in ref32], base, per)[0] > 1
    assert model_sweep._ratio(ref32, ref32[:3] + [0.75 + 0.3], base, per)[0] <= 1  # within 4x its own error
    assert model_sweep._ratio(ref32, ref32[:3] + [0.75 + 0.5], base, per)[0] > 1
    assert model_sweep._ratio([float("nan")], [0.0], 1.0, None)[0] == math.inf
    assert model_sweep._missing_op("aten.einsum.default has no kernel for device 'cpu'") == "einsum"
