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
    # a first-party plugin that is not installed (vulkan is built by tools/build.py since issue 7)
    assert rows["npu"]["status"] == "not installed"
    assert rows["npu"]["reason"] == "pip install torchnative[npu]"
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
    assert "npu: pip install torchnative[npu]" in lines
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
    npu = json.loads(cli("show", "npu", "--json").stdout)
    assert npu["status"] == "not installed" and npu["operators"] == {"npu": []}
