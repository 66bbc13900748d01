"""`torchnative conformance DEVICE`: every conformance case on DEVICE, compared with the same case
on cpu (our cpu backend, in another process of this interpreter) and, with `--upstream PYTHON`, with
upstream torch 2.13.0 on cpu (an interpreter that has it). One line per case; exit 1 when a case
disagrees or cannot run, or the device's plugin is not usable.

A case the device has no kernel for passes as "refused" when it refuses by name
(NotImplementedError naming the aten operator and the device), as the suite rules
(suite.verdict); `--no-refusals` makes refusals fail too.
"""

from __future__ import annotations

import json
import sys

from . import suite
from .cases import CASES


def run(device: str, upstream: str | None = None, ids=None, python: str | None = None) -> dict:
    """{"device", "unusable", "cases": {id: {"op", "family", "verdict", "detail", "against"}}}."""
    python = python or sys.executable
    ids = list(ids or CASES)
    mine = suite.run_device(device, python, ids)
    report = {"device": device, "unusable": suite.unusable(mine, device), "cases": {}}
    if report["unusable"]:
        return report
    references = {"cpu": suite.run_device("cpu", python, ids)}
    if upstream:
        references["upstream"] = suite.run_device("cpu", upstream, ids)
    for name, ref in references.items():
        why = suite.unusable(ref, "cpu")
        if why:
            raise RuntimeError(f"the {name} reference could not run: {why}")
    for cid in ids:
        case, ours = CASES[cid], mine.results[cid]
        row = {"op": case.op, "family": case.family, "verdict": "agree", "detail": "", "against": []}
        for name, ref in references.items():
            r = ref.results[cid]
            if name == "cpu" and cid in suite.CPU_DIFFERS and device != "cpu":
                continue  # judged by upstream alone, when given
            row["against"].append(name)
            v, detail = suite.verdict(r, ours, device, case, reference=name)  # "error": could not run
            if v != "agree":  # the first failing reference decides, and says which it was
                row.update(verdict=v, detail=f"against {name}: {detail}")
                break
        if not row["against"]:
            row.update(verdict="skipped", detail=f"cpu is no reference here: {suite.CPU_DIFFERS[cid]}")
        report["cases"][cid] = row
    return report


def main(args) -> int:
    unknown = [c for c in args.cases or () if c not in CASES]
    if unknown:
        print(f"torchnative conformance: unknown case(s) {unknown}; `--list` shows them")
        return 2
    if args.list:
        for cid, c in CASES.items():
            print(f"{cid}\t{c.op}\t{c.family}")
        return 0
    try:
        report = run(args.device, args.upstream, args.cases)
    except RuntimeError as e:  # a reference that cannot run: nothing was judged
        print(f"torchnative conformance: {e}")
        return 1
    failing = {"disagree", "error"} | ({"refused"} if args.no_refusals else set())
    rows = report["cases"]
    counts = {v: sum(r["verdict"] == v for r in rows.values()) for v in ("agree", "refused", "disagree", "error", "skipped")}
    ok = not report["unusable"] and not any(r["verdict"] in failing for r in rows.values())
    if args.json:
        print(json.dumps({**report, "counts": counts, "passed": ok}, indent=1))
        return 0 if ok else 1
    if report["unusable"]:
        print(f"torchnative conformance: {report['unusable']}")
        return 1
    for cid, r in rows.items():
        mark = "FAIL" if r["verdict"] in failing else "PASS"
        detail = f"  {r['detail'].splitlines()[0][:200]}" if r["detail"] else ""
        print(f"{mark} {r['verdict']:<8} {cid} ({r['op']}, {r['family']}){detail}")
    against = "cpu and upstream" if args.upstream else "cpu"
    print(f"{args.device} against {against}: {counts['agree']} agree, {counts['refused']} refused, "
          f"{counts['disagree']} disagree, {counts['error']} could not run, {counts['skipped']} skipped, "
          f"of {len(rows)} cases")
    return 0 if ok else 1


def add_parser(sub) -> None:
    """`conformance` under `torchnative`."""
    p = sub.add_parser("conformance", help="run the conformance cases on a device and compare them with cpu "
                       "(and upstream torch); exit 1 on a disagreement")
    p.add_argument("device", nargs="?", default="cpu", help="device key, e.g. vulkan or your backend's")
    p.add_argument("--upstream", metavar="PYTHON", help="also compare with upstream torch 2.13.0 run by this "
                   "interpreter")
    p.add_argument("--cases", type=lambda s: [c for c in s.split(",") if c], help="comma-separated case ids")
    p.add_argument("--no-refusals", action="store_true", help="a refusal by name fails too")
    p.add_argument("--list", action="store_true", help="list the cases (id, operator, family) and exit")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=main)
