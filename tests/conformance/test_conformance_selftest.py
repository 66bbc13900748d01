"""The conformance comparator can fail: every fault the golden self-test injects is rejected by
the responsible comparator under every device's tolerances, on every upstream result of this
suite; a refusal must name the operator and the device; a wrong runtime (upstream torch with
faults injected through sitecustomize) is caught end to end."""
import pytest

from golden import compare, faults, harness
from torchnative.conformance import tolerances
from torchnative.conformance.cases import CASES

from . import suite

DEVICES = sorted(tolerances.TOLERANCES)


@pytest.mark.parametrize("device", DEVICES)
def test_every_fault_is_rejected_under_device_tolerances(oracle, device):
    misses, n, exercised = [], 0, set()
    for cid, ref in oracle.items():
        opts = tolerances.options(device, CASES[cid].family)
        assert compare.compare(ref, ref, opts) is None, cid
        for name, comparator, wrong in faults.faults(ref, opts):
            n += 1
            got = compare.compare(ref, wrong, opts)
            if got is None or got.comparator != comparator:
                misses.append(f"{cid}: {name} must be rejected by [{comparator}], got {got}")
            else:
                exercised.add(comparator)
    assert not misses, "\n".join(misses[:20])
    assert n > 10 * len(oracle)
    assert {"exact", "close", "dtype", "shape", "nonfinite", "kind"} <= exercised


@pytest.mark.parametrize("device", DEVICES)
def test_tolerances_catch_a_relative_error_of_1e_4(device):
    rel, floor = faults.MUST_DETECT["torch.float32"]
    for family, tol in tolerances.TOLERANCES[device].items():
        if tol != tolerances.EXACT:
            atol, rtol = tol
            assert rel > rtol and rel * floor > atol + rtol * floor, (device, family, tol)


def _raised(message, type_="builtins.NotImplementedError"):
    return {"kind": "raised", "type": type_, "message": message, "traceback": ""}


def test_refusals_must_name_the_operator_and_the_device(oracle):
    ref, case = oracle["exp"], CASES["exp"]
    named = "aten.exp.default has no kernel for device 'vulkan' (installed backends: cpu, vulkan)"
    assert suite.verdict(ref, _raised(named), "vulkan", case)[0] == "refused"
    by_dtype = "\"exp\" not implemented for 'Double' on device 'vulkan'"
    assert suite.verdict(ref, _raised(by_dtype), "vulkan", case)[0] == "refused"
    assert suite.verdict(ref, _raised(by_dtype.replace("vulkan", "cpu")), "vulkan", case)[0] == "disagree"
    for msg, device in ((named, "cpu"), ("exp is not written yet", "vulkan"),
                        ("has no kernel for device 'vulkan'", "vulkan")):
        assert suite.verdict(ref, _raised(msg), device, case)[0] == "disagree", msg
    assert suite.verdict(ref, _raised(named, "builtins.RuntimeError"), "vulkan", case)[0] == "disagree"
    assert suite.verdict(ref, ref, "vulkan", case) == ("agree", "")


def test_a_wrong_runtime_is_caught_end_to_end(tmp_path, oracle):
    """Upstream torch with exp off by 1e-4 relative, abs answering on another device and
    mm refusing without naming itself: those cases disagree, untouched ones agree."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import torch\n"
        "_exp, _abs = torch.exp, torch.Tensor.abs\n"
        "torch.exp = lambda x, *a, **k: _exp(x, *a, **k) * 1.0001\n"
        "torch.Tensor.abs = lambda self: _abs(self).to('meta')\n"
        "def _mm(*a, **k):\n"
        "    raise NotImplementedError('no mm here')\n"
        "torch.mm = _mm\n")
    wrong = tmp_path / "python"
    wrong.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {harness.ref_python()} \"$@\"\n")
    wrong.chmod(0o755)
    ids = ["exp", "abs", "abs_sliced", "mm", "add_same_shape", "softmax", "cat"]
    batch = suite.run_device("cpu", python=str(wrong), ids=ids)
    assert suite.unusable(batch, "cpu") is None
    got = {c: suite.verdict(oracle[c], batch.results[c], "cpu", CASES[c])[0] for c in ids}
    assert got == {"exp": "disagree", "abs": "disagree", "abs_sliced": "disagree", "mm": "disagree",
                   "add_same_shape": "agree", "softmax": "agree", "cat": "agree"}, got
    assert batch.results["abs"]["stage"] == "device"


@pytest.mark.parametrize("device", DEVICES)
def test_tolerances_are_measured(device, oracle, device_batch):
    """Each device's tolerances cover a fresh measurement (measure.py) and are no looser than
    max(the float32 floor, 3x the measurement); families in use as exact measure bit-exact on the
    cases that agree."""
    from .measure import measure
    batch = device_batch(device)
    why = suite.unusable(batch, device)
    if why:
        pytest.skip(why)
    for family, row in measure(device, oracle, batch).items():
        used = tolerances.TOLERANCES[device][family]
        if used == tolerances.EXACT:
            assert family == "exact" or row["exact"], (device, family, row)
            continue
        for u, m, floor in zip(used, row["measured"], tolerances.FLOOR):
            assert m <= u <= max(floor, 3 * m), (device, family, used, row)
