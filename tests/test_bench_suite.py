"""benchmarks/suite.py's smoke mode runs and writes a valid record (the benchmark itself is never a
test; this only keeps the runner from rotting). One group, one repetition, short loops."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_quick_overhead_writes_a_record(tmp_path):
    dest = tmp_path / "suite.json"
    r = subprocess.run([sys.executable, str(REPO / "benchmarks/suite.py"), "--quick", "--only", "overhead",
                        "--json", str(dest)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = json.loads(dest.read_text())
    cases = [row["case"] for row in rec["rows"]]
    assert cases == ["x + y (1 element)", "x.view(1)", "x[0]", "F.linear 4x4"]
    for row in rec["rows"]:
        assert row["ours"] > 0 and row["upstream"] > 0
        assert abs(row["ratio"] - row["ours"] / row["upstream"]) < 1e-9
    assert rec["cpu"]["peak_gflops_1_thread"] > 0


def test_unknown_group_is_refused():
    r = subprocess.run([sys.executable, str(REPO / "benchmarks/suite.py"), "--only", "nonsense"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "unknown groups" in r.stderr
