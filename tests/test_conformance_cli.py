"""`torchnative conformance DEVICE` as a backend author runs it (docs/plugins.md section 7): the
Python template, pip-installed, passes every case against cpu; a backend whose kernel computes a
wrong value fails with exit 1 and names the case; a device no plugin declares fails; cpu passes
against upstream torch too, except its known difference (suite.CPU_DIFFERS)."""
import json

import pytest

from plugin_dists import install_template, run_python, write_dist
from torchnative.conformance import suite
from torchnative.conformance.cases import CASES

pytestmark = pytest.mark.runtime


@pytest.fixture(scope="module")
def mydev(tmp_path_factory):
    return install_template(tmp_path_factory.mktemp("conformance") / "site")


def conformance(*args, sites=()):
    return run_python(["-m", "torchnative", "conformance", *args], *sites)


def test_the_python_template_conforms(mydev):
    r = conformance("mydev", "--json", sites=[mydev])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert out["passed"] and out["counts"]["disagree"] == out["counts"]["error"] == 0
    assert out["counts"]["agree"] == len(CASES) - len(suite.CPU_DIFFERS)
    assert all(row["against"] == ["cpu"] for cid, row in out["cases"].items() if cid not in suite.CPU_DIFFERS)


def test_a_wrong_kernel_fails_by_case(tmp_path, mydev):
    # A plugin of higher priority on "mydev" whose exp is off by one.
    site = write_dist(tmp_path / "site", "tn-wrong-exp", {"wrong": "tn_wrong_exp"}, {"tn_wrong_exp.py": """
        from types import SimpleNamespace
        import numpy as np
        from mydev_backend.memory import as_numpy

        def torchnative_describe():
            return SimpleNamespace(name="wrong", device_keys=("mydev",), abi_version=1 << 16, priority=10,
                                   available=True, reason="")

        def torchnative_register(registrar):
            def exp(args, outs):
                as_numpy(outs[0])[...] = np.exp(as_numpy(args[0])) + 1
            registrar.register_kernel("exp", "mydev", exp)
            return 1
    """})
    r = conformance("mydev", "--cases", "exp,exp_transposed,abs,mm", sites=[site, mydev])
    assert r.returncode == 1, r.stdout + r.stderr
    lines = {line.split()[2]: line.split()[0] for line in r.stdout.splitlines() if line.startswith(("PASS", "FAIL"))}
    assert lines == {"exp": "FAIL", "exp_transposed": "FAIL", "abs": "PASS", "mm": "PASS"}, r.stdout


def test_an_undeclared_device_fails():
    r = conformance("nosuchdev", "--cases", "abs")
    assert r.returncode == 1 and "nosuchdev" in r.stdout, r.stdout + r.stderr


def test_cpu_against_upstream():
    from golden import harness

    try:
        ref = harness.ref_python()
    except harness.SetupError as e:
        pytest.skip(str(e))
    ids = ["exp", "mm", "softmax", "cat", *suite.CPU_DIFFERS]
    r = conformance("cpu", "--upstream", ref, "--cases", ",".join(ids), "--json")
    out = json.loads(r.stdout)
    bad = {cid for cid, row in out["cases"].items() if row["verdict"] != "agree"}
    assert bad == set(suite.CPU_DIFFERS) and r.returncode == 1, out
    assert all(row["against"] == ["cpu", "upstream"] for row in out["cases"].values())


def test_the_suite_ships_in_the_library_wheel():
    """Every package under torchnative/ (conformance/ included) is in pyproject's list, so the
    wheel a third party installs has `torchnative conformance`'s runner, cases and tolerances."""
    import tomllib
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    listed = set(tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(repo).parts) for p in (repo / "torchnative").rglob("__init__.py")}
    assert found == listed and "torchnative.conformance" in listed, (found ^ listed)
