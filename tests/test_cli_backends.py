"""`torchnative backends list --json`: the cpu plugin is discovered through its entry point and
registered its kernels; first-party plugins that are not installed name the extra to install."""

import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.runtime
def test_backends_list_json():
    r = subprocess.run([str(REPO / ".venv/bin/python"), "-m", "torchnative", "backends", "list", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    cpu = rows["cpu"]
    assert cpu["status"] == "ok" and cpu["distribution"] == "torchnative-cpu" and cpu["kernels"] > 100
    assert cpu["device_keys"] == ["cpu"]
    assert rows["vulkan"]["status"] == "not installed"
    assert rows["vulkan"]["reason"] == "pip install torchnative[gpu]"
