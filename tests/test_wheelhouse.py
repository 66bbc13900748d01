"""The wheelhouse a user installs from (tools/wheelhouse.py) and the smoke suite in fresh venvs
(tools/wheel_smoke.py): portable tags, every Python this machine has, version and ABI skew."""

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import wheel_smoke  # noqa: E402
import wheelhouse  # noqa: E402


def _workspace_version() -> str:
    return re.search(r'^version = "([^"]+)"', (REPO / "Cargo.toml").read_text(), re.M).group(1)


def test_our_distributions_require_the_core_of_their_own_minor_release():
    major, minor = _workspace_version().split(".")[:2]
    pin = f'"torchnative-core=={major}.{minor}.*"'
    for pyproject in [REPO / "pyproject.toml", *sorted((REPO / "backends").glob("*/pyproject.toml"))]:
        deps = re.search(r"^dependencies = \[(.*)\]$", pyproject.read_text(), re.M).group(1)
        assert pin in deps, f"{pyproject.relative_to(REPO)}: {deps}"
    npu = (REPO / "backends/npu/pyproject.toml").read_text()
    assert f'version = "{_workspace_version()}"' in npu  # the pure-Python backend's version is not dynamic


@pytest.mark.parametrize("tag, glibc", [("manylinux_2_28_x86_64", (2, 28)), ("manylinux2014_x86_64", (2, 17)),
                                        ("manylinux_2_35_x86_64", (2, 35)), ("linux_x86_64", None),
                                        ("macosx_11_0_arm64", None)])
def test_glibc_of_tag(tag, glibc):
    assert wheelhouse.glibc_of_tag(tag) == glibc


@pytest.mark.parametrize("name", ["torchnative_cpu-0.1.0-cp310-abi3-manylinux_2_34_x86_64.whl",
                                  "torchnative_cpu-0.1.0-cp310-abi3-linux_x86_64.whl"])
def test_tag_check_refuses_a_wheel_that_needs_a_newer_glibc_or_is_not_portable(tmp_path, name):
    wheel = tmp_path / name
    wheel.write_bytes(b"")
    with pytest.raises(wheelhouse.WheelhouseError, match="glibc newer|non-portable"):
        wheelhouse.check_tag(wheel)


def test_rewritten_wheel_carries_the_new_version_requirement_and_valid_record(tmp_path):
    src = tmp_path / "torchnative_npu-0.1.0-py3-none-any.whl"
    info = "torchnative_npu-0.1.0.dist-info/"
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("torchnative_npu/__init__.py", "plugin = None\n")
        z.writestr(info + "METADATA", "Metadata-Version: 2.1\nName: torchnative-npu\nVersion: 0.1.0\n"
                                      "Requires-Dist: torchnative-core==0.1.*\nRequires-Dist: numpy\n")
        z.writestr(info + "RECORD", "stale\n")
    (tmp_path / "out").mkdir()
    out = wheel_smoke.rewrite_wheel(src, tmp_path / "out", "0.2.0", "torchnative-core==0.2.*")
    assert out.name == "torchnative_npu-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        meta = z.read("torchnative_npu-0.2.0.dist-info/METADATA").decode()
        record = z.read("torchnative_npu-0.2.0.dist-info/RECORD").decode().splitlines()
        for line in record[:-1]:
            path, digest, size = line.split(",")
            assert digest == wheel_smoke.record_hash(z.read(path)) and int(size) == len(z.read(path))
    assert info + "METADATA" not in names
    assert "Version: 0.2.0" in meta and "Requires-Dist: torchnative-core==0.2.*" in meta
    assert "Requires-Dist: numpy" in meta
    assert record[-1] == "torchnative_npu-0.2.0.dist-info/RECORD,,"


def test_embedding_comparison_can_fail():
    ref = [[0.1, -0.2], [0.3, 0.4]]
    bad = [[0.1, -0.2], [0.3, 0.4 + 2e-5]]
    assert wheel_smoke.max_diff(ref, ref) == 0.0
    assert wheel_smoke.max_diff(bad, ref) > wheel_smoke.TOLERANCE["cpu"]
    with pytest.raises(wheel_smoke.SmokeError):
        wheel_smoke.max_diff([[0.1]], ref)


@pytest.fixture(scope="module")
def wheelhouse_report(tmp_path_factory):
    """tools/wheelhouse.py over the wheels `make test` just built, then the smoke suite in fresh venvs of
    every Python this machine has (downloads land in build/wheelhouse, so reruns reuse them)."""
    r = subprocess.run([sys.executable, REPO / "tools/wheelhouse.py", "--no-build"], capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    manifest = json.loads((wheelhouse.WHEELHOUSE / "manifest.json").read_text())
    out = tmp_path_factory.mktemp("smoke") / "report.json"
    s = subprocess.run([sys.executable, REPO / "tools/wheel_smoke.py", "--json", out], capture_output=True,
                       text=True, timeout=3600)
    report = json.loads(out.read_text())
    assert s.returncode == 0, report.get("error") or s.stdout[-3000:]
    return manifest, report


def test_wheelhouse_holds_portable_wheels_of_every_distribution(wheelhouse_report):
    manifest, _ = wheelhouse_report
    ours = {row["file"].split("-")[0]: row for row in manifest["ours"]}
    assert set(ours) == {"torch", "torchnative", "torchnative_core", "torchnative_cpu", "torchnative_npu",
                         "torchnative_vulkan"}
    for name in ("torch", "torchnative", "torchnative_npu"):
        assert ours[name]["tag"] == "any"
    for name in ("torchnative_core", "torchnative_cpu", "torchnative_vulkan"):
        assert "-cp310-abi3-" in ours[name]["file"]
        assert wheelhouse.glibc_of_tag(ours[name]["tag"]) <= (2, 28)
        assert wheelhouse.glibc_of_tag(ours[name]["auditwheel"]) <= (2, 28)


def test_every_python_installs_from_the_wheelhouse_and_passes_the_smoke_suite(wheelhouse_report):
    manifest, report = wheelhouse_report
    assert "3.11" in report["pythons"]
    for version in wheelhouse.PYTHONS:
        assert version in report["pythons"] or version in manifest["skipped_pythons"]
    for version, seen in report["pythons"].items():
        assert seen["backends"]["cpu"]["status"] == "ok" and seen["backends"]["npu"]["status"] == "ok"
        devices = {"cpu", "npu", "st"} | ({"vulkan"} if seen["backends"]["vulkan"]["status"] == "ok" else set())
        assert set(seen["minilm"]) == devices, version
        assert "upstream" not in report, report.get("upstream")  # make test builds the reference venv
        for key, row in seen["minilm"].items():
            assert row["max_diff_vs_upstream"] <= wheel_smoke.TOLERANCE[key], (version, key)


def test_backends_accept_another_abi_minor_and_refuse_another_major(wheelhouse_report):
    _, report = wheelhouse_report
    for seen in report["pythons"].values():
        for row in seen["abi_skew"].values():
            assert len(row["accepted"]) >= 2 and all(n > 0 for n in row["accepted"].values())
            assert len(row["refused"]) == 2
            for other, err in row["refused"].items():
                assert err.startswith("ImportError: ") and row["backend"] in err and other in err


def test_pip_refuses_a_backend_built_for_another_core_release(wheelhouse_report):
    _, report = wheelhouse_report
    first = next(iter(report["pythons"].values()))  # the skew step runs on the first Python only
    assert "torchnative-core==0.2.*" in first["version_skew"].replace(" ", "")
