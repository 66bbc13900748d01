"""Orchestration of the conformance suite (never imports torch): one batch of cases per device
under a runtime, and the verdict of one case against a reference: agree, refused (by name),
disagree, or error (the harness could not run or judge it). The reference is our own cpu backend (`torchnative conformance DEVICE`) or upstream
torch 2.13.0 on cpu (the repository's tests/conformance, which also holds the oracle's cache)."""
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from . import compare, tolerances
from .batch import Batch, run_batch
from .cases import CASES

RUNNER = Path(__file__).resolve().with_name("runner.py")
# Cases where our cpu backend is known to differ from upstream: cpu is no reference for them (the
# repository's suite holds each as a strict xfail, so a fix shows).
CPU_DIFFERS = {
    "minimum_nan": "cpu minimum(-0.0, 0.0) gives 0.0, upstream -0.0 (backends/cpu/src/binary.rs max_min returns b "
                   "on ties)",
}


def plugin_rows(python=None):
    """`torchnative backends list --json` of a runtime (one process for every device)."""
    with tempfile.TemporaryDirectory() as tmp:  # cwd: nothing in the repo root shadows a package
        r = subprocess.run([python or sys.executable, "-m", "torchnative", "backends", "list",
                            "--json"], capture_output=True, text=True, timeout=300, cwd=tmp)
    return json.loads(r.stdout) if r.returncode == 0 else None


def run_device(device, python=None, ids=None):
    """A runtime's results on `device`: a Batch whose header says whether the device's plugin is
    usable (header["torchnative"]["status"] == "ok")."""
    return run_batch(python or sys.executable, list(ids or CASES), RUNNER, modules=[device])


def unusable_batch(row):
    """The Batch of a device whose plugin is not usable (its backends-list row), without a process."""
    b = Batch(None)
    b.header = {"torchnative": {"name": row["name"], "status": row["status"], "reason": row["reason"]}}
    return b


def unusable(batch, device):
    """None when the device ran the cases, else the reason it could not."""
    h = batch.header
    if h is None:
        first = next(iter(batch.results.values()), {})
        return f"{batch.python or 'the interpreter'} could not start: {first.get('error')}"
    st = h.get("torchnative")  # None under upstream torch (no plugins: every device is its own)
    if st is not None and st.get("status") != "ok":
        return f"device '{device}': plugin {st.get('name', '')} {st.get('status')}: {st.get('reason')}"
    return None


def refusal_pattern(device):
    """A refusal by name: the core's for an operator the device has no kernel for
    (`aten.exp.default has no kernel for device 'vulkan' (...)`), or a kernel's own for a dtype it
    does not handle, naming operator and device (`"exp" not implemented for 'Double' on device
    'vulkan'`)."""
    d = re.escape(device)
    return re.compile(rf"aten\.[\w.]+ has no kernel for device '{d}'|\"[\w.]+\" not implemented for '\w+' on device '{d}'")


def options(device, family, reference="upstream"):
    """compare options for `device` against `reference`: upstream (the device's measured tolerance)
    or cpu, our cpu backend, whose own distance from upstream adds to the device's (|d - c| <=
    |d - u| + |u - c|): exact only where both are exact."""
    mine = tolerances.TOLERANCES.get(device, tolerances.DEFAULT)[family]
    if reference == "upstream" or device == reference:
        theirs = tolerances.EXACT
    else:
        theirs = tolerances.TOLERANCES[reference][family]
    if mine == theirs == tolerances.EXACT:
        return {"exact": True}
    parts = [t for t in (mine, theirs) if t != tolerances.EXACT]
    return {"atol": sum(t[0] for t in parts), "rtol": sum(t[1] for t in parts)}


def first_line(text):
    """The first non-empty line of `text` (an exception's message), or ''."""
    return next((line.strip() for line in str(text).splitlines() if line.strip()), "")


def exception_line(traceback_text):
    """`Type: message` of the last exception a traceback's text shows, or ''."""
    lines = [line for line in str(traceback_text).splitlines() if line and not line.startswith((" ", "\t"))]
    found = [line for line in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|Timeout)(: |$)", line)
             and not line.startswith(("Traceback", "During handling", "The above exception"))]
    return found[-1].strip() if found else ""


def could_not_run(r, who):
    """The detail of a case that `who` ("ours", "the cpu reference") could not run: the harness's
    own failure (a crash, a timeout, a result on the wrong device, an exception in the harness's
    code), with the exception's type and first line."""
    why = first_line(r.get("error", ""))
    exc = exception_line(r.get("traceback", ""))
    if exc and exc.split(":", 1)[0] not in why:
        why = f"{why}; {exc}"
    return f"could not run: {who} ({r.get('stage', 'harness')}): {why}"


def verdict(ref, ours, device, case, reference="upstream"):
    """("agree" | "refused" | "disagree" | "error", detail). A NotImplementedError is a refusal
    only when it names an aten operator and the device; any other difference is a disagreement.
    "error" (the case could not run) is the harness's failure, never the operator's answer: either
    side's harness_error (runner.py: a crash, a timeout, the harness's own exception; a result on
    another device is ours answering wrongly, a disagreement), or an exception raised while judging
    the pair; its detail names the exception's type and first line."""
    for who, r in ((f"the {reference} reference", ref), ("ours", ours)):
        if r.get("kind") == "harness_error":
            if who == "ours" and r.get("stage") == "device":  # an answer, computed on another device
                return "disagree", f"[harness]: ours: {first_line(r.get('error', ''))}"
            return "error", could_not_run(r, who)
    try:
        if ours["kind"] == "raised" and ref["kind"] != "raised" \
                and ours["type"] == "builtins.NotImplementedError":
            if refusal_pattern(device).search(ours["message"]):
                return "refused", ours["message"].splitlines()[0]
            return "disagree", f"NotImplementedError that does not name an operator and '{device}': " \
                               f"{ours['message'][:300]}"
        mismatch = compare.compare(ref, ours, options(device, case.family, reference))
    except Exception as e:  # noqa: BLE001 -- the harness's own failure, reported as such
        return "error", f"could not run: the harness raised {type(e).__name__} judging the case: {first_line(e)}"
    return ("agree", "") if mismatch is None else ("disagree", str(mismatch))


def float_errors(ref, ours):
    """(atol, rtol) this pair needs, measured as tests/golden/measure_tolerances.py does: the largest
    |ours - ref| where |ref| < 1, and the largest |ours - ref| / |ref| where |ref| >= 1, over the
    finite float leaves both results hold."""
    worst = [0.0, 0.0]

    def leaves(r):
        if r["kind"] == "tensor":
            return r["data"] if r["dtype"] in compare.FLOAT_DTYPES else []
        return [r["value"]] if r["kind"] == "scalar" and isinstance(r["value"], float) else []

    def walk(r, o):
        if r.get("kind") != o.get("kind"):
            return
        if r["kind"] in ("seq", "dict"):
            for a, b in zip(r["items"], o["items"]):
                walk(*((a[1], b[1]) if r["kind"] == "dict" else (a, b)))
            return
        for a, b in zip(leaves(r), leaves(o)):
            if isinstance(b, (int, float)) and math.isfinite(a) and math.isfinite(b):
                if abs(a) < 1:
                    worst[0] = max(worst[0], abs(b - a))
                else:
                    worst[1] = max(worst[1], abs(b - a) / abs(a))
    walk(ref, ours)
    return tuple(worst)
