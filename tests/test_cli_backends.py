"""`torchnative backends list [--json]` and `torchnative backends show NAME [--json]`: the cpu
plugin is discovered through its entry point and registered its kernels; first-party plugins that
are not installed name the extra to install; a throwaway plugin shows its operators per device key."""

import json

import pytest

from plugin_dists import install_template, run_python, write_dist

pytestmark = pytest.mark.runtime


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    good = install_template(tmp_path_factory.mktemp("good") / "site")
    bad = write_dist(tmp_path_factory.mktemp("bad") / "site", "tn-bad", {"bad": "tn_bad:plugin"},
                     {"tn_bad.py": "raise RuntimeError('no [bad] hardware')\n"})
    return good, bad


def cli(*args, sites=()):
    return run_python(["-m", "torchnative", "backends", *args], *sites)


def test_backends_list_json():
    r = cli("list", "--json")
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    cpu = rows["cpu"]
    assert cpu["status"] == "ok" and cpu["distribution"] == "torchnative-cpu" and cpu["kernels"] > 100
    assert cpu["device_keys"] == ["cpu"]
    # npu is built by tools/build.py (a pure-Python wheel) since issue 3: its row names the ONNX
    # Runtime execution providers its sessions use (until then this test expected "not installed")
    assert rows["npu"]["status"] == "ok" and rows["npu"]["distribution"] == "torchnative-npu"
    assert rows["npu"]["extra"]["execution_providers"][-1] == "CPUExecutionProvider"
    # metal is built for macOS and iOS only: no extra installs it on this Linux machine
    assert rows["metal"]["reason"] == "not built for linux (platforms: macos, ios)"


def test_backends_list_table_names_every_plugin_and_reason(sites):
    r = cli("list", sites=sites)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    row = {line.split()[0]: line.split() for line in lines if line.split() and line.split()[0] in ("cpu", "mydev", "bad")}
    assert row["cpu"][:3] == ["cpu", "cpu", "ok"] and row["mydev"][:3] == ["mydev", "mydev", "ok"]
    assert row["bad"][1] == "error"  # no device keys: its descriptor was never read
    # reasons below the table, verbatim (square brackets are not taken for markup)
    assert any(line.startswith("npu: onnxruntime ") and "execution_providers" in line for line in lines)
    assert "bad: RuntimeError: no [bad] hardware" in lines


def test_backends_show_lists_operators_per_device_key(sites):
    r = cli("show", "mydev", "--json", sites=sites)
    assert r.returncode == 0, r.stderr
    mydev = json.loads(r.stdout)
    assert mydev["status"] == "ok" and mydev["distribution"] == "mydev-backend"
    assert mydev["operators"] == {"mydev": ["aten::add.Tensor", "aten::copy_", "aten::fill_.Scalar", "aten::mul.Tensor"]}
    cpu = json.loads(cli("show", "cpu", "--json").stdout)
    assert len(cpu["operators"]["cpu"]) == cpu["kernels"] > 100 and "aten::add.Tensor" in cpu["operators"]["cpu"]
    table = cli("show", "mydev", sites=sites).stdout
    assert "operators of mydev: 4" in table and "aten::fill_.Scalar" in table


def test_backends_show_unknown_and_not_installed():
    r = cli("show", "nope")
    assert r.returncode == 1 and r.stdout.startswith("torchnative: no backend named 'nope' (known: cpu")
    metal = json.loads(cli("show", "metal", "--json").stdout)
    assert metal["status"] == "not installed" and metal["operators"] == {"mps": []}


def test_a_first_party_plugin_not_installed_names_its_extra():
    """Every first-party plugin built for Linux is installed here now (npu too), so the row of one
    that is not comes from a plugins.toml entry no distribution provides."""
    r = run_python(["-c", "import json, torchnative.backends as b\n"
                          "b.first_party_plugins = lambda: [{'name': 'phantom', 'distribution': 'torchnative-phantom',"
                          " 'device_keys': ['phantom'], 'extra': 'phantom', 'priority': 1,"
                          " 'platforms': ['linux', 'macos', 'windows', 'android', 'ios']}]\n"
                          "print(json.dumps(b.backend_rows()))"])
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    assert rows["phantom"]["status"] == "not installed"
    assert rows["phantom"]["reason"] == "pip install torchnative[phantom]"
