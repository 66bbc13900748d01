"""Measure the tolerances of torchnative/conformance/tolerances.py on one device.

    .venv/bin/python tests/conformance/measure.py vulkan     # or cpu; add --markdown for docs

Runs every case on the device (our runtime) and upstream's on cpu, and prints, per family, the
(atol, rtol) the cases that ran need (suite.float_errors: the largest absolute error where
|upstream| < 1, the largest relative error where |upstream| >= 1), whether the family was
bit-exact, the tolerance in use, and the proposed one (tolerances.py says how: twice the
measurement, two significant digits, never below the float32 floor). Cases that refused or failed to run are left out and counted; cases that ran
but disagree are measured too, and counted.
"""
import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from conformance import suite  # noqa: E402
from torchnative.conformance import compare, tolerances  # noqa: E402
from torchnative.conformance.cases import CASES, FAMILIES  # noqa: E402


def round_up(x):
    """Up to two significant digits: 1.144e-5 -> 1.2e-5 (0 stays 0)."""
    if x <= 0:
        return 0.0
    e = math.floor(math.log10(x)) - 1
    return float(f"{math.ceil(x / 10 ** e - 1e-9)}e{e}")


def measure(device, ref=None, batch=None):
    """{family: {"cases", "disagree", "not_run", "exact", "measured": [atol, rtol], "in_use", "proposed"}}."""
    ref, batch = ref or suite.oracle(), batch or suite.run_device(device)
    why = suite.unusable(batch, device)
    if why:
        raise RuntimeError(why)
    rows = {f: {"cases": 0, "exact": True, "measured": [0.0, 0.0], "not_run": 0, "disagree": 0} for f in FAMILIES}
    for cid, case in CASES.items():
        r, o, row = ref[cid], batch.results[cid], rows[case.family]
        if o["kind"] in ("raised", "harness_error") and r["kind"] != o["kind"]:
            row["not_run"] += 1
            continue
        row["cases"] += 1
        row["disagree"] += suite.verdict(r, o, device, case)[0] == "disagree"
        row["exact"] &= compare.compare(r, o, {"exact": True}) is None
        a, rel = suite.float_errors(r, o)
        row["measured"] = [max(row["measured"][0], a), max(row["measured"][1], rel)]
    for f, row in rows.items():
        row["in_use"] = tolerances.TOLERANCES.get(device, tolerances.DEFAULT)[f]
        row["proposed"] = "exact" if row["exact"] or f == "exact" else \
            [max(f, round_up(2 * m)) for f, m in zip(tolerances.FLOOR, row["measured"])]
    return rows


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else "vulkan"
    try:
        rows = measure(device)
    except RuntimeError as e:
        sys.exit(str(e))
    if "--markdown" in sys.argv:
        print("| family | cases run | of which disagree | not run (raised) | bit-exact | measured atol "
              "| measured rtol | tolerance | proposed |")
        print("|---|---|---|---|---|---|---|---|---|")
        for f, r in rows.items():
            tol = r["in_use"] if r["in_use"] == "exact" else f"atol {r['in_use'][0]:g}, rtol {r['in_use'][1]:g}"
            print(f"| {f} | {r['cases']} | {r['disagree']} | {r['not_run']} | {'yes' if r['exact'] else 'no'} | "
                  f"{r['measured'][0]:.3g} | {r['measured'][1]:.3g} | {tol} | {r['proposed']} |")
    else:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
