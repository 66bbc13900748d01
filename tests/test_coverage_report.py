"""tools/coverage_report.py: demanded operators come from refusals in reports; implemented ones
are not listed as missing."""

import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OURS = str(REPO / ".venv" / "bin" / "python")


def test_missing_operators_come_from_refusals(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"results": {
        "a": {"detail": "aten.frobnicate.default has no kernel for device 'cpu' (installed backends: cpu)"},
        "b": {"detail": "float32 sample 0: the derivative for 'aten::frobnicate' is not implemented"},
        "c": {"detail": "aten.add.Tensor has no kernel for device 'vulkan'"},
    }}))
    out_json = tmp_path / "cov.json"
    out = subprocess.run([OURS, str(REPO / "tools" / "coverage_report.py"), "--demand", str(report), "--json", str(out_json)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out_json.read_text())
    assert data["demanded"] == {"frobnicate": 2, "add.Tensor": 1}
    assert data["missing"] == [["frobnicate", 2]]
    assert "add.Tensor" in data["implemented"] and "cpu" in data["kernels"]
