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


def test_the_harness_failing_is_could_not_run(monkeypatch, capsys):
    """An exception of the harness itself (not of the operator under test) is no disagreement: the
    case "could not run" (verdict "error", exit 1), with the exception's type and first line. Both
    runtimes are faked here, so no process starts."""
    from argparse import Namespace

    from torchnative.conformance import batch, cli

    tensor = {"kind": "tensor", "pytype": "torch.Tensor", "dtype": "torch.float32", "shape": [1],
              "contiguous": True, "data": [1.0]}
    results = {
        "ours": {  # a NameError in cases.py's own code, as runner.run_case records it
            "exp": {"kind": "harness_error", "stage": "case", "error": "builtins.NameError: name 'T2' is not defined\nmore",
                    "traceback": "Traceback (most recent call last):\nNameError: name 'T2' is not defined\n"},
            "abs": {**tensor, "data": ["not a number"]},  # judging it raises TypeError inside compare
            "mm": tensor},
        "cpu": {"exp": tensor, "abs": tensor, "mm": tensor}}

    def run_device(device, python=None, ids=None):
        b = batch.Batch(python)
        b.header = {"torchnative": {"status": "ok"}}
        b.results = dict(results["cpu" if device == "cpu" else "ours"])
        return b

    monkeypatch.setattr(cli.suite, "run_device", run_device)
    args = Namespace(device="fakedev", upstream=None, cases=["exp", "abs", "mm"], list=False, json=False,
                     no_refusals=False)
    assert cli.main(args) == 1
    out = capsys.readouterr().out
    assert "FAIL error    exp (exp, math)  against cpu: could not run: ours (case): builtins.NameError: name 'T2' " \
           "is not defined" in out, out
    assert "FAIL error    abs (abs, exact)  against cpu: could not run: the harness raised TypeError judging the " \
           "case: " in out, out
    assert "PASS agree    mm" in out and "1 agree, 0 refused, 0 disagree, 2 could not run" in out, out


def test_the_runner_tells_a_harness_bug_from_the_operators_exception():
    """runner.run_case: a NameError raised in the conformance package's own code is the harness's
    (harness_error), while an exception raised by torch is the case's result (raised)."""
    r = run_python(["-c", """if True:
        import importlib.util, torch
        from torchnative.conformance import runner as path
        spec = importlib.util.spec_from_file_location("tn_runner", path.__file__)
        runner = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(runner)
        ns = {}
        exec(compile("def case(dev):\\n    return T2(3)\\n", str(runner.HERE / "cases.py"), "exec"), ns)
        bug = runner.run_case(ns["case"], "cpu", torch)
        op = runner.run_case(lambda dev: torch.ones(2, 3, device=dev) @ torch.ones(2, 3, device=dev), "cpu", torch)
        print(bug["kind"], bug["stage"], bug["error"])
        print(op["kind"], op["type"])
    """])
    assert r.stdout.splitlines() == ["harness_error case builtins.NameError: name 'T2' is not defined",
                                     "raised builtins.RuntimeError"], r.stdout + r.stderr[-3000:]
