"""One conformance suite for every device: each case runs an operator on the device, brings the
result back with .cpu() and compares it with upstream torch 2.13.0 on cpu (the oracle, another
process) within the device's measured tolerance for the case's family (tolerances.py).

A device whose plugin is not installed, or has no adapter, skips with that reason. An operator a
device has no kernel for must refuse by name (NotImplementedError naming the aten operator and the
device): that passes and is counted as refused; anything else that differs fails. The per-device
summary (agree / refused / disagree) is printed at the end and written to build/conformance/.
"""
import os

import pytest

from torchnative.conformance.cases import CASES

from . import suite
from .conftest import RECORD

# Disagreements found by this suite and not fixed yet: strict xfail, so a fix makes them fail
# until removed from here.
KNOWN = {("cpu", cid): why for cid, why in suite.CPU_DIFFERS.items()}


REQUIRED = {k for k in os.environ.get("TORCHNATIVE_CONFORMANCE_REQUIRE", "").split(",") if k}


def _params():
    for device in suite.device_keys():
        for cid in CASES:
            marks = [pytest.mark.xfail(reason=KNOWN[device, cid], strict=True)] \
                if (device, cid) in KNOWN else []
            yield pytest.param(device, cid, marks=marks, id=f"{device}-{cid}")


@pytest.mark.parametrize("device,case_id", list(_params()))
def test_conformance(device, case_id, oracle, device_batch):
    batch = device_batch(device)
    why = suite.unusable(batch, device)
    if why:
        if device in REQUIRED:  # the backend's nox session: a device that cannot run fails
            pytest.fail(f"TORCHNATIVE_CONFORMANCE_REQUIRE names {device}, but {why}")
        pytest.skip(why)
    case, ref, ours = CASES[case_id], oracle[case_id], batch.results[case_id]
    verdict, detail = suite.verdict(ref, ours, device, case)
    RECORD.setdefault(device, {})[case_id] = {
        "verdict": verdict, "detail": detail, "op": case.op, "family": case.family,
        "errors": suite.float_errors(ref, ours)}
    assert verdict not in ("disagree", "error"), f"{case.op} on {device} ({case.family}): {detail}"


# Issue 7: "on vulkan at least 60 operators pass it".
MIN_OPERATORS = {"vulkan": 60}


@pytest.mark.parametrize("device", sorted(MIN_OPERATORS))
def test_enough_operators_agree(device, oracle, device_batch):
    """Operators (a case's `op`) all of whose cases agree with upstream on the device."""
    batch = device_batch(device)
    why = suite.unusable(batch, device)
    if why:
        if device in REQUIRED:
            pytest.fail(f"TORCHNATIVE_CONFORMANCE_REQUIRE names {device}, but {why}")
        pytest.skip(why)
    verdicts = {}
    for cid, case in CASES.items():
        verdicts.setdefault(case.op, set()).add(suite.verdict(oracle[cid], batch.results[cid], device, case)[0])
    agree = sorted(op for op, vs in verdicts.items() if vs == {"agree"})
    assert len(agree) >= MIN_OPERATORS[device], \
        f"{len(agree)} operators agree on {device}, need {MIN_OPERATORS[device]}: " \
        f"not yet {sorted(set(verdicts) - set(agree))}"
