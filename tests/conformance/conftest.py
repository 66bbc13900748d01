"""Session fixtures of the conformance suite and its per-device summary.

The summary (agree / refused / disagree per device, the operators refused, the largest errors
per family) is printed at the end of the pytest run and written to
build/conformance/summary-<device>.json."""
import json

import pytest

from . import suite


@pytest.fixture(scope="session")
def oracle():
    return suite.oracle()


@pytest.fixture(scope="session")
def device_batch():
    """device key -> our batch on it (each device's cases run in one process, on first use)."""
    batches, rows = {}, suite.plugin_rows()

    def get(device):
        if device not in batches:
            mine = [r for r in rows or () if device in r["device_keys"]]
            if mine and not any(r["status"] == "ok" for r in mine):  # no process to learn that
                batches[device] = suite.unusable_batch(mine[0])
            else:
                batches[device] = suite.run_device(device)
        return batches[device]
    return get


RECORD = {}  # device -> {case id: {"verdict", "detail", "op", "family", "errors"}}


def summary(device):
    rows = RECORD.get(device, {})
    out = {"device": device, "cases": len(rows)}
    for v in ("agree", "refused", "disagree", "error"):  # error: the harness could not run it
        out[v] = sorted(c for c, r in rows.items() if r["verdict"] == v)
    ops = {}
    for r in rows.values():
        ops.setdefault(r["op"], set()).add(r["verdict"])
    out["operators_agree"] = sorted(o for o, vs in ops.items() if vs == {"agree"})
    out["operators_refused"] = sorted(o for o, vs in ops.items() if "refused" in vs)
    out["operators_disagree"] = sorted(o for o, vs in ops.items() if "disagree" in vs)
    errs = {}
    for r in rows.values():
        if r["verdict"] == "agree" or r["errors"] != (0.0, 0.0):
            e = errs.setdefault(r["family"], [0.0, 0.0])
            e[0], e[1] = max(e[0], r["errors"][0]), max(e[1], r["errors"][1])
    out["max_error_by_family"] = errs
    out["refusals"] = {c: r["detail"] for c, r in rows.items() if r["verdict"] == "refused"}
    out["disagreements"] = {c: r["detail"] for c, r in rows.items() if r["verdict"] == "disagree"}
    out["could_not_run"] = {c: r["detail"] for c, r in rows.items() if r["verdict"] == "error"}
    return out


def pytest_terminal_summary(terminalreporter):
    if not RECORD:
        return
    suite.CACHE.mkdir(parents=True, exist_ok=True)
    terminalreporter.section("conformance (per device: cases / operators)")
    for device in sorted(RECORD):
        s = summary(device)
        could_not_run = f", {len(s['error'])} could not run" if s["error"] else ""
        (suite.CACHE / f"summary-{device}.json").write_text(json.dumps(s, indent=1))
        terminalreporter.write_line(
            f"{device}: {len(s['agree'])} agree, {len(s['refused'])} refused, "
            f"{len(s['disagree'])} disagree{could_not_run} of {s['cases']} cases; operators: "
            f"{len(s['operators_agree'])} agree, {len(s['operators_refused'])} refused "
            f"({', '.join(s['operators_refused'][:12])}{' ...' if len(s['operators_refused']) > 12 else ''}), "
            f"{len(s['operators_disagree'])} disagree {s['operators_disagree']}")
    terminalreporter.write_line(f"details: {suite.CACHE}/summary-<device>.json")
