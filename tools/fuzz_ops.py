"""Differential fuzzer for the single door: random and hostile calls of ATen operators, run on
torchnative and on upstream torch 2.13.0 (the oracle), outcomes compared.

Operators and their argument types come from upstream's schema table (the generated
core/python/torchnative_core/generated/ops.json, parsed with torchgen). A case is plain JSON
(operator overload, encoded arguments), generated from a seed, so any case replays exactly.
Each side runs in its own worker process (`fuzz_ops.py worker`) under an address-space limit,
fed one case at a time with a timeout: a worker that dies is a crash, one that does not answer
is a hang; both are restarted. Outcomes: the exception's type name, or success with the
result's shape, dtype and values.

    python3 tools/fuzz_ops.py run --calls 100000 --seed 1      # campaign; summary as JSON
    python3 tools/fuzz_ops.py run --calls 300 --corpus tests/data/fuzz_corpus.jsonl
    python3 tools/fuzz_ops.py replay tests/data/fuzz_corpus.jsonl
    python3 tools/fuzz_ops.py probe-out --only linalg          # out= of another dtype, both sides

Every case whose outcomes differ is appended to the corpus (at most a few per operator and
outcome pair), with upstream's outcome, so tests/test_fuzz_ops.py replays it without the oracle.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import random
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPS_JSON = ROOT / "core/python/torchnative_core/generated/ops.json"
OURS = ROOT / ".venv/bin/python"

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]  # `run --complex` adds complex64 and complex128
COMPLEX_DTYPES = ["complex64", "complex128"]
HOSTILE_INTS = [-1, -2, 0, 1, 2, 3, 7, 2**31, 2**31 - 1, 2**62, 2**63 - 1, -2**63, -(2**31)]
HOSTILE_FLOATS = [0.0, -0.0, 1.0, -1.5, 0.5, 1e308, -1e308, 1e-310, math.inf, -math.inf, math.nan]
# Names with random results still compare: both sides seed torch's generator (bit-identical).
SKIP_SUBSTR = ("cuda", "cudnn", "miopen", "mkldnn", "mps", "xpu", "vulkan", "fbgemm", "quantize",
               "sparse", "nested", "backward", "_jvp", "qint", "to_padded", "coalesce", "indices",
               "values", "crow", "ccol", "row_indices", "col_indices", "q_", "fake_quant", "lstm",
               "gru", "rnn", "_foreach", "segment_reduce", "nnpack", "xnnpack", "copy_sparse",
               "_fused", "cufft", "pin_memory", "is_pinned", "record_stream", "_local_scalar",
               "item", "set_", "storage", "share_memory", "align", "refine_names", "rename")
# Operators whose results are (or may end in) uninitialized memory: compared by shape and dtype
# only (a resize that grows a tensor leaves its new elements uninitialized).
UNINITIALIZED = ("empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
                 "resize", "resize_", "resize_as", "resize_as_")
SUPPORTED = {"Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int", "int?", "int[]", "int[]?",
             "SymInt", "SymInt?", "SymInt[]", "SymInt[]?", "int[1]", "int[2]", "int[3]",
             "SymInt[1]", "SymInt[2]", "SymInt[3]", "int[1]?", "float", "float?", "float[]?",
             "float[]", "bool", "bool?", "bool[]", "bool[3]", "bool[2]", "Scalar", "Scalar?",
             "ScalarType", "ScalarType?", "Layout?", "Device?", "bool?", "MemoryFormat?",
             "Generator?", "str", "str?", "Dimname", "int[1]?", "SymInt[1]?", "Scalar[]",
             "float[3]", "float[2]"}


# --- the schema table -------------------------------------------------------------------------

def load_schemas():
    sys.path.insert(0, str(next((ROOT / ".venv/lib").glob("python3*/site-packages"))))
    from torchgen.model import FunctionSchema

    ops = []
    for entry in json.loads(OPS_JSON.read_text())["schemas"]:
        s = FunctionSchema.parse(entry["schema"])
        name = str(s.name.name)
        full = f"{name}.{s.name.overload_name or 'default'}"
        if name.startswith("_") or any(k in full for k in SKIP_SUBSTR):
            continue
        args = s.arguments.flat_all
        if any(str(a.type) not in SUPPORTED for a in args) or any(str(a.type) == "Dimname" for a in args):
            continue
        ops.append({
            "op": full,
            "args": [{"name": a.name, "type": str(a.type), "default": a.default,
                      "kw": a not in s.arguments.flat_positional,
                      "write": bool(a.annotation and a.annotation.is_write)} for a in args],
        })
    return ops


# --- case generation ----------------------------------------------------------------------------

def gen_shape(r):
    k = r.random()
    if k < 0.08:
        return [0] + [r.randint(1, 3) for _ in range(r.randint(0, 2))]
    if k < 0.18:
        return []
    return [r.randint(1, 4) for _ in range(r.randint(1, 3))]


def gen_tensor(r, like=None):
    shape = list(like["shape"]) if like is not None and r.random() < 0.7 else gen_shape(r)
    dtype = like["dtype"] if like is not None and r.random() < 0.6 else r.choice(
        DTYPES[:2] * 4 + DTYPES)
    t = {"shape": shape, "dtype": dtype, "seed": r.randrange(2**31)}
    k = r.random()
    if k < 0.12:
        t["fill"] = r.choice([math.nan, math.inf, -math.inf, 0.0, 1e30])
    if r.random() < 0.12 and len(shape) >= 2:
        t["layout"] = "transposed"
    elif r.random() < 0.08 and shape:
        t["layout"] = "expanded"
    elif r.random() < 0.06 and shape:
        t["layout"] = "strided"
    if r.random() < 0.02:
        t["device"] = "meta"
    return {"T": t}


def gen_int(r, ndim):
    k = r.random()
    if k < 0.55:
        return r.randint(-ndim - 1, max(ndim, 1)) if ndim else r.randint(-1, 2)
    if k < 0.85:
        return r.randint(0, 5)
    return r.choice(HOSTILE_INTS)


def gen_value(r, typ, ndim, first):
    base = typ.rstrip("?")
    if typ.endswith("?") and r.random() < 0.3:
        return None
    if base == "Tensor":
        return gen_tensor(r, first)
    if base in ("Tensor[]", "Tensor?[]"):
        return [gen_tensor(r, first) for _ in range(r.randint(0, 3))]
    if base in ("int", "SymInt"):
        return gen_int(r, ndim)
    if base.startswith(("int[", "SymInt[")):
        n = r.randint(0, 3) if base.endswith("[]") else int(base.split("[")[1][:-1])
        if r.random() < 0.1:
            n = r.randint(0, 5)
        return [gen_int(r, ndim) for _ in range(n)]
    if base == "float":
        return r.choice(HOSTILE_FLOATS) if r.random() < 0.3 else round(r.uniform(-3, 3), 3)
    if base.startswith("float["):
        return [round(r.uniform(-2, 2), 3) for _ in range(r.randint(0, 3))]
    if base == "bool":
        return r.random() < 0.5
    if base.startswith("bool["):
        return [r.random() < 0.5 for _ in range(int(base[5:-1] or 3))]
    if base == "Scalar":
        k = r.random()
        if k < 0.4:
            return r.randint(-3, 3)
        if k < 0.8:
            return r.choice(HOSTILE_FLOATS) if r.random() < 0.3 else round(r.uniform(-3, 3), 3)
        return r.random() < 0.5 if k < 0.9 else r.choice(HOSTILE_INTS)
    if base == "Scalar[]":
        return [r.randint(-3, 3) for _ in range(r.randint(0, 3))]
    if base == "ScalarType":
        return {"D": r.choice(DTYPES)}
    if base == "Device":
        return {"dev": r.choice(["cpu", "cpu", "meta"])}
    if base == "str":
        return r.choice(["mean", "sum", "none", "tanh", "floor", "trunc", "reflect", "bogus", ""])
    return None  # Layout, MemoryFormat, Generator: their defaults


def gen_case(r, schema):
    args, kwargs = [], {}
    first = None
    ndim = 1
    for a in schema["args"]:
        if a["default"] is not None and r.random() < 0.35:
            continue  # the schema's default
        if a["write"] and a["kw"] and r.random() < 0.5:
            continue  # out= omitted: the functional path of an out overload is not callable; refused
        if a["write"] and first is not None and r.random() < 0.2:
            v = {"alias": 0}  # an out= that aliases the first input
        else:
            v = gen_value(r, a["type"], ndim, first)
        if first is None and isinstance(v, dict) and "T" in v:
            first = v["T"]
            ndim = len(first["shape"])
        if a["kw"]:
            kwargs[a["name"]] = v
        else:
            args.append(v)
    return {"op": schema["op"], "args": args, "kwargs": kwargs}


# --- the worker (runs inside each torch) --------------------------------------------------------

def worker():
    import resource
    import warnings

    warnings.simplefilter("ignore")
    limit = int(os.environ.get("FUZZ_AS_LIMIT", str(8 << 30)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import torch

    torch.set_num_threads(1)

    def tensor(t):
        g = random.Random(t["seed"])
        shape = t["shape"]
        layout = t.get("layout")
        build = list(shape)
        if layout == "transposed":
            build[-1], build[-2] = build[-2], build[-1]
        elif layout == "strided":
            build[-1] = build[-1] * 2
        elif layout == "expanded":
            build[0] = 1
        n = math.prod(build)
        dt = getattr(torch, t["dtype"])
        if dt.is_complex and "fill" not in t:
            # real and imaginary parts drawn alike
            parts = torch.tensor([round(g.uniform(-3, 3), 2) for _ in range(2 * n)], dtype=torch.float64)
            x = torch.view_as_complex(parts.reshape(build + [2])).to(dt)
            return _layout(x, t)
        if "fill" in t:
            vals = [t["fill"]] * n
        elif dt.is_floating_point:
            vals = [round(g.uniform(-3, 3), 2) for _ in range(n)]
        elif dt == torch.bool:
            vals = [g.random() < 0.5 for _ in range(n)]
        else:
            vals = [g.randint(0 if dt == torch.uint8 else -5, 5) for _ in range(n)]
        x = torch.tensor(vals, dtype=torch.float64 if not isinstance(vals[0] if vals else 0.0, bool) else torch.bool)
        with warnings.catch_warnings():
            x = x.to(dt).reshape(build)
        return _layout(x, t)

    def _layout(x, t):
        layout, shape = t.get("layout"), t["shape"]
        if layout == "transposed":
            x = x.transpose(-1, -2)
        elif layout == "strided":
            x = x[..., ::2]
        elif layout == "expanded":
            x = x.expand(shape)
        if t.get("device") == "meta":
            x = x.to("meta")
        return x

    def decode(v, made):
        if isinstance(v, list):
            return [decode(x, made) for x in v]
        if isinstance(v, dict):
            if "T" in v:
                x = tensor(v["T"])
                made.append(x)
                return x
            if "D" in v:
                return getattr(torch, v["D"])
            if "dev" in v:
                return torch.device(v["dev"])
            if "alias" in v:
                return made[v["alias"]] if made else None
        return v

    def num(v):
        return v if math.isfinite(v) else str(v)  # JSON has no nan/inf

    def encode(out, values=True):
        if isinstance(out, torch.Tensor):
            d = {"shape": list(out.shape), "dtype": str(out.dtype).removeprefix("torch.")}
            if values and out.device.type != "meta" and out.numel() <= 4096 and out.layout == torch.strided:
                x = out.detach()
                if x.is_complex():
                    x = torch.view_as_real(x.resolve_conj())
                d["values"] = [num(v) for v in x.to(torch.float64).flatten().tolist()]
            return d
        if isinstance(out, (tuple, list)):
            return [encode(o, values) for o in out]
        if isinstance(out, float):
            return num(out)
        if isinstance(out, (int, float, bool, str)) or out is None:
            return out
        return type(out).__name__

    # The protocol gets its own descriptor; fd 1 goes to stderr, so whatever an operator prints,
    # from Python or from native code, stays off it.
    out_stream = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    out_stream.write("ready\n")
    out_stream.flush()
    for line in sys.stdin:
        case = json.loads(line)
        torch.manual_seed(0)
        made = []
        try:
            args = [decode(a, made) for a in case["args"]]
            kwargs = {k: decode(v, made) for k, v in case["kwargs"].items()}
            name, overload = case["op"].rsplit(".", 1)
            fn = getattr(getattr(torch.ops.aten, name), overload)
        except Exception as e:  # noqa: BLE001 - a case the generator could not build
            res = {"setup": type(e).__name__}
        else:
            try:
                res = {"ok": encode(fn(*args, **kwargs), values=name not in UNINITIALIZED)}
            except Exception as e:  # noqa: BLE001 - the outcome is the exception's type
                res = {"exc": type(e).__name__, "msg": str(e)[:200]}
        try:
            text = json.dumps(res, allow_nan=False)
        except (ValueError, TypeError):
            text = json.dumps({"ok": "unencodable"})
        out_stream.write(text + "\n")
        out_stream.flush()


# --- the driver ---------------------------------------------------------------------------------

class Side:
    """One worker process; `call` returns an outcome dict, {"crash": rc} or {"hang": seconds}."""

    def __init__(self, python, timeout):
        self.python, self.timeout, self.proc = str(python), timeout, None

    def start(self):
        env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen([self.python, str(Path(__file__).resolve()), "worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env, cwd="/tmp")
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not self.sel.select(300) or self.proc.stdout.readline() != "ready\n":
            raise RuntimeError(f"{self.python}: the fuzz worker did not start")

    def call(self, case):
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(json.dumps(case) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        if self.sel.select(self.timeout):
            line = self.proc.stdout.readline()
            if line:
                return json.loads(line)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return {"hang": self.timeout}
        rc = self.proc.wait()
        self.proc = None
        return {"crash": rc}

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def close_values(a, b, dtype):
    tol = {"float16": 2e-2, "bfloat16": 5e-2, "float32": 2e-4, "complex64": 2e-4}.get(dtype, 1e-7)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        if isinstance(x, str) or isinstance(y, str):
            return False
        if abs(x - y) > tol * (1 + abs(y)):
            return False
    return True


def same_result(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_result(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        if a["shape"] != b["shape"] or a["dtype"] != b["dtype"]:
            return False
        if "values" in a and "values" in b:
            return close_values(a["values"], b["values"], b["dtype"])
        return ("values" in a) == ("values" in b)
    if isinstance(a, float) and isinstance(b, float) and not isinstance(a, bool):
        return close_values([a], [b], "float32")
    return a == b


def kind(res):
    """The outcome's class, as compared: 'ok', 'exc:<Type>', 'crash', 'hang' or 'setup'."""
    for k in ("crash", "hang", "setup"):
        if k in res:
            return k
    return "ok" if "ok" in res else "exc:" + res["exc"]


def agree(ours, ref):
    if kind(ours) != kind(ref):
        return False
    return kind(ours) != "ok" or same_result(ours["ok"], ref["ok"])


def load_corpus(path):
    if not path or not Path(path).exists():
        return []
    return [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]


def run(args):
    if args.complex:
        DTYPES.extend(COMPLEX_DTYPES)  # the generator's dtype choices (cases stay replayable: JSON)
    schemas = load_schemas()
    r = random.Random(args.seed)
    ours = Side(OURS, args.timeout)
    ref = Side(Path(ROOT / "build/ref-python").read_text().strip(), args.timeout)
    corpus = load_corpus(args.corpus)
    kept = collections.Counter((c["case"]["op"], c["ours_then"], c["upstream"]["kind"]) for c in corpus)
    counts = collections.Counter()
    pairs = collections.Counter()
    new = []
    t0 = time.time()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a stopped campaign still reports
    try:
        for i in range(args.calls):
            case = gen_case(r, r.choice(schemas))
            a = ref.call(case)
            if kind(a) == "setup":
                counts["setup"] += 1
                continue
            b = ours.call(case)
            counts["calls"] += 1
            kb = kind(b)
            if kb in ("crash", "hang"):
                counts[kb] += 1
            if agree(b, a):
                counts["agree"] += 1
                continue
            pairs[(kb, kind(a))] += 1
            if kb == "exc:NotImplementedError" and "has no kernel" in b.get("msg", ""):
                counts["no_kernel"] += 1  # a refusal by name: an operator still to build
            key = (case["op"], kb, kind(a))
            if kept[key] < args.per_class:
                kept[key] += 1
                new.append({"case": case, "upstream": {"kind": kind(a), **a},
                            "ours_then": kb, "ours_msg": b.get("msg", "")})
            if args.verbose:
                print(json.dumps({"case": case, "ours": b, "upstream": a}), flush=True)
            if args.progress and i % args.progress == 0:
                print(f"{i} calls, {time.time() - t0:.0f} s, {dict(counts)}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        ours.close()
        ref.close()
        if args.corpus and new:
            with open(args.corpus, "a") as f:
                for c in new:
                    f.write(json.dumps(c, sort_keys=True) + "\n")
    n = counts["calls"]
    summary = {"seed": args.seed, "calls": n, "crashes": counts["crash"], "hangs": counts["hang"],
               "agree": counts["agree"], "agreement": round(100 * counts["agree"] / max(n, 1), 3),
               "refused_by_name": counts["no_kernel"],
               "agreement_where_ours_has_a_kernel": round(
                   100 * counts["agree"] / max(n - counts["no_kernel"], 1), 3),
               "unbuildable_cases": counts["setup"], "seconds": round(time.time() - t0),
               "new_corpus_cases": len(new),
               "mismatches": {f"{o} vs upstream {u}": c for (o, u), c in pairs.most_common(25)}}
    print(json.dumps(summary, indent=1))
    return 1 if counts["crash"] or counts["hang"] else 0


def replay(path, timeout=20):
    """Ours on every corpus case: counts of crash/hang, agreement with the recorded upstream."""
    ours = Side(OURS, timeout)
    res = collections.Counter()
    differing = []
    try:
        for c in load_corpus(path):
            b = ours.call(c["case"])
            up = c["upstream"]
            res[kind(b) if kind(b) in ("crash", "hang") else "ran"] += 1
            if agree(b, up):
                res["agree"] += 1
            else:
                differing.append((c["case"]["op"], kind(b), up["kind"]))
    finally:
        ours.close()
    return res, differing


# Another dtype of the same kind, for an out= of the wrong dtype.
_OTHER_DTYPE = {"float32": "float64", "float64": "float32", "float16": "float32", "bfloat16": "float32",
                "int64": "int32", "int32": "int64", "int16": "int64", "int8": "int64", "uint8": "int64", "bool": "uint8",
                "complex64": "complex128", "complex128": "complex64"}


def probe_out(args):
    """Each out= overload (whose name contains `args.only`, if given) with an out of another dtype:
    a generated case that upstream runs with out's dtype equal to its result's, then each out
    given another dtype, on both sides. Prints the overloads where the outcomes differ (how
    out_variants.py's `_EXACT_OUT` was found)."""
    schemas = [s for s in load_schemas() if any(a["write"] and a["kw"] for a in s["args"])
               and (not args.only or args.only in s["op"])]
    r = random.Random(args.seed)
    ours = Side(OURS, args.timeout)
    ref = Side(Path(ROOT / "build/ref-python").read_text().strip(), args.timeout)
    differ = probed = 0
    try:
        for sch in schemas:
            outs = [a["name"] for a in sch["args"] if a["write"] and a["kw"]]
            for _ in range(args.tries):
                c = gen_case(r, sch)
                vals = [c["kwargs"].get(n) for n in outs]
                if not all(isinstance(v, dict) and "T" in v and not set(v["T"]) & {"fill", "device", "layout"}
                           for v in vals):
                    continue
                res = ref.call(c)
                if "ok" not in res:
                    continue
                got = res["ok"] if isinstance(res["ok"], list) else [res["ok"]]
                for v, o in zip(vals, got):
                    if isinstance(o, dict):
                        v["T"]["dtype"] = o["dtype"]
                if "ok" in ref.call(c):
                    break
            else:
                continue
            probed += 1
            for v in vals:
                was = v["T"]["dtype"]
                v["T"]["dtype"] = _OTHER_DTYPE[was]
                a, b = ref.call(c), ours.call(c)
                if kind(a) != kind(b):
                    differ += 1
                    print(f"{sch['op']}: out {was} -> {v['T']['dtype']}: upstream {kind(a)}, ours {kind(b)}")
                v["T"]["dtype"] = was
    finally:
        ours.close()
        ref.close()
    print(f"{len(schemas)} out= overloads, {probed} with a case upstream runs, {differ} outcomes differ")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("worker")
    pr = sub.add_parser("run")
    pr.add_argument("--calls", type=int, default=1000)
    pr.add_argument("--seed", type=int, default=0)
    pr.add_argument("--timeout", type=float, default=20.0, help="seconds before a call is a hang")
    pr.add_argument("--corpus", default=None, help="append differing cases to this JSONL file")
    pr.add_argument("--per-class", type=int, default=2,
                    help="corpus cases kept per (operator, our outcome, upstream's outcome)")
    pr.add_argument("--progress", type=int, default=0)
    pr.add_argument("--complex", action="store_true", help="generate complex64/complex128 tensors and dtypes too")
    pr.add_argument("-v", "--verbose", action="store_true")
    pp = sub.add_parser("replay")
    pp.add_argument("corpus")
    po = sub.add_parser("probe-out", help="out= overloads given an out of another dtype, both sides")
    po.add_argument("--only", default="", help="overloads whose name contains this")
    po.add_argument("--seed", type=int, default=5)
    po.add_argument("--tries", type=int, default=300, help="generated cases per overload to find one upstream runs")
    po.add_argument("--timeout", type=float, default=20.0)
    a = p.parse_args()
    if a.cmd == "worker":
        return worker()
    if a.cmd == "run":
        return run(a)
    if a.cmd == "probe-out":
        return probe_out(a)
    res, differing = replay(a.corpus)
    print(json.dumps({"counts": dict(res), "differing": collections.Counter(
        f"{o}: ours {k} vs upstream {u}" for o, k, u in differing).most_common(40)}, indent=1))
    return 1 if res["crash"] or res["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
