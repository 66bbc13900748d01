"""The primitive set (tools/primitives.py): its data and its table in docs/plugins.md are what the
code gives, the check fails when they are not, the lookup recorder is off unless asked, and
`torchnative backends primitives` reports the set and each device's coverage."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import primitives  # noqa: E402

PY = str(REPO / ".venv" / "bin" / "python")


def cli(*args):
    return subprocess.run([PY, "-m", "torchnative", *args], capture_output=True, text=True, timeout=300, cwd="/")


def test_data_and_table_are_what_the_code_gives():
    assert primitives.main(["check"]) == 0, "run python3 tools/primitives.py"


def test_the_check_fails_when_stale(tmp_path, monkeypatch):
    data = json.loads(primitives.DATA.read_text())
    data["primitives"] = data["primitives"][1:]
    monkeypatch.setattr(primitives, "DATA", tmp_path / "primitives.json")
    primitives.DATA.write_text(primitives.dumps(data))
    assert primitives.main(["check"]) == 1
    monkeypatch.setattr(primitives, "DATA", REPO / "core/python/torchnative_core/data/primitives.json")
    monkeypatch.setattr(primitives, "DOC", tmp_path / "plugins.md")
    primitives.DOC.write_text((REPO / "docs/plugins.md").read_text().replace("| `mm` | yes |", "| `mm` | optional |"))
    assert primitives.main(["check"]) == 1


def test_a_literal_launch_no_sample_reaches_fails_the_check(monkeypatch):
    sites = primitives.static_sites()
    monkeypatch.setattr(primitives, "static_sites",
                        lambda: sites + [{"file": "x.py", "line": 1, "kind": "launch", "name": "never_reached"}])
    assert primitives.main(["check"]) == 1


def test_static_and_traced_agree_on_literal_sites():
    """Every literal launch site is reached by the trace; names only the trace finds come from
    sites that compute the name."""
    sites, traced = primitives.static_sites(), primitives.traced()
    literal = {s["name"] for s in sites if s["name"]}
    assert literal <= set(traced["launched"]) | set(traced["probed"])
    assert any(s["name"] is None for s in sites)
    data = json.loads(primitives.DATA.read_text())
    names = {r["name"]: r for r in data["primitives"]}
    assert data["count"] == len(names) == data["required"] + data["optional"]
    # a few anchors: the fill every factory needs, a fast-path launch (Rust) and an optional one
    assert names["fill_.Scalar"]["required"] and names["mm"]["required"] and not names["native_batch_norm"]["required"]
    assert "add.Tensor" in names and "add.Scalar" not in names  # add.Scalar composes through add.Tensor


def test_the_recorder_is_off_unless_asked():
    code = ("import torch\nC = torch._C\n(torch.ones(3) + 1).exp()\nassert C._tn_trace_kernels(True) == ([], [])\n"
            "(torch.ones(2) * 2).sum()\nprint(C._tn_trace_kernels(False))\n(torch.ones(2) * 2)\n"
            "assert C._tn_trace_kernels(False) == ([], [])\n")
    r = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert r.returncode == 0, r.stderr
    launched, probed = eval(r.stdout)
    assert {"mul.Tensor", "sum.dim_IntList"} <= set(launched), launched


def test_cli_primitives():
    r = cli("backends", "primitives", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["count"] == json.loads(primitives.DATA.read_text())["count"]
    cpu = out["coverage"]["cpu"]
    assert cpu["plugin"] == "cpu" and cpu["implemented"] == out["count"] and not cpu["required_missing"]
    r = cli("backends", "primitives")
    assert r.returncode == 0 and f"{out['count']} primitives" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("device", ["vulkan", "npu"])
def test_coverage_names_what_a_device_lacks(device):
    out = json.loads(cli("backends", "primitives", "--json").stdout)
    if device not in out["coverage"]:
        pytest.skip(f"no {device} backend installed")
    c = out["coverage"][device]
    assert c["implemented"] + len(c["required_missing"]) + len(c["optional_missing"]) == out["count"]
