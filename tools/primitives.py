#!/usr/bin/env python3
"""The primitive set: the kernels the core launches, i.e. what a backend must implement for every
other operator to compose on its device. Generated from the code, two ways that check each other:

  traced  every kernel name the core looks up (core/src/registry.rs `_tn_trace_kernels`) while
          upstream's OpInfo samples (forward, the in-place variant, and backward of float32
          samples) and the golden and conformance cases run on cpu, in a subprocess of
          .venv/bin/python, with the native fast paths off (they mirror Python implementations
          and decline when a kernel is missing: the Python ones say what is launched or asked);
  static  every `launch("name", ...)` (and the `_launch` helpers), `_tn_launch("name", ...)` and `_tn_has_kernel("name", ...)`
          with a literal name in the core's Python, and `_tn_launch(py, "name"` /
          `registry::kernel("name"` in its Rust. Launch sites whose name is a variable (a table of
          unary operators, a reduction helper) are only found by the trace.

A primitive is *optional* when the core asks `_tn_has_kernel` for it first and composes the
operator otherwise (native_batch_norm, addcmul, var_mean.correction, ...); the others are
*required*. Writes core/python/torchnative_core/data/primitives.json (read by
`torchnative backends primitives`) and the table in docs/plugins.md between its markers.

    python3 tools/primitives.py            # regenerate both
    python3 tools/primitives.py --check    # exit 1 when either differs from the code (tests/test_primitives.py)
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE_PY = REPO / "core" / "python" / "torchnative_core"
CORE_RS = REPO / "core" / "src"
DATA = CORE_PY / "data" / "primitives.json"
RECORD = DATA.relative_to(REPO).as_posix()  # the figures' record, named in the table for tools/check_docs.py
DOC = REPO / "docs" / "plugins.md"
BEGIN, END = "<!-- primitives:begin (tools/primitives.py writes this table) -->", "<!-- primitives:end -->"
VENV_PY = REPO / ".venv" / "bin" / "python"
LAUNCHERS = {"launch": "launch", "_launch": "launch", "_tn_launch": "launch", "_tn_has_kernel": "probe"}
RUST_LITERAL = re.compile(r'(?:_tn_launch\(\s*py,\s*|registry::kernel\(\s*)"([^"]+)"')


# --- static ---------------------------------------------------------------------------------
def static_sites() -> list[dict]:
    """Every launch or probe site in the core: {"file", "line", "kind": launch|probe, "name": str|None}
    (None: the name is computed, so only the trace knows it)."""
    sites = []
    for path in sorted(CORE_PY.rglob("*.py")):
        if "generated" in path.relative_to(CORE_PY).parts:
            continue
        rel = path.relative_to(REPO).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if fname not in LAUNCHERS or not node.args:
                continue
            # cpu_fallback.launch(C, op, ...) and ops' base.launch itself pass the name through
            first = node.args[1] if fname == "launch" and isinstance(node.args[0], ast.Name) \
                and node.args[0].id == "C" else node.args[0]
            name = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            sites.append({"file": rel, "line": node.lineno, "kind": LAUNCHERS[fname], "name": name})
    for path in sorted(CORE_RS.rglob("*.rs")):
        text = path.read_text()
        for m in RUST_LITERAL.finditer(text):
            sites.append({"file": path.relative_to(REPO).as_posix(), "line": text.count("\n", 0, m.start()) + 1,
                          "kind": "launch", "name": m.group(1)})
    return sites


# --- traced ---------------------------------------------------------------------------------
SAMPLES = 3  # OpInfo samples per operator and dtype: enough to reach each path the dtype takes
TIMEOUT = 20  # seconds per OpInfo and dtype, per golden or conformance case


def trace() -> dict:
    """Runs in our runtime: {"launched": [...], "probed": [...]} over the samples and cases."""
    import signal
    import warnings

    warnings.simplefilter("ignore")
    sys.path.insert(0, str(REPO / "tests"))
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    from golden import registry as golden

    from torchnative.conformance.cases import CASES

    class Timeout(BaseException):
        pass

    def alarm(*_):
        raise Timeout

    def guarded(fn):
        signal.alarm(TIMEOUT)
        try:
            torch.manual_seed(1234)
            fn()
        except Timeout:
            print(f"primitives: {fn.__name__} timed out", file=sys.stderr)
        except Exception:  # noqa: BLE001 -- a refusal or a wrong sample still traced its launches
            pass
        finally:
            signal.alarm(0)

    def opinfo(op, dtype):
        def run():
            grad = dtype is torch.float32 and op.supports_autograd
            for i, s in enumerate(op.sample_inputs("cpu", dtype, requires_grad=grad)):
                if i >= SAMPLES:
                    break
                one(lambda: op(s.input, *s.args, **s.kwargs), grad)
                if op.inplace_variant is not None:
                    one(lambda: op.inplace_variant(s.input.detach().clone(), *s.args, **s.kwargs), False)
        run.__name__ = f"{op.name} {dtype}"
        return run

    def one(call, grad):
        try:
            out = call()
            if grad:
                outs = out if isinstance(out, (tuple, list)) else (out,)
                ts = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
                if ts:
                    sum(t.float().sum() for t in ts).backward()
        except Timeout:
            raise
        except Exception:  # noqa: BLE001
            pass

    signal.signal(signal.SIGALRM, alarm)
    # The native fast paths (core/src/fastpath.rs) mirror Python implementations and decline when
    # the device lacks the kernel; traced with them on, an optional kernel they look up (addcmul_)
    # would look required. Off, the Python implementations say what they launch and what they ask.
    torch._C._tn_fast_paths_enabled(False)
    torch._C._tn_trace_kernels(True)
    for op in op_db:
        for dtype in (torch.float32, torch.int64, torch.bool):
            if dtype in op.supported_dtypes("cpu"):
                guarded(opinfo(op, dtype))
    for c in golden.load_all().values():
        guarded(c.fn)
    for c in CASES.values():
        guarded(lambda: c.fn("cpu"))
    launched, probed = torch._C._tn_trace_kernels(False)
    return {"launched": launched, "probed": probed}


@functools.cache
def traced() -> dict:
    with tempfile.TemporaryDirectory() as tmp:  # cwd: nothing in the repo root shadows a package
        r = subprocess.run([str(VENV_PY), __file__, "trace"], capture_output=True, text=True, timeout=1800, cwd=tmp)
    if r.returncode != 0:
        sys.exit(f"primitives: the trace failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.splitlines()[-1])


# --- the set --------------------------------------------------------------------------------
def primitive_set(sites: list[dict], trace_: dict) -> dict:
    launched = set(trace_["launched"]) | {s["name"] for s in sites if s["kind"] == "launch" and s["name"]}
    probed = set(trace_["probed"]) | {s["name"] for s in sites if s["kind"] == "probe" and s["name"]}
    static = {s["name"] for s in sites if s["name"]}
    rows = []
    for name in sorted(launched | probed):
        found = [w for w, names in (("static", static), ("traced", set(trace_["launched"]) | set(trace_["probed"])))
                 if name in names]
        rows.append({"name": name, "required": name not in probed, "found_by": found})
    return {
        "about": "The primitive set: kernels the core launches (tools/primitives.py generates this file; "
                 "do not edit). required: the core has no other way to compute them; optional: the core "
                 "asks for the kernel first and composes the operator without it.",
        "count": len(rows),
        "required": sum(r["required"] for r in rows),
        "optional": sum(not r["required"] for r in rows),
        "primitives": rows,
    }


def table(data: dict) -> str:
    rec = f"<!-- record: {RECORD} json"
    lines = [BEGIN, "",
             f"**{data['count']} primitives**{rec} count -->: **{data['required']} required**{rec} required -->, "
             f"**{data['optional']} optional**{rec} optional --> (the core composes the operator when the device "
             "lacks an optional one).", "",
             "| primitive | required | found by |", "|---|---|---|"]
    lines += [f"| `{r['name']}` | {'yes' if r['required'] else 'optional'} | {', '.join(r['found_by'])} |"
              for r in data["primitives"]]
    return "\n".join(lines + ["", END])


def doc_with_table(doc: str, data: dict) -> str:
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"primitives: {DOC.relative_to(REPO)} has no {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN, 1)
    return head + table(data) + rest.split(END, 1)[1]


def dumps(data: dict) -> str:
    return json.dumps(data, indent=1) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", nargs="?", choices=["write", "check", "trace"], default="write")
    ap.add_argument("--check", action="store_true", help="same as the `check` mode")
    args = ap.parse_args(argv)
    if args.mode == "trace":
        print(json.dumps(trace()))
        return 0
    data = primitive_set(static_sites(), traced())
    doc = doc_with_table(DOC.read_text(), data)
    if args.check or args.mode == "check":
        # the two ways check each other: a literal launch site no sample reaches is untested
        unreached = sorted({s["name"] for s in static_sites() if s["name"]}
                           - set(traced()["launched"]) - set(traced()["probed"]))
        if unreached:
            print(f"primitives: launched by name in the core but never reached by the samples: {unreached} "
                  "-- add a golden or conformance case that runs them")
            return 1
        stale = [str(p) for p, want in ((DATA, dumps(data)), (DOC, doc)) if not p.exists() or p.read_text() != want]
        if stale:
            old = json.loads(DATA.read_text())["primitives"] if DATA.exists() else []
            was, now = {r["name"] for r in old}, {r["name"] for r in data["primitives"]}
            print(f"primitives: stale {', '.join(stale)}; added {sorted(now - was)}, removed {sorted(was - now)} "
                  "-- run python3 tools/primitives.py")
            return 1
        print(f"primitives: {data['count']} ({data['required']} required, {data['optional']} optional), up to date")
        return 0
    DATA.write_text(dumps(data))
    DOC.write_text(doc)
    print(f"primitives: {data['count']} ({data['required']} required, {data['optional']} optional) -> "
          f"{DATA.relative_to(REPO)}, {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
