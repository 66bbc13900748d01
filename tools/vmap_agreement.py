"""torch.vmap over upstream's OpInfo samples, on torchnative and on upstream, compared.

    REF/bin/python tools/vmap_agreement.py record DIR [--ops a,b] [--samples N]
    .venv/bin/python tools/vmap_agreement.py replay DIR [--json OUT] [--list OUT]

`record` runs in the reference interpreter: for every OpInfo supporting float32 on CPU, the first
N sample inputs (seeded) are batched: every tensor argument (the sample's input and the tensors
among its positional arguments) becomes a batch of two along dimension 0, itself and, for
floating tensors, itself times 0.75 (a scale keeps most operators' domains: orderings, positive
definiteness, probabilities); then `torch.vmap` of the operator over those batches runs, and its
result, or the exception type it raised, is saved. `replay` runs the same in ours and compares
value, shape, dtype and exception type with tools/opinfo_agreement.py's comparator. Each OpInfo is
classed agree, disagree, refused (NotImplementedError naming what is missing) or error.
"""

from __future__ import annotations

import argparse
import io
import json
import signal
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import opinfo_agreement as OA  # noqa: E402  (the comparator and the OpInfo key)

SEED = 1234


def batched_call(op, torch, inp, args, kwargs):
    """vmap of the OpInfo's operator over a batch of two of each tensor argument."""
    positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]

    if not isinstance(inp, torch.Tensor):
        raise TypeError("the sample's input is not a tensor")

    def batch(t):
        second = t * 0.75 if (t.is_floating_point() or t.is_complex()) else t.clone()
        return torch.stack([t, second])

    def fn(x, *tensors):
        full = list(args)
        for i, t in zip(positions, tensors):
            full[i] = t
        return op.op(x, *full, **kwargs)

    batched = [batch(inp)] + [batch(args[i]) for i in positions]
    return torch.vmap(fn)(*batched)


def record(out_dir, ops, n_samples):
    import torch

    warnings.filterwarnings("ignore")
    OA.record(out_dir, ops, n_samples, dtypes=("float32",),
              call=lambda op, inp, args, kwargs: batched_call(op, torch, inp, args, kwargs))


def _magnitudes(x, torch):
    if isinstance(x, torch.Tensor):
        return x.abs()
    if isinstance(x, (list, tuple)):
        return [_magnitudes(v, torch) for v in x]
    return x


def _replay_one(op, records, torch):
    worst = "agree"
    why = None
    for rec in records:
        inp, args, kwargs = torch.load(io.BytesIO(rec["inputs"]), weights_only=False)
        torch.manual_seed(SEED)
        try:
            got = batched_call(op, torch, inp, args, kwargs)
        except NotImplementedError as e:
            if "raises" in rec and rec["raises"] == "NotImplementedError":
                continue
            return "refused", str(e).split("\n")[0][:200]
        except Exception as e:  # noqa: BLE001 - compared with upstream's exception type
            if rec.get("raises") == type(e).__name__:
                continue
            return "error", f"sample {rec['sample']}: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}" \
                + (f" (upstream raised {rec['raises']})" if "raises" in rec else "")
        if "raises" in rec:
            worst, why = "disagree", f"sample {rec['sample']}: upstream raised {rec['raises']}, ours returned"
            continue
        key = OA._key(op)
        ref = rec["result"]
        if key in OA.UP_TO_SIGN:  # vectors defined up to sign: compared in magnitude
            ref, got = _magnitudes(ref, torch), _magnitudes(got, torch)
        diff = OA.compare(ref, got, torch, values=key not in OA.UNINITIALIZED and op.name not in OA.UNINITIALIZED)
        if diff:
            worst, why = "disagree", f"sample {rec['sample']}: {diff}"
    return worst, why


def replay(ref_dir, json_out, list_out, timeout):
    warnings.filterwarnings("ignore")
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    by_key = {OA._key(op): op for op in op_db}
    results = {}
    valued = set()  # entries where upstream returned a value for at least one sample

    def on_alarm(*_):
        raise OA.Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    start = time.time()
    for path in sorted(Path(ref_dir).glob("*.pt")):
        key = path.stem
        op = by_key.get(key)
        if op is None:
            continue
        signal.alarm(timeout)
        try:
            records = torch.load(path, weights_only=False)
            if any("result" in r for r in records):
                valued.add(key)
            cls, why = _replay_one(op, records, torch)
        except OA.Timeout:
            cls, why = "error", f"timeout after {timeout} s"
        except Exception as e:  # noqa: BLE001 - a broken file or loader: recorded, not fatal
            cls, why = "error", f"{type(e).__name__}: {e}"[:300]
        finally:
            signal.alarm(0)
        results[key] = {"class": cls, **({"why": why} if why else {})}
    counts = {}
    for r in results.values():
        counts[r["class"]] = counts.get(r["class"], 0) + 1
    summary = {"ops": len(results), "counts": counts, "with_values": len(valued),
               "agree_with_values": sum(1 for k in valued if results.get(k, {}).get("class") == "agree"),
               "seconds": round(time.time() - start, 1)}
    print(json.dumps(summary))
    if json_out:
        Path(json_out).write_text(json.dumps({"summary": summary, "ops": results}, indent=1, sort_keys=True) + "\n")
    if list_out:
        Path(list_out).write_text("".join(f"{k}\n" for k, r in sorted(results.items()) if r["class"] == "agree"))


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["record", "replay"])
    p.add_argument("dir")
    p.add_argument("--ops", default="")
    p.add_argument("--samples", type=int, default=2)
    p.add_argument("--json", default="")
    p.add_argument("--list", default="")
    p.add_argument("--timeout", type=int, default=60)
    a = p.parse_args(argv)
    ops = set(filter(None, a.ops.split(",")))
    if a.mode == "record":
        record(a.dir, ops, a.samples)
    else:
        replay(a.dir, a.json, a.list, a.timeout)


if __name__ == "__main__":
    main(sys.argv[1:])
