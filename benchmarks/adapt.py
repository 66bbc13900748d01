"""Test-time adaptation (torchnative.adapt), torchnative against upstream torch 2.13.0 in one run
(a benchmark, never a test; figures in docs/adapt.md):

1. a batch-norm CNN trained on scikit-learn's digits, served under synthetic shifts (contrast,
   Gaussian noise, blur, rotation; severities 1-5): top-1 error of the source model, BNAdapt,
   Tent, EATA and SAR per shift, on each runtime. Each (shift, severity) stream is the 719
   held-out images once, in batches of 64, from the source weights (the references' protocol:
   reset per corruption and severity). Table 1 uses the references' defaults; table 2 a 10x
   learning rate, EATA's d_margin 0.4 and three passes over the stream, at severities 3 and 5;
2. a tiny character-level Llama (transformers, seeded config) trained on English text (the
   pydoc topics that ship with Python), served shifted text (typos, upper case): its
   next-character entropy with and without LMEntropy, and a learning rate at which entropy
   minimisation collapses the predictions, with the guard off and on;
3. the time of one adapting call per method, both interpreters alternating, one intra-op
   thread each (benchmarks/sidebyside.py), median of --reps runs, ratio ours/upstream.

The source models are trained once, by upstream, and loaded by both sides (safetensors), so the
two columns differ only by the adaptation's arithmetic.

    .venv/bin/python benchmarks/adapt.py [--json docs/bench/adapt.json] [--reps 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sidebyside as SB  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
METHODS = ("source", "BNAdapt", "Tent", "EATA", "SAR")
LLAMA = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=128)
CHARS = "\n" + "".join(chr(c) for c in range(32, 127))


# ------------------------------------------------------------------------------ the worker side

def _worker(mode: str, work: Path, quick: bool):
    sys.path.insert(0, str(REPO))
    import torch
    torch.set_num_threads(1)
    out = {"torch": torch.__version__}
    if mode == "train":
        _train_sources(work)
    elif mode == "cnn":
        out["errors"] = _cnn_errors(work, quick)
    elif mode == "lm":
        out["lm"] = _lm_runs(work, quick)
    elif mode == "time":
        out["ms"] = _step_times(work)
    print(json.dumps(out))


def _corpus():
    import pydoc_data.topics as t
    text = "\n".join(t.topics[k] for k in sorted(t.topics))
    return "".join(c if c in CHARS else "?" for c in text)


def _encode(text):
    import torch
    index = {c: i for i, c in enumerate(CHARS)}
    return torch.tensor([index[c] for c in text], dtype=torch.long)


def _llama():
    import transformers
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(vocab_size=len(CHARS), **LLAMA))


def _train_sources(work: Path):
    import torch
    from safetensors.torch import save_file

    from torchnative.adapt import testbed as tb
    xtr, ytr, _, _ = tb.load_split()
    save_file(tb.train(xtr, ytr).state_dict(), str(work / "cnn.safetensors"))
    text = _corpus()
    ids = _encode(text[: int(0.9 * len(text))])
    torch.manual_seed(0)
    lm = _llama()
    opt = torch.optim.AdamW(lm.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(400):
        starts = torch.randint(0, len(ids) - 65, (32,), generator=g)
        batch = torch.stack([ids[s:s + 64] for s in starts.tolist()])
        loss = lm(input_ids=batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    save_file({k: v.contiguous() for k, v in lm.state_dict().items()}, str(work / "llama.safetensors"))


def _cnn(work):
    from safetensors.torch import load_file

    from torchnative.adapt import testbed as tb
    m = tb.cnn()
    m.load_state_dict(load_file(str(work / "cnn.safetensors")))
    return m.eval()


def _method(name, tuned, fisher_data):
    from torchnative import adapt
    k = 10.0 if tuned else 1.0
    if name == "BNAdapt":
        return adapt.BNAdapt()
    if name == "Tent":
        return adapt.Tent(lr=1e-3 * k)
    if name == "EATA":
        return adapt.EATA(lr=2.5e-4 * k, fisher_data=fisher_data, **({"d_margin": 0.4} if tuned else {}))
    return adapt.SAR(lr=2.5e-4 * k)


def _cnn_errors(work, quick):
    import torch

    from torchnative import adapt
    from torchnative.adapt import testbed as tb
    model = _cnn(work)
    xtr, _, xte, yte = tb.load_split()
    fisher_data = list(tb.stream(xtr[:512], 64))
    settings = [("defaults", False, 1, (1, 2, 3, 4, 5) if not quick else (3, 5))]
    settings.append(("tuned", True, 3, (3, 5) if not quick else (5,)))
    result = {"clean": {}}
    with torch.no_grad():
        result["clean"]["source"] = tb.error(model(torch.from_numpy(xte)), yte)
    for label, tuned, passes, severities in settings:
        table = {}
        for kind in tb.SHIFTS:
            for sev in severities:
                xs = tb.shift(xte, kind, sev)
                row = {}
                for name in METHODS:
                    if name == "source":
                        with torch.no_grad():
                            row[name] = tb.error(model(torch.from_numpy(xs)), yte)
                        continue
                    a = adapt.wrap(model, method=_method(name, tuned, fisher_data))
                    for _ in range(passes):
                        preds = torch.cat([a(x) for x in tb.stream(xs, 64)])
                    row[name] = tb.error(preds, yte)
                table[f"{kind}/{sev}"] = row
        result[label] = table
    return result


def _text_shift(text, kind, seed=0):
    import random
    if kind == "clean":
        return text
    if kind == "upper":
        return text.upper()
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return "".join(rng.choice(letters) if c in letters and rng.random() < 0.15 else c for c in text)


def _lm_runs(work, quick):
    import torch
    import torch.nn.functional as F
    from safetensors.torch import load_file

    from torchnative import adapt
    lm = _llama()
    lm.load_state_dict(load_file(str(work / "llama.safetensors")))
    lm.eval()
    text = _corpus()
    held = text[int(0.9 * len(text)):]
    n_batches = 10 if quick else 25
    out = {}

    def stream(kind):
        ids = _encode(_text_shift(held, kind))
        for b in range(n_batches):
            yield ids[b * 8 * 65:(b + 1) * 8 * 65].reshape(8, 65)

    def serve(model_call, kind):
        ent, nll, marginal = [], [], []
        for batch in stream(kind):
            x, y = batch[:, :-1], batch[:, 1:]
            logits = model_call(x).logits.detach()
            flat = logits.reshape(-1, logits.shape[-1])
            ent.append(float(adapt.softmax_entropy(flat).mean()))
            nll.append(float(F.cross_entropy(flat, y.reshape(-1))))
            p = flat.softmax(1).mean(0)
            marginal.append(float(-(p * p.clamp_min(1e-30).log()).sum()))
        return {"entropy": ent, "nll": nll, "marginal": marginal}

    for kind in ("clean", "typos", "upper"):
        with torch.no_grad():
            row = {"source": serve(lambda x: lm(input_ids=x), kind)}
        cases = [("LMEntropy", adapt.LMEntropy())]
        if kind == "upper":
            cases += [("LMEntropy lr 0.05, guard off", adapt.LMEntropy(lr=0.05, guard=False)),
                      ("LMEntropy lr 0.05, guard on", adapt.LMEntropy(lr=0.05))]
        for label, method in cases:
            a = adapt.wrap(lm, method=method)
            row[label] = {**serve(lambda x: a(input_ids=x), kind), "recoveries": a.stats()["recoveries"]}
        out[kind] = row
    return out


def _step_times(work):
    import torch
    import torch.nn.functional as F  # noqa: F401 -- imported as the adapting code does

    from torchnative import adapt
    from torchnative.adapt import testbed as tb
    from safetensors.torch import load_file
    model = _cnn(work)
    xtr, _, xte, _ = tb.load_split()
    x = torch.from_numpy(tb.shift(xte, "blur", 3)[:64])
    fisher_data = list(tb.stream(xtr[:128], 64))
    lm = _llama()
    lm.load_state_dict(load_file(str(work / "llama.safetensors")))
    ids = _encode(_corpus()[:8 * 64]).reshape(8, 64)
    cases = {"BNAdapt": (model, adapt.BNAdapt(), x), "Tent": (model, adapt.Tent(), x),
             "EATA": (model, adapt.EATA(d_margin=0.4, fisher_data=fisher_data), x), "SAR": (model, adapt.SAR(), x),
             "LMEntropy": (lm.eval(), adapt.LMEntropy(), ids)}
    out = {}
    for name, (m, method, inp) in cases.items():
        a = adapt.wrap(m, method=method)
        call = (lambda: a(input_ids=inp)) if name == "LMEntropy" else (lambda: a(inp))
        for _ in range(3):
            call()
        n = 20
        t = time.perf_counter()
        for _ in range(n):
            call()
        out[name] = (time.perf_counter() - t) / n * 1e3
    with torch.no_grad():
        t = time.perf_counter()
        for _ in range(20):
            model(x)
        out["CNN forward (no adaptation)"] = (time.perf_counter() - t) / 20 * 1e3
    return out


# ------------------------------------------------------------------------------ the driver side

def _run(python, mode, work, ours, quick=False, threads="1"):
    cmd = [python, str(Path(__file__).resolve()), "--worker", mode, str(work)] + (["--quick"] if quick else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=SB.thread_env(threads, ours), timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{python} {mode} failed ({r.returncode}):\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _pct(v):
    return f"{100 * v:5.1f}"


def _error_table(ours, ref, label):
    rows = sorted(ref[label])
    lines = [f"| shift/severity | {' | '.join(f'{m} ours / upstream' for m in METHODS)} |",
             "|---|" + "---|" * len(METHODS)]
    means = {m: [0.0, 0.0] for m in METHODS}
    for key in rows:
        cells = []
        for m in METHODS:
            o, r = ours[label][key][m], ref[label][key][m]
            means[m][0] += o / len(rows)
            means[m][1] += r / len(rows)
            cells.append(f"{_pct(o)} / {_pct(r)}")
        lines.append(f"| {key} | {' | '.join(cells)} |")
    lines.append(f"| **mean** | {' | '.join(f'**{_pct(o)} / {_pct(r)}**' for o, r in means.values())} |")
    return "\n".join(lines)


def _mean(xs):
    return sum(xs) / len(xs)


def _lm_table(ours, ref):
    lines = ["| text | run | entropy (mean over stream) ours / upstream | last batch | next-char NLL | recoveries |",
             "|---|---|---|---|---|---|"]
    for kind, row in ref.items():
        for label, r in row.items():
            o = ours[kind][label]
            rec = f"{o.get('recoveries', '-')} / {r.get('recoveries', '-')}"
            lines.append(f"| {kind} | {label} | {_mean(o['entropy']):.3f} / {_mean(r['entropy']):.3f} | "
                         f"{o['entropy'][-1]:.3f} / {r['entropy'][-1]:.3f} | "
                         f"{_mean(o['nll']):.3f} / {_mean(r['nll']):.3f} | {rec} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=2, metavar=("MODE", "WORKDIR"))
    ap.add_argument("--quick", action="store_true", help="fewer severities and LM batches")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker[0], Path(args.worker[1]), args.quick)
        return
    ours_py, ref_py = SB.ours_python(), SB.ref_python()
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        _run(ref_py, "train", work, ours=False, threads=None)
        cnn = {"ours": _run(ours_py, "cnn", work, True, args.quick), "upstream": _run(ref_py, "cnn", work, False, args.quick)}
        lm = {"ours": _run(ours_py, "lm", work, True, args.quick), "upstream": _run(ref_py, "lm", work, False, args.quick)}
        times = {"ours": [], "upstream": []}
        for _ in range(args.reps):
            times["ours"].append(_run(ours_py, "time", work, True)["ms"])
            times["upstream"].append(_run(ref_py, "time", work, False)["ms"])
    o, r = cnn["ours"]["errors"], cnn["upstream"]["errors"]
    print(f"clean test error: source {_pct(o['clean']['source'])} / {_pct(r['clean']['source'])} (ours / upstream)\n")
    print("Table 1: error %, the references' defaults, one pass\n" + _error_table(o, r, "defaults") + "\n")
    print("Table 2: error %, 10x lr, EATA d_margin 0.4, three passes\n" + _error_table(o, r, "tuned") + "\n")
    print("Table 3: tiny Llama, next-character entropy (nats)\n" + _lm_table(lm["ours"]["lm"], lm["upstream"]["lm"]) + "\n")
    step = {}
    for name in times["ours"][0]:
        mo = SB.median([t[name] for t in times["ours"]])
        mr = SB.median([t[name] for t in times["upstream"]])
        step[name] = {"ours_ms": round(mo, 3), "upstream_ms": round(mr, 3), "ratio": round(mo / mr, 2)}
    print("Table 4: one adapting call (batch 64 digits; LM 8 x 64 characters), median of "
          f"{args.reps}, one thread\n| method | ours ms | upstream ms | ratio |\n|---|---|---|---|")
    for name, s in step.items():
        print(f"| {name} | {s['ours_ms']:.2f} | {s['upstream_ms']:.2f} | {s['ratio']:.2f} |")
    print(f"\n({time.time() - started:.0f} s, {cnn['ours']['torch']} vs {cnn['upstream']['torch']})")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"cnn": cnn, "lm": lm, "step_ms": step, "reps": args.reps,
                                               "quick": args.quick, "seconds": round(time.time() - started)},
                                              indent=1))


if __name__ == "__main__":
    main()
