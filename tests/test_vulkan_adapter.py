"""Where no Vulkan adapter exists, the vulkan plugin is recorded as unavailable ("no Vulkan
adapter") by `torchnative backends list`, and `import torch` and the cpu device are unaffected.
No adapter is simulated by pointing the Vulkan loader at no driver (VK_ICD_FILENAMES and
VK_DRIVER_FILES, in a subprocess)."""

import json

import pytest

from plugin_dists import run_python, run_torch

pytestmark = pytest.mark.runtime

NO_ADAPTER = {"VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent/icd.json"}


def _rows(env=None):
    r = run_python(["-m", "torchnative", "backends", "list", "--json"], env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    return {row["name"]: row for row in json.loads(r.stdout)}


@pytest.fixture(scope="module")
def installed():
    row = _rows()["vulkan"]
    if row["status"] == "not installed":
        pytest.skip("torchnative-vulkan is not installed (pip install torchnative[gpu])")
    return row


def test_no_adapter_is_reported_and_import_torch_is_unaffected(installed):
    row = _rows(NO_ADAPTER)["vulkan"]
    assert row["status"] == "unavailable", row
    assert row["reason"].startswith("no Vulkan adapter"), row
    assert row["kernels"] == 0
    table = run_python(["-m", "torchnative", "backends", "list"], env={**NO_ADAPTER, "COLUMNS": "200"})
    assert table.returncode == 0, table.stderr[-2000:]
    assert "unavailable" in table.stdout and "vulkan: no Vulkan adapter" in table.stdout, table.stdout
    r = run_torch("""
        import torch
        print((torch.ones(2) + 1).tolist(), torch.device("vulkan"))
    """, env=NO_ADAPTER)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["[2.0,", "2.0]", "vulkan"]


def test_strict_mode_fails_loudly_without_an_adapter(installed):
    """The nox vulkan session sets TORCHNATIVE_STRICT=1: a missing adapter must fail it, not skip."""
    r = run_torch("import torch", env={**NO_ADAPTER, "TORCHNATIVE_STRICT": "1"})
    assert r.returncode != 0 and "no Vulkan adapter" in r.stderr, r.stderr[-2000:]


def test_with_lavapipe_the_adapter_is_found(installed):
    """On this machine (and in CI, which installs Mesa's lavapipe) the plugin loads."""
    if installed["status"] != "ok":
        pytest.skip(f"vulkan: {installed['status']}: {installed['reason']}")
    assert installed["kernels"] > 0
