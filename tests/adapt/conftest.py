from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ref_python():
    """Upstream torch 2.13.0's interpreter (the reference environment the build makes)."""
    marker = REPO / "build" / "ref-python"
    if not marker.exists():
        pytest.fail("no reference environment: run `python3 tools/build.py --ref`")
    return marker.read_text().strip()
