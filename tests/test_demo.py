"""The README's main job: `torchnative demo` runs a seeded model on our runtime and on upstream
and exits 0 only when they agree within the measured float32 tolerance."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.runtime
def test_demo_agrees_with_upstream():
    r = subprocess.run([str(REPO / ".venv/bin/python"), "-m", "torchnative", "demo"], capture_output=True, text=True,
                       timeout=600, cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "agrees with upstream" in r.stdout


def test_demo_comparison_rejects_a_perturbed_result():
    # the tolerance check the demo applies must fail on a 1e-4 relative error
    from torchnative.cli import ATOL, RTOL

    b = 0.411029
    a = b * (1 + 1e-4)
    assert abs(a - b) > ATOL + RTOL * abs(b)
