"""Upstream's OpInfo samples replayed on torchnative and compared with upstream's results.

    REF/bin/python tools/opinfo_agreement.py record DIR [--ops a,b] [--samples N] [--dtypes reduced]
    .venv/bin/python tools/opinfo_agreement.py replay DIR [--json OUT]

`record` runs in the reference interpreter: for every OpInfo and each of float32, float64, int64
and bool the OpInfo supports on CPU, the first N sample inputs (seeded) and what the operator
returned — or the exception type it raised — are written with torch.save, one file per OpInfo.
`replay` runs in ours: it loads each file, runs the same OpInfo (from our op_db) on the same
inputs and compares value, shape, dtype and exception type. Comparisons use Python numbers, not
torch operators, so a wrong operator cannot hide a wrong result. Each OpInfo is classed agree,
disagree, refused (NotImplementedError naming what is missing) or error.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import signal
import sys
import time
import warnings
from pathlib import Path

DTYPES = ("float32", "float64", "int64", "bool")
# `--dtypes reduced`: the reduced-precision floats, compared at torch.testing's tolerances for them
REDUCED = ("bfloat16", "float16")
SEED = 1234  # set before every call on both sides: random operators draw the same numbers
# operators whose values are whatever memory held: only shape and dtype are compared
UNINITIALIZED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}
# float tolerances (torch.testing's defaults for these dtypes), widened per OpInfo by upstream's
# own toleranceOverride decorators
# OpInfos whose results are defined only up to the signs of singular or eigen vectors. When two
# valid implementations differ there, upstream's own TestCommon.test_compare_cpu (test/test_ops.py)
# compares `sample.output_process_fn_grad(result)` of both (|U|, |Vh|, U @ Vh, eigenvalues and
# |eigenvectors|), and so does `replay` for these entries, only when the raw results differ; the
# entry is then reported as agreeing "up to sign". Every other entry compares raw results.
UP_TO_SIGN = {"linalg.svd", "svd", "linalg.eigh", "linalg.eig", "svd_lowrank", "pca_lowrank"}
# torch.testing.assert_close's defaults per dtype (a complex dtype as its parts' float dtype)
TOL = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7), "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
       "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7), "complex32": (1e-3, 1e-5)}


def _key(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _clone(x, torch):
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v, torch) for v in x) if not hasattr(x, "_fields") else x
    if isinstance(x, dict):
        return {k: _clone(v, torch) for k, v in x.items()}
    return x


def _run(op, sample_input, args, kwargs):
    return op.op(sample_input, *args, **kwargs)


def record(out_dir, ops, n_samples, dtypes=DTYPES, call=None):
    """`call(op, input, args, kwargs)` computes what is recorded (default: the operator itself;
    tools/vmap_agreement.py records its vmap)."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = 0
    for op in op_db:
        if ops and op.name not in ops and _key(op) not in ops:
            continue
        supported = op.supported_dtypes("cpu")
        records = []
        for name in dtypes:
            dtype = getattr(torch, name)
            if dtype not in supported:
                continue
            torch.manual_seed(0)
            try:
                samples = list(op.sample_inputs("cpu", dtype))[:n_samples]
            except Exception:  # noqa: BLE001 - upstream cannot make samples: nothing to compare
                continue
            for i, s in enumerate(samples):
                # the inputs as they are before the call (views keep their storage and offset)
                buf = io.BytesIO()
                try:
                    torch.save((s.input, s.args, s.kwargs), buf)
                except Exception:  # noqa: BLE001 - samples holding functions can't be saved
                    continue
                torch.manual_seed(SEED)
                try:
                    res = (call or _run)(op, s.input, s.args, s.kwargs)
                    entry = {"result": _clone(res, torch)}
                except Exception as e:  # noqa: BLE001 - the exception type is the expected result
                    entry = {"raises": type(e).__name__}
                entry.update(dtype=name, sample=i, inputs=buf.getvalue())
                records.append(entry)
        if records:
            try:
                torch.save(records, out_dir / f"{_key(op)}.pt")
                written += 1
            except Exception:  # noqa: BLE001 - samples holding functions or generators can't be saved
                continue
    print(json.dumps({"recorded": written, "torch": torch.__version__}))


# --- comparison in plain Python ---------------------------------------------------------------

def _flat(t):
    return t.detach().reshape(-1).tolist()


def compare(ref, ours, torch, path="result", values=True):
    """None when `ours` agrees with `ref`, else a one-line reason (`values=False`: shape and
    dtype only)."""
    if isinstance(ref, torch.Tensor):
        if not isinstance(ours, torch.Tensor):
            return f"{path}: expected a tensor, got {type(ours).__name__}"
        if list(ref.shape) != list(ours.shape):
            return f"{path}: shape {list(ours.shape)}, expected {list(ref.shape)}"
        if ref.dtype != ours.dtype:
            return f"{path}: dtype {ours.dtype}, expected {ref.dtype}"
        if not values:
            return None
        if ref.is_complex():
            a, b = _flat(torch.view_as_real(ref.resolve_conj())), _flat(torch.view_as_real(ours.resolve_conj()))
            return None if _close(a, b, str(ref.dtype).replace("torch.", "")) else f"{path}: values differ ({_worst(a, b)})"
        a, b = _flat(ref), _flat(ours)
        if ref.is_floating_point():
            return None if _close(a, b, str(ref.dtype).replace("torch.", "")) else f"{path}: values differ ({_worst(a, b)})"
        return None if a == b else f"{path}: values differ"
    if isinstance(ref, (list, tuple)):
        if not isinstance(ours, (list, tuple)) or len(ref) != len(ours):
            return f"{path}: expected a sequence of {len(ref)}"
        for i, (r, o) in enumerate(zip(ref, ours)):
            why = compare(r, o, torch, f"{path}[{i}]", values)
            if why:
                return why
        return None
    if isinstance(ref, float) and isinstance(ours, float):
        return None if _close([ref], [ours], "float64") else f"{path}: {ours} != {ref}"
    return None if ref == ours else f"{path}: {ours!r} != {ref!r}"


def _close(a, b, dtype):
    rtol, atol = TOL.get(dtype, (1e-7, 1e-7))
    for x, y in zip(a, b):
        if math.isnan(x) or math.isnan(y):
            if not (math.isnan(x) and math.isnan(y)):
                return False
        elif math.isinf(x) or math.isinf(y):
            if x != y:
                return False
        elif abs(x - y) > atol + rtol * abs(x):
            return False
    return True


def _worst(a, b):
    worst = max((abs(x - y) for x, y in zip(a, b) if not (math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y))),
                default=0.0)
    return f"largest difference {worst:.3g}"


class Timeout(Exception):
    pass


def replay(ref_dir, json_out, timeout):
    warnings.filterwarnings("ignore")
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    by_key = {_key(op): op for op in op_db}
    results = {}

    def on_alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    t0 = time.time()
    for f in sorted(Path(ref_dir).glob("*.pt")):
        key = f.name[:-3]
        op = by_key.get(key)
        if op is None:
            continue
        signal.alarm(timeout)
        try:
            results[key] = _replay_one(op, torch.load(f, weights_only=False), torch)
        except Timeout:
            results[key] = {"status": "error", "detail": f"timeout after {timeout}s"}
        except Exception as e:  # noqa: BLE001 - a broken file or loader: recorded, not fatal
            results[key] = {"status": "error", "detail": f"{type(e).__name__}: {e}"[:300]}
        finally:
            signal.alarm(0)
        results[key]["family"] = family(op)
    counts, by_family = {}, {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
        fam = by_family.setdefault(r["family"], {})
        fam[r["status"]] = fam.get(r["status"], 0) + 1
    summary = {"torch": torch.__version__, "ops": len(results), "counts": counts, "by_family": by_family,
               "seconds": round(time.time() - t0, 1)}
    print(json.dumps(summary))
    if json_out:
        Path(json_out).write_text(json.dumps({"summary": summary, "results": results}, indent=1, sort_keys=True))
    return results


def family(op):
    """A family name for reports: the namespace (linalg, special, fft, nn) or the OpInfo class
    (UnaryUfuncInfo -> unary elementwise, ReductionOpInfo -> reduction, ...)."""
    for prefix, name in (("linalg.", "linalg"), ("special.", "special"), ("fft.", "fft"),
                         ("nn.functional.", "nn.functional"), ("_refs", "refs"), ("_foreach", "foreach")):
        if op.name.startswith(prefix):
            return name
    cls = type(op).__name__
    return {"UnaryUfuncInfo": "unary elementwise", "BinaryUfuncInfo": "binary elementwise",
            "ReductionOpInfo": "reduction", "ShapeFuncInfo": "shape", "ForeachFuncInfo": "foreach"}.get(cls, "other")


def _tolerances(op, torch):
    """Upstream's own toleranceOverride for this OpInfo in TestCommon (the widest, per dtype)."""
    from torch.testing._internal.common_device_type import toleranceOverride

    out = {}
    for d in op.decorators:
        if getattr(d, "cls_name", None) not in (None, "TestCommon"):
            continue
        for dec in getattr(d, "decorators", ()):
            if isinstance(dec, toleranceOverride):
                for dtype, t in dec.d.items():
                    name = str(dtype).replace("torch.", "")
                    rtol, atol = out.get(name, (0.0, 0.0))
                    out[name] = (max(rtol, t.rtol), max(atol, t.atol))
    return out


def _replay_one(op, records, torch):
    global TOL
    base = dict(TOL)
    for name, (rtol, atol) in _tolerances(op, torch).items():
        r0, a0 = base.get(name, (0.0, 0.0))
        base[name] = (max(r0, rtol), max(a0, atol))
    saved, TOL = TOL, base
    try:
        return _replay_records(op, records, torch)
    finally:
        TOL = saved


def _sign_free_fn(op, rec, torch, cache={}):
    """The output_process_fn_grad of the sample `rec` replays (samples regenerated on this side,
    seeded as `record` seeds them; only the function is used, the inputs come from the file)."""
    key = (_key(op), rec["dtype"])
    if key not in cache:
        torch.manual_seed(0)
        cache[key] = [s.output_process_fn_grad for s in op.sample_inputs("cpu", getattr(torch, rec["dtype"]))]
    fns = cache[key]
    return fns[rec["sample"]] if rec["sample"] < len(fns) else None


def _replay_records(op, records, torch):
    up_to_sign = 0
    for rec in records:
        where = f"{rec['dtype']} sample {rec['sample']}"
        inp, args, kwargs = torch.load(io.BytesIO(rec["inputs"]), weights_only=False)
        torch.manual_seed(SEED)
        try:
            got = _run(op, inp, args, kwargs)
        except NotImplementedError as e:
            if rec.get("raises") == "NotImplementedError":
                continue
            return {"status": "refused", "detail": f"{where}: {e}"[:300]}
        except Exception as e:  # noqa: BLE001 - compared with what upstream raised
            if rec.get("raises") == type(e).__name__:
                continue
            if "raises" in rec:
                return {"status": "disagree", "detail": f"{where}: raised {type(e).__name__}, upstream {rec['raises']}"}
            return {"status": "error", "detail": f"{where}: {type(e).__name__}: {e}"[:300]}
        if "raises" in rec:
            return {"status": "disagree", "detail": f"{where}: returned, upstream raised {rec['raises']}"}
        why = compare(rec["result"], got, torch, values=op.name.split(".")[0] not in UNINITIALIZED)
        if why and _key(op) in UP_TO_SIGN:
            fn = _sign_free_fn(op, rec, torch)
            if fn is not None and compare(fn(rec["result"]), fn(got), torch) is None:
                why, up_to_sign = None, up_to_sign + 1
        if why:
            return {"status": "disagree", "detail": f"{where}: {why}"[:300]}
    sign = f" ({up_to_sign} agree up to the signs of singular/eigen vectors)" if up_to_sign else ""
    return {"status": "agree", "detail": f"{len(records)} samples{sign}"}


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["record", "replay"])
    ap.add_argument("dir")
    ap.add_argument("--ops", default="")
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--json", default="")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--dtypes", default="", help="record: comma-separated dtype names, or 'reduced' for "
                    f"{', '.join(REDUCED)} (default: {', '.join(DTYPES)})")
    args = ap.parse_args(argv)
    if args.mode == "record":
        dtypes = REDUCED if args.dtypes == "reduced" else tuple(filter(None, args.dtypes.split(","))) or DTYPES
        record(args.dir, set(filter(None, args.ops.split(","))), args.samples, dtypes)
    else:
        replay(args.dir, args.json, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
