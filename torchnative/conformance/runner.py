"""Run conformance cases on one device in *this* interpreter (upstream torch or ours).

    python runner.py OUT.jsonl IDS.json DEVICE

Speaks the line protocol of batch.py (header, start, id/result lines), so batch.run_batch drives
it and survives crashes and hangs. The header also carries the device's plugin status
(`torchnative backends list`'s row) under torchnative; a device whose plugin is not "ok" runs no
case (the caller reports the status and reason).

Each result is brought back with .cpu() after checking that every tensor the case returned is
on DEVICE (a result silently computed elsewhere is a harness error, never an agreement).
"""
import importlib.util
import json
import pathlib
import signal
import sys
import traceback

HERE = pathlib.Path(__file__).resolve().parent
# Nothing beside this script may shadow an installed module; its siblings are loaded as the
# package `_tn_conformance` by path, since the upstream interpreter (the oracle) has no torchnative.
sys.path[:] = [p for p in sys.path if pathlib.Path(p or ".").resolve() != HERE]
_spec = importlib.util.spec_from_file_location("_tn_conformance", HERE / "__init__.py",
                                               submodule_search_locations=[str(HERE)])
_pkg = importlib.util.module_from_spec(_spec)
sys.modules["_tn_conformance"] = _pkg
_spec.loader.exec_module(_pkg)
from _tn_conformance import wire  # noqa: E402


def plugin_status(device):
    """The backends-list row of the plugin declaring `device`, or None under upstream torch."""
    try:
        from torchnative.backends import backend_rows
    except ImportError:
        return None
    rows = [r for r in backend_rows() if device in r["device_keys"]]
    if not rows:
        return {"status": "not installed", "reason": f"no plugin declares device key '{device}'"}
    ok = [r for r in rows if r["status"] == "ok"]
    r = (ok or rows)[0]
    return {"name": r["name"], "status": r["status"], "reason": r["reason"], "kernels": r["kernels"]}


def to_host(v, torch, device, where="result"):
    if isinstance(v, torch.Tensor):
        if v.device.type != device:
            raise WrongDevice(f"{where} is on {v.device}, expected device type '{device}'")
        return v.cpu()
    if isinstance(v, (tuple, list)):
        return tuple(to_host(x, torch, device, f"{where}[{i}]") for i, x in enumerate(v))
    return v


class WrongDevice(Exception):
    pass


class Emitter:
    """One JSON line per event, flushed (the parent reads them after a crash too)."""

    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8")

    def __call__(self, obj):
        self.file.write(json.dumps(obj) + "\n")
        self.file.flush()


def from_harness(e):
    """Whether a case's exception is the harness's own bug rather than the operator's answer: a
    NameError or SyntaxError raised in this package's code (cases.py and its helpers), which no
    torch operator raises. Such a case could not run; it neither agrees nor disagrees."""
    if not isinstance(e, (NameError, SyntaxError)):
        return False
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and pathlib.Path(tb.tb_frame.f_code.co_filename).resolve().parent == HERE


def run_case(fn, device, torch):
    """One case's encoded result: its value, the exception it raised (the case's own exception is
    its result), or a harness_error (the seed, the harness's own bug, a result on the wrong device,
    a value that cannot be serialised, a timeout)."""
    try:
        torch.manual_seed(0)
    except BaseException as e:  # noqa: B036
        return wire.harness_error("manual_seed", e)
    signal.alarm(60)
    try:
        try:  # .cpu() belongs to the case: a device that cannot copy back refuses there
            value = to_host(fn(device), torch, device)
        except (wire.CaseTimeout, WrongDevice):
            raise
        except BaseException as e:
            return wire.harness_error("case", e) if from_harness(e) else wire.exc_record(e)
        try:
            return wire.encode(value, torch)
        except wire.CaseTimeout:
            raise
        except BaseException as e:
            return wire.harness_error("serialise", e)
    except WrongDevice as e:
        return wire.harness_error("device", e)
    except wire.CaseTimeout as e:
        return wire.harness_error("timeout", e)
    finally:
        signal.alarm(0)


def main(out_path, ids_path, device):
    ids, emit = json.loads(pathlib.Path(ids_path).read_text()), Emitter(out_path)
    try:
        import torch
    except BaseException:  # noqa: B036 -- anything, a broken build included: recorded, not raised
        emit({"import_error": traceback.format_exc()})
        return 3
    try:
        status = plugin_status(device)
        from _tn_conformance.cases import CASES
    except BaseException as e:  # noqa: B036 -- the harness's own failure: every case could not run
        emit({"setup_error": wire.harness_error("setup", e)})
        return 3
    emit({"header": {"torch": getattr(torch, "__version__", None), "python": sys.executable,
                     "device": device, "torchnative": status}})
    if status is not None and status["status"] != "ok":
        return 0
    signal.signal(signal.SIGALRM, wire.on_alarm)
    for cid in ids:
        emit({"start": cid})
        emit({"id": cid, "result": run_case(CASES[cid].fn, device, torch)})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
