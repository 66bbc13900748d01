"""Operator coverage: what is implemented, what is demanded, and the difference (issue 4).

    .venv/bin/python tools/coverage_report.py [--demand FILE.json ...] [--write-status]

Implemented: the overloads with an implementation at the door (a composition or a meta step,
device-independent), and per device key the kernels its backend registered. Demanded: the
operators named in refusals ("aten.X has no kernel", "the derivative for 'aten::X'") recorded in
JSON reports of tools/opinfo_agreement.py, tools/gradcheck_sweep.py or a model sweep (any JSON
whose strings carry such refusals). The difference, most demanded first, is what to build
next. --write-status replaces the block between the coverage markers in docs/STATUS.md.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REFUSAL = re.compile(r"aten\.([\w.]+) has no kernel|derivative for 'aten::([\w.]+)'|aten\.([\w.]+) (?:with|is) [^\"]*not implemented")
BEGIN, END = "<!-- coverage:begin -->", "<!-- coverage:end -->"


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def demanded(paths):
    counts = collections.Counter()
    for p in paths:
        for s in _strings(json.loads(Path(p).read_text())):
            for m in REFUSAL.finditer(s):
                name = next(g for g in m.groups() if g)
                counts[name.removesuffix(".default")] += 1
    return counts


def implemented():
    import torch
    from torchnative_core.ops import IMPLS

    kernels = {dev: sorted(k.removeprefix("aten::") for k in ks)
               for per_plugin in torch._C._tn_registered_kernels().values() for dev, ks in per_plugin.items()}
    return sorted(IMPLS), kernels


def report(demand_files):
    impls, kernels = implemented()
    want = demanded(demand_files)
    missing = [(op, n) for op, n in want.most_common() if op not in impls]
    from torchnative_core.ops import IMPLS

    generic = sum(1 for op in impls if IMPLS[op].__module__.rsplit(".", 1)[-1] in ("inplace", "out_variants", "foreach"))
    lines = [
        f"Implemented at the door: {len(impls)} operator overloads, {generic} of them in-place, out= or _foreach_ forms "
        f"derived from a functional one ({', '.join(f'{dev}: {len(ks)} kernels' for dev, ks in sorted(kernels.items()))}).",
        f"Demanded by refusals in {len(demand_files)} report(s): {len(want)} operators; not implemented: {len(missing)}.",
    ]
    if missing:
        lines.append("Next to build (times refused): " + ", ".join(f"`{op}` ({n})" for op, n in missing[:40]))
    return {"implemented": impls, "kernels": kernels, "demanded": dict(want), "missing": missing}, "\n".join(lines)


def write_status(text, begin=BEGIN, end=END, heading="Operator coverage", doc="STATUS.md"):
    """Replace the block between `begin` and `end` in docs/<doc> (appended under `heading` the
    first time). Also used by tools/model_sweep.py for its block in docs/transformers.md."""
    status = REPO / "docs" / doc
    status.write_text(replace_block(status.read_text(), text, begin, end, heading))


def replace_block(body, text, begin=BEGIN, end=END, heading="Operator coverage"):
    block = f"{begin}\n{text}\n{end}"
    if begin in body:
        return re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, body, flags=re.S)
    return body.rstrip() + f"\n\n## {heading}\n\n" + block + "\n"


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--demand", nargs="*", default=[])
    ap.add_argument("--json", default="")
    ap.add_argument("--write-status", action="store_true")
    args = ap.parse_args(argv)
    data, text = report(args.demand)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1))
    if args.write_status:
        write_status(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
